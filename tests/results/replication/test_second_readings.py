"""Second readings with a longer step budget (rgr.results.replication.second_readings; issue 45)."""

from html import unescape

import numpy as np
import pandas as pd

from rgr.chapters.verdict_table import verdict_table_html
from rgr.results.replication.rows import ClaimRow, Longer
from rgr.results.replication.second_readings import longer_draws, with_longer
from rgr.results.replication.seed_bootstrap import seed_draws
from rgr.results.replication.verdicts import Verdict, cause_of


def _runs(star: dict[tuple[int, int], int], steps: int, seeds=range(4)) -> pd.DataFrame:
    """h = 2 reaches F1 1 from D_K = star[cell] on; the ladder holds star / 2, star and 2 star."""
    rows = [dict(m=m, d_model=d, r=1, h=2, D_K=dk, d_k=dk / 2, seed=s, test_f1=1.0 if dk >= s_ else 0.4,
                 max_steps=steps) for (m, d), s_ in star.items() for dk in (s_ // 2, s_, 2 * s_) for s in seeds]
    return pd.DataFrame(rows)


def test_longer_draws_replace_the_extensions_cells_and_keep_the_others():
    base = seed_draws(_runs({(64, 16): 40, (128, 16): 64, (256, 32): 48}, 20_000), n_boot=200)
    longer = _runs({(128, 16): 32}, 80_000)  # the extension's cell passes from D_K = 32 on
    mixed = longer_draws(base, longer)
    cells = mixed.cells.set_index(["m", "d_model"])
    assert cells.loc[(128, 16), "D_K_star"] == 32 and cells.loc[(64, 16), "D_K_star"] == 40
    i = int(np.flatnonzero((base.cells.m == 128).to_numpy())[0])
    assert (mixed.dk[i] == 32).all() and not (base.dk[i] == 32).any()
    keep = [j for j in range(len(base.cells)) if j != i]
    assert np.array_equal(mixed.dk[keep], base.dk[keep]) and np.array_equal(mixed.h[keep], base.h[keep])
    assert longer_draws(base, longer.iloc[:0]) is base


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
    assert "(not settled: a longer budget may move it)" in words
