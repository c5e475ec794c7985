"""The decision run value_long and the verdict value_d32_best it settles (rgr.results.replication.value_decision)."""

from __future__ import annotations

import pandas as pd
import pytest

from rgr.experiments.registry import get_experiment
from rgr.results.replication.rows import Source
from rgr.results.replication.table import evaluate
from rgr.results.replication.value_decision import LONG, complete, deciding_runs, long_source

LONG_EXP = get_experiment(LONG)


def _value(cut_top: bool = True) -> pd.DataFrame:
    """value's rows as in data/: d_model 16 and 32, D_K up to 64; the top rung with h > 1 cut when ``cut_top``."""
    rows = []
    for d in (16, 32):
        for h in (1, 4, 8, 16):
            for D_K in (16, 32, 64):
                for s in range(3):
                    mse = (0.05 if h == 1 else 0.02 / h ** 0.2 / (D_K / 16) ** 0.5) + 0.0001 * s
                    rows.append(dict(m=64, d_model=d, r=1, h=h, D_K=D_K, seed=s, test_mse=mse, max_steps=20000,
                                     stop_reason="cutoff" if cut_top and D_K == 64 and h > 1 else "converged"))
    return pd.DataFrame(rows)


def _long(best: dict[int, tuple[int, float]], cut_at_top: bool = False, preset: str = "paper") -> pd.DataFrame:
    """Every planned value_long run: head count h has its lowest MSE best[h][1] at D_K = best[h][0] and 0.01 more
    elsewhere; seeds differ by 1e-5. ``cut_at_top``: the top rung's runs hit the cutoff (still improving)."""
    rows = []
    for c in LONG_EXP.planned_runs(preset):
        dk, low = best[c.h]
        top = c.D_K == max(d for d in (64, 128, 256, 512) if d >= c.h)
        rows.append(dict(run_key=LONG_EXP.run_key(c, preset), m=c.m, d_model=c.d_model, r=c.r, h=c.h, D_K=c.D_K,
                         seed=c.seed, max_steps=c.max_steps,
                         test_mse=(low if c.D_K == dk else low + 0.01) + 1e-5 * c.seed,
                         stop_reason="cutoff" if cut_at_top and top else "converged", test_f1=None))
    return pd.DataFrame(rows)


def _row(long: Source | None):
    from rgr.results.replication.extensions import value_rows

    rows = {r.key: r for r in value_rows(Source("value", "paper", _value()), long)}
    return rows["value_d32_best"]


def test_the_grid_is_the_declared_one():
    runs = LONG_EXP.planned_runs("paper")
    assert {(c.m, c.d_model) for c in runs} == {(64, 32)} and {c.max_steps for c in runs} == {80_000}
    assert sorted({c.h for c in runs}) == [1, 2, 4, 8, 16] and sorted({c.D_K for c in runs}) == [64, 128, 256, 512]
    assert sorted({c.seed for c in runs}) == [0, 1, 2] and len(runs) == 60
    assert LONG_EXP.planned_runs("book") == runs  # paper and book are one grid


def test_a_settled_lowest_error_at_h_8_agrees_and_names_its_rows():
    long = Source(LONG, "paper", _long({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002),
                                        16: (256, 0.0025)}))
    assert complete(long) and len(deciding_runs(long)) == 60
    row = _row(long)
    assert row.verdict.status == "agrees" and "h = 8" in row.book
    assert row.basis.startswith("value_long paper") and "cutoff 80k steps" in row.basis and "D_K 64–512" in row.basis


def test_a_settled_lowest_error_elsewhere_deviates():
    long = Source(LONG, "paper", _long({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.004), 8: (256, 0.003),
                                        16: (256, 0.001)}))
    row = _row(long)
    assert row.verdict.status == "deviates" and "paired over 3 seeds" in row.verdict.detail


def test_an_unsettled_decision_run_is_still_not_testable():
    long = Source(LONG, "paper", _long({h: (512, 0.001 * h) for h in (1, 2, 4, 8, 16)}, cut_at_top=True))
    v = _row(long).verdict
    assert v.status == "not testable" and v.cause == "unsettled"
    assert "80,000-step cutoff" in v.detail and "D_K = 512 is the top of the ladder" in v.detail


def test_an_incomplete_decision_run_leaves_the_row_to_value():
    full = _long({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002), 16: (256, 0.0025)})
    part = Source(LONG, "paper", full.iloc[1:])
    assert not complete(part) and deciding_runs(part) is None
    assert _row(part) == _row(None)
    assert _row(None).verdict.status == "not testable" and "20,000-step cutoff" in _row(None).verdict.detail


def test_evaluate_reads_the_decision_run_and_its_preset():
    from tests.results.replication.test_verdicts import (  # the verdict table's synthetic sources
        NO_CHECKS,
        _runs,
        _sources,
    )

    src = _sources(_runs({(64, 16): 8}))
    src["value"] = Source("value", "book", _value())
    before = {r.key: r for r in evaluate(src, checks=NO_CHECKS)}["value_d32_best"]
    src[LONG] = Source(LONG, "paper", _long({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002),
                                             16: (256, 0.0025)}))
    by = {r.key: r for r in evaluate(src, checks=NO_CHECKS)}
    assert before.verdict.status == "not testable" and before.preset == "book"
    assert by["value_d32_best"].verdict.status == "agrees" and by["value_d32_best"].preset == "paper"
    assert by["value_d16"].preset == "book"  # the other value rows still read value


@pytest.mark.parametrize("requested", ["auto", "paper", "smoke"])
def test_a_missing_table_gives_no_rows_and_runs_nothing(tmp_path, requested):
    src = long_source(requested, root=tmp_path)
    assert src.name == LONG and not len(src.runs) and deciding_runs(src) is None
    assert not list(tmp_path.iterdir())  # nothing trained or written
