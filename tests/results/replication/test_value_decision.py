"""The decision run value_long and the verdict value_d32_best it settles (rgr.results.replication.rows)."""

from __future__ import annotations

import pytest

from rgr.results.replication.registry import evaluate
from rgr.results.replication.rows import LONG, Source, complete, deciding_runs, long_source
from tests.results.replication.synthetic import (
    LONG_EXP,
    NO_CHECKS,
    base_runs,
    d32_best_row,
    long_runs,
    sources,
    value_runs,
)


def test_the_grid_is_the_declared_one():
    runs = LONG_EXP.planned_runs("paper")
    assert {(c.m, c.d_model) for c in runs} == {(64, 32)} and {c.max_steps for c in runs} == {80_000}
    assert sorted({c.h for c in runs}) == [1, 2, 4, 8, 16] and sorted({c.D_K for c in runs}) == [64, 128, 256, 512]
    assert sorted({c.seed for c in runs}) == [0, 1, 2] and len(runs) == 60
    assert LONG_EXP.planned_runs("book") == runs  # paper and book are one grid


def test_a_settled_lowest_error_at_h_8_agrees_and_names_its_rows():
    long = Source(LONG, "paper", long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002),
                                        16: (256, 0.0025)}))
    assert complete(long) and len(deciding_runs(long)) == 60
    row = d32_best_row(long)
    assert row.verdict.status == "agrees" and "h = 8" in row.book
    assert row.basis.startswith("value_long paper") and "cutoff 80k steps" in row.basis and "D_K 64–512" in row.basis


def test_a_settled_lowest_error_elsewhere_deviates():
    long = Source(LONG, "paper", long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.004), 8: (256, 0.003),
                                        16: (256, 0.001)}))
    row = d32_best_row(long)
    assert row.verdict.status == "deviates" and "paired over 3 seeds" in row.verdict.detail


def test_an_unsettled_decision_run_is_still_not_testable():
    long = Source(LONG, "paper", long_runs({h: (512, 0.001 * h) for h in (1, 2, 4, 8, 16)}, cut_at_top=True))
    v = d32_best_row(long).verdict
    assert v.status == "not testable" and v.cause == "unsettled"
    assert "80,000-step cutoff" in v.detail and "D_K = 512 is the top of the ladder" in v.detail


def test_an_incomplete_decision_run_leaves_the_row_to_value():
    full = long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002), 16: (256, 0.0025)})
    part = Source(LONG, "paper", full.iloc[1:])
    assert not complete(part) and deciding_runs(part) is None
    assert d32_best_row(part) == d32_best_row(None)
    at_cutoff = d32_best_row(None).verdict
    assert at_cutoff.status == "not testable" and "20,000-step cutoff" in at_cutoff.detail


def test_evaluate_reads_the_decision_run_and_its_preset():

    src = sources(base_runs({(64, 16): 8}))
    src["value"] = Source("value", "book", value_runs())
    before = {r.key: r for r in evaluate(src, checks=NO_CHECKS)}["value_d32_best"]
    src[LONG] = Source(LONG, "paper", long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002),
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
