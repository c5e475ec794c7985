"""Second readings with a longer step budget (rgr.results.replication.second_readings; issue 45)."""

from html import unescape

import pandas as pd

from rgr.chapters.verdict_table import verdict_table_html
from rgr.experiments.settled import UNITS, planned_runs
from rgr.results.replication.rows import ClaimRow, Longer, Source
from rgr.results.replication.second_readings import longer_rows, with_longer
from rgr.results.replication.verdicts import Verdict, cause_of
from rgr.results.settled import SETTLED
from tests.results.replication.synthetic import base_runs


def test_the_longer_budget_replaces_the_extensions_cells_and_keeps_the_others():
    base = base_runs({(128, 64): 8, (256, 64): 16, (512, 64): 32}).assign(stop_reason="converged")  # h* = 2
    unit = [u for u in UNITS if (u.m, u.d_model) == (256, 64)]  # the extension's cell: at 4x one head passes at 16
    settled = pd.DataFrame([dict(m=c.m, d_model=c.d_model, r=1, h=c.h, D_K=c.D_K, seed=c.seed, max_steps=c.max_steps,
                                 test_f1=1.0 if c.h == 1 else 0.3, stop_reason="converged")
                            for c in planned_runs(unit, budgets=(4,))])
    got = longer_rows(Source("base", "book", base), Source("lambda8", "book", base.iloc[:0]),
                      Source(SETTLED, "paper", settled), [])
    # d_k* = D_K* / h*: 4, 8, 16 at 1x; at 4x the extension's cell reads 16 / 1, the others as they were
    floor = " (built on D_K* at the design's lowest point, an upper bound, at the cell retrained)"
    assert (got["dk_median"].budget, got["dk_median"].book) == (4, "16 (n = 3)" + floor)
    assert got["dk_range"].book == "[4, 16]" + floor
    # 16 is the cell's lowest design D_K: floor-censored, so not settled though no run was cut
    assert not got["dk_median"].settled and got["dk_median"].cut == "(256, 64) 0 of 10"
    assert "(256, 64) 16 → 16 (at the design's lowest point: an upper bound)" in got["dk_median"].moved


def _row(status="deviates", cause="", detail="book 1 vs law 1.3. A likely reason, not measured here: the cutoff"):
    return ClaimRow("diag_growth", "1.00", "[1, 1.08]", "b", Verdict(status, detail, cause=cause), value=1.0)


def _longer(status: str, reason: str = "") -> Longer:
    return Longer(budget=4, book="0.83", interval="[0.8, 0.9]", status=status, said="x", settled=False,
                  cut="(512, 64) 0 of 10", moved="(512, 64) 52 → 48", reason=reason)


def test_a_deviation_that_agrees_with_a_longer_budget_is_budget_bound():
    (r,) = with_longer([_row()], {"diag_growth": _longer("agrees")})
    assert cause_of(r) == "budget_bound" and r.longer.status == "agrees"
    (r,) = with_longer([_row()], {"diag_growth": _longer("deviates")})
    assert cause_of(r) == "unexplained" and r.longer is not None  # still deviating: no budget cause
    (r,) = with_longer([_row(cause="thin")], {"diag_growth": _longer("agrees")})
    assert cause_of(r) == "thin"  # what the reader found comes first
    (r,) = with_longer([_row(status="agrees", detail="inside")], {"diag_growth": _longer("deviates")})
    assert r.verdict.status == "agrees" and cause_of(r) == ""  # the protocol decides; the reading rides along
    assert with_longer([_row()], {}) == [_row()]


def test_the_likely_reason_gives_way_to_the_measured_one():
    (r,) = with_longer([_row()], {"diag_growth": _longer("deviates", reason="Measured with a longer budget: ...")})
    assert r.verdict.detail == "book 1 vs law 1.3. Measured with a longer budget: ..."
    (r,) = with_longer([_row(detail="book 1; a likely reason, not measured here: x")],
                       {"diag_growth": _longer("deviates", reason="Measured.")})
    assert r.verdict.detail == "book 1. Measured."
    (r,) = with_longer([_row()], {"diag_growth": _longer("deviates")})
    html = unescape(verdict_table_html([r], "c"))
    words = html.split("<dt>With a longer budget (the settled extension, not the protocol)</dt><dd>")[1]
    words = words.split("</dd>")[0]
    assert words.startswith("with 4x the protocol's step cutoff: 0.83 [0.8, 0.9], deviates (x)")
    assert "(not settled: a longer budget, or a D_K below the design's, may move it)" in words


def test_a_settled_second_reading_says_whether_the_deviation_is_budget_bound():
    """Issue 45: a settled reading of a deviating row names its cause as measured: budget-bound when it agrees with
    the longer budget, not budget-bound when it still deviates; an agreeing row's reading is just settled."""
    from dataclasses import replace as with_

    def shown(row, status):
        (r,) = with_longer([row], {"diag_growth": with_(_longer(status), settled=True)})
        return unescape(verdict_table_html([r], "c"))

    assert "4x budget: 0.83 [0.8, 0.9], deviates (settled: not budget-bound)" in shown(_row(), "deviates")
    assert "(settled: not budget-bound)</dd>" in shown(_row(), "deviates").replace("\n", "")
    assert "4x budget: 0.83 [0.8, 0.9], agrees (settled: budget-bound)" in shown(_row(), "agrees")
    agreeing = shown(_row(status="agrees", detail="inside"), "deviates")
    assert "deviates (settled)" in agreeing and "budget-bound" not in agreeing
