"""What the readers share (rgr.results.replication.rows): which tables the GPT-2 rows read (the compressive preset;
issue 46) and the decision run value_long with the verdict value_d32_best it settles."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rgr.gpt2.experiment import experiment_grid
from rgr.results.replication.extensions import gpt2_rows
from rgr.results.replication.registry import evaluate
from rgr.results.replication.rows import LONG, Source, deciding_runs, long_source, paper_dk_at
from tests.results.replication.synthetic import (
    LONG_EXP,
    NO_CHECKS,
    base_runs,
    d32_best_row,
    long_runs,
    sources,
    value_runs,
)


def _rows(preset: str, acc) -> pd.DataFrame:
    """Every run of ``preset`` with test accuracy ``acc(h, D_K, seed)``."""
    out = []
    for c in experiment_grid(preset, "stand-in"):
        out.append(dict(m=c.m, d_model=c.d_model, ell=c.ell, h=c.h, D_K=c.D_K, seed=c.seed, steps=c.steps,
                        batch_size=c.batch_size, test_acc=acc(c.h, c.D_K, c.seed), r=1,
                        embedding_source="stand-in (not GPT-2)"))
    return pd.DataFrame(out)


def test_budgets_map_by_the_law_variable():
    assert paper_dk_at(512, 6144, 768) == pytest.approx(512)  # the paper's own task (E7): its own budget
    x = 512 * 768 / (6144 * math.log(6144))  # the law's x = D_K d_model / (m ln m) of the paper's D_K = 512
    assert x == pytest.approx(7.33, abs=0.01)
    assert paper_dk_at(512, 512, 64) == pytest.approx(x * 512 * math.log(512) / 64)  # that x on another task
    assert paper_dk_at(256, 512, 64) == pytest.approx(256 * 768 / (6144 * 8.7232) * 512 * 6.2383 / 64, rel=1e-3)
    assert 183 < paper_dk_at(256, 512, 64) < 184  # the compressive preset's D_K >= 192 is the paper's D_K >= 256


def test_the_compressive_preset_decides_the_three_rows_on_the_stand_in():
    def acc(h, D_K, seed):
        if h == 1:
            if D_K < 192:
                return 0.3 + 0.01 * seed
            return 0.0 if seed < 2 else 0.78 + 0.01 * seed
        return min(0.99, 0.5 + D_K / 400 + (0.05 if h in (4, 8) else 0.0))

    rows = {r.key: r for r in gpt2_rows(Source("gpt2", "compressive", _rows("compressive", acc)))}
    assert {k: r.verdict.status for k, r in rows.items()} == {"gpt2_multi": "agrees", "gpt2_single": "agrees",
                                                             "gpt2_best": "agrees"}
    b = rows["gpt2_multi"].basis
    assert "m = 512 items in d_model = 64 (m / d_model = 8)" in b and "stand-in" in b and "40,000 steps" in b
    assert "D_K ≥ 183" in rows["gpt2_single"].verdict.detail
    assert "runs (5 seeds at 2 budgets) ≤ 0.1" in rows["gpt2_single"].book  # runs, not seeds: 5 seeds x 2 budgets
    # the interval is over the 3 seeds that did not collapse (0.80, 0.81, 0.82, each its two runs' mean), not over
    # their 6 runs as if independent (that gave [0.80, 0.82])
    assert rows["gpt2_single"].interval == "[0.79, 0.83]" and "over 3 seeds" in rows["gpt2_single"].book
    assert rows["gpt2_multi"].interval == "h = 2: [0.99, 0.99], h = 4: [0.99, 0.99], h = 8: [0.99, 0.99]"


def test_near_perfect_is_judged_on_each_head_counts_interval():
    def rows_of(high):  # accuracy of h >= 2 at the largest budget per seed
        def acc(h, D_K, seed):
            return (high(h, seed) if D_K == 384 and h >= 2 else 0.5)
        return {r.key: r for r in gpt2_rows(Source("gpt2", "compressive", _rows("compressive", acc)))}

    # a mean of 0.94 whose seeds spread widely: its interval reaches 0.95, so the seeds cannot decide
    undecided = rows_of(lambda h, s: 0.94 + (0.05 if s % 2 else -0.05) if h == 2 else 0.99)["gpt2_multi"].verdict
    assert (undecided.status, undecided.cause) == ("not testable", "undecided")
    # a mean of 0.94 with tight seeds lies below 0.95: deviates, naming the head count
    tight = rows_of(lambda h, s: 0.94 + 0.001 * s if h == 4 else 0.99)["gpt2_multi"].verdict
    assert tight.status == "deviates" and tight.detail.endswith("below it for h = 4")


def test_futility_stopping_is_named_where_its_runs_are_read(committed_verdict):
    """The lambda = 8 diagonal's rows and the readings over every configuration name how many of their runs
    futility stopping ended (a rule the protocol lacks), as the regular rows do (issue 50)."""
    from rgr.experiments.futility import futile_stops
    from rgr.results.replication.fig4 import diagonal_runs
    from rgr.results.replication.rows import futility_words

    rows, loaded = committed_verdict
    src = lambda d: Source(d.name, d.preset, d.runs)  # noqa: E731
    diag = diagonal_runs(src(loaded["diagonal"]["base"]), src(loaded["diagonal"]["lambda8"]))
    stops = futile_stops(diag)
    by = {r.key: r for r in rows}
    for key in ("diag_growth", "diag_first_two_above", "diag_heads"):
        assert futility_words(diag) in by[key].basis
        if stops.stopped:
            assert f"{stops.stopped:,} of {stops.runs:,} runs stopped by futility stopping" in by[key].basis
    every = [x.name for x in by["law_slope_all"].readings if x.name.startswith("every configuration")]
    if every and any(futile_stops(d.runs).stopped for d in loaded["every"].values()):
        assert "stopped by futility stopping (not in the protocol" in every[0]
    assert futility_words(diag.iloc[:0]) == ""


def test_the_book_rows_are_the_non_compressive_control():
    rows = gpt2_rows(Source("gpt2", "book", _rows("book", lambda h, D_K, s: 0.9)))
    for r in rows:
        assert r.verdict.status == "not testable" and "not compressive" in r.verdict.detail
        assert "compressive preset" in r.verdict.detail


def test_the_grid_is_the_declared_one():
    runs = LONG_EXP.planned_runs("paper")
    assert {(c.m, c.d_model) for c in runs} == {(64, 32)} and {c.max_steps for c in runs} == {80_000}
    assert sorted({c.h for c in runs}) == [1, 2, 4, 8, 16] and sorted({c.D_K for c in runs}) == [64, 128, 256, 512]
    assert sorted({c.seed for c in runs}) == [0, 1, 2] and len(runs) == 60
    assert LONG_EXP.planned_runs("book") == runs  # paper and book are one grid


def test_a_settled_lowest_error_at_h_8_agrees_and_names_its_rows():
    long = Source(LONG, "paper", long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.003), 8: (256, 0.002),
                                        16: (256, 0.0025)}))
    assert len(deciding_runs(long)) == 60  # complete
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
    assert deciding_runs(part) is None  # one run short
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


def test_the_papers_number_is_read_as_the_values_its_digits_round():
    """"1.19" stands for [1.185, 1.195]: an interval end inside that window is "at the edge", not inside or outside
    (the log2 all-cell constant: low end 1.1869, the seed bootstrap's 1.1949)."""
    from rgr.results.replication.rows import EDGE, Reading, paper_window, place

    assert paper_window("law_slope_all") == pytest.approx((1.185, 1.195))
    assert paper_window("heads_intercept") == pytest.approx((-6.645, -6.635))  # printed "−6.64"
    w = paper_window("law_slope_all")
    assert place(w, 1.18688, 1.54) == EDGE and place(w, 1.19493, 1.52) == EDGE
    assert place(w, 1.18, 1.54) == "inside" and place(w, 1.196, 1.54) == "outside" and place(w, 1.0, 1.18) == "outside"
    r = Reading("with log2", 1.23, 1.18688, 1.54, True, edge=True)
    assert r.words(1.19).endswith("the paper's 1.19 at the edge (within the paper's rounding)")
