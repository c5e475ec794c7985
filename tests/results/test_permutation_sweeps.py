"""Findings of chapter *permutation sweeps* on synthetic tables whose answers are known by construction."""

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from rgr.results.diagonals import (
    at_threshold,
    cutoff_reason,
    diagonal_table,
    diagonal_trend,
    extreme_table,
)
from rgr.results.findings import flatten
from rgr.results.permutation_sweeps import (
    chapter_cells,
    dk_table,
    law_reading,
    penalty_table,
    permutation_findings,
    read_constructions,
)
from rgr.results.thresholds import law_fits, thresholds
from rgr.store import TableError
from rgr.theory.bounds import bit_budget_DK, bit_budget_DK_derangements

LADDER = [2**k for k in range(1, 12)]


def _runs(cells, threshold, heads=(1, 4, 8), seeds=3, h1_factor=None, max_steps=20000):
    """F1 = 1 at D_K >= threshold(m, d, h), 0.1 below; one head never passes when h1_factor is None."""
    rows = []
    for m, d in cells:
        for h in heads:
            thr = threshold(m, d) * (h1_factor or math.inf if h == 1 else 1.0)
            for dk in [x for x in LADDER if x >= h]:
                for s in range(seeds):
                    rows.append(dict(m=m, d_model=d, r=1, h=h, D_K=dk, seed=s, test_f1=1.0 if dk >= thr else 0.1,
                                     max_steps=max_steps))
    return pd.DataFrame(rows)


BASE = [(64, 16), (128, 16), (128, 32), (256, 32), (256, 64)]


def _findings(runs: pd.DataFrame):
    """The chapter's findings with ``runs`` as the base grid (no diagonal, no constructions)."""
    return permutation_findings(runs, chapter_cells(runs, runs.iloc[:0], runs.iloc[:0]), None)


def law(m, d):
    return 2.0 * m * math.log(m) / d


def test_transitions_are_one_step_on_a_step_table():
    t = _findings(_runs(BASE, law)).transitions
    assert t.n_curves == len(BASE) * 3 and t.n_reach == len(BASE) * 2  # one head never passes
    assert t.n_sharp == t.n_reach and t.median_width == 2 and t.min_width == t.max_width == 2


def test_law_reading_and_the_excluded_cells():
    cells = thresholds(_runs(BASE, law))
    reading, fits = law_reading(cells)
    assert reading.note == "" and fits is not None
    assert reading.n_excluded == 1 and reading.n_pre == 4  # (128, 16)
    # D_K* is the next power of two above 2 m ln m / d: the fitted constant lies in [2, 4]
    assert 2 <= reading.c_all <= 4 and 2 <= reading.c_pre <= 4
    empty, none = law_reading(cells.assign(D_K_star=pd.array([pd.NA] * len(cells), dtype="Int64")))
    assert none is None and "at least 2 cells" in empty.note and math.isnan(empty.c_all)


def test_findings_of_a_step_table():
    base = _runs(BASE, law)
    diag = _runs([(512, 64), (1024, 128)], lambda m, d: 40.0)  # flat along the diagonal, law would rise
    extreme = _runs([(512, 16)], law)
    cells = chapter_cells(base, diag, extreme)
    cons = pd.DataFrame(dict(construction="compressive", m=[m for m, _ in BASE] * 2, d_model=[d for _, d in BASE] * 2,
                             r=1, rule=["best-split"] * 5 + ["prescribed"] * 5, criterion="margin",
                             D_K=[m for m, _ in BASE] + [None] * 5, found=[True] * 5 + [False] * 5, preset="book",
                             note=[""] * 5 + ["limit fails"] * 4 + ["searched up to d_k=4096"]))
    f = permutation_findings(base, cells, cons)
    assert f.notes == "none" and f.seeds_base == f.seeds_diagonal == 3
    assert f.heads.n_multi == 5 and f.heads.n_single_never == f.heads.n_cells and math.isnan(f.heads.penalty_min)
    assert f.heads.h_max == 8 and f.heads.n_top == 0  # h = 4 and 8 tie everywhere: the smaller h is h*
    b = f.bracket
    assert b.n_cells == 5 and b.n_rank_one == b.n_rank_one_is_m == 5
    assert b.n_alg1_tested == 5 and b.n_alg1_separated == 0
    assert b.n_alg1_limit_fails == 4
    want = [bit_budget_DK(m, m, d, 32.0) / bit_budget_DK_derangements(m, d, 32.0) for m, d in BASE]
    assert b.lower_ratio_min == pytest.approx(min(want)) and b.lower_ratio_max == pytest.approx(max(want))
    assert b.n_above_lower == 5
    assert b.lower_gap_min == pytest.approx(
        min(float(c.D_K_star) / bit_budget_DK_derangements(int(c.m), int(c.d_model), 32.0)
            for c in cells.base.itertuples()))
    d = f.diagonal  # (128, 16) from the base grid, then 512 and 1024 at 64
    assert (d.m_first, d.m_last, d.dk_last) == (128, 1024, 64)
    assert d.grows == "does not grow" and d.law_rise == pytest.approx(math.log(1024) / math.log(128))
    flat = flatten(f)
    assert flat["diagonal_grows"] == "does not grow" and flat["bracket_n_alg1_separated"] == 0
    # no stop_reason in these runs: no futility stops anywhere
    assert (f.stops.diagonal, f.stops.extreme) == ("none of its runs", "none of its runs")


def test_the_diagonals_head_counts_and_futility_stops():
    base = _runs([(128, 16)], lambda m, d: 64.0, heads=(1, 8, 16))
    diag = _runs([(1024, 128)], lambda m, d: 64.0, heads=(1, 2, 8)).assign(stop_reason="converged")
    diag.loc[(diag.h == 1) & (diag.seed == 0), "stop_reason"] = "futile"
    extreme = _runs([(512, 16)], law).assign(stop_reason="cutoff")
    f = permutation_findings(base, chapter_cells(base, diag, extreme), None)
    h = f.diagonal_heads  # 8 and 16 tie at (128, 16): h* 8, tied 8-16; 2 and 8 tie at (1024, 128): h* 2, tied 2-8
    assert (h.m_first, h.h_first, h.h_first_lo, h.h_first_hi) == (128, 8, 8, 16)
    assert (h.m_last, h.h_last, h.h_last_lo, h.h_last_hi) == (1024, 2, 2, 8) and h.constant.startswith("holds")
    n_stopped = int(((diag.h == 1) & (diag.seed == 0)).sum())
    assert f.stops.diagonal == f"{n_stopped} of the {len(diag)} runs at (1024, 128)"  # (128, 16) stopped none
    assert f.stops.extreme == "none of its runs"
    apart = _runs([(1024, 128)], lambda m, d: 64.0, heads=(1, 2))  # h* 2 alone at the last cell: no overlap with 8-16
    g = permutation_findings(base, chapter_cells(base, apart, extreme), None).diagonal_heads
    # ... but 8 and 16 never ran at (1024, 128): not rejected there, so the constant h* cannot be tested
    assert (g.h_last_lo, g.h_last_hi) == (2, 2) and g.constant.startswith("cannot be tested here")
    assert "h = 8 and 16, tied with h* at m = 128, have no run within 10% of D_K* at m = 1024" in g.constant
    # every head count run at both ends, each rejected at one end or the other: it fails
    both = (1, 2, 8, 16)
    first = _runs([(128, 16)], lambda m, d: 64.0, heads=both)
    first.loc[(first.h == 2) & (first.D_K == 64), "test_f1"] = 0.1  # 2 rejected at the first end, 8-16 tied
    last = _runs([(1024, 128)], lambda m, d: 64.0, heads=both)
    last.loc[last.h.isin([8, 16]) & (last.D_K == 64), "test_f1"] = 0.1  # 8 and 16 rejected at the last end
    k = permutation_findings(first, chapter_cells(first, last, extreme), None).diagonal_heads
    assert (k.h_first_lo, k.h_first_hi, k.h_last_lo, k.h_last_hi) == (8, 16, 2, 2)
    assert k.constant.startswith("fails here") and "unexplained" in k.constant
    assert permutation_findings(base, chapter_cells(base, base.iloc[:0], extreme), None).diagonal_heads.constant == "—"


def test_the_head_split_of_a_cell():
    runs = _runs([(128, 16)], lambda m, d: 64.0, heads=(1, 8, 16, 32))
    runs = runs[~((runs.h == 32) & (runs.D_K < 128))]  # 32 has no run within 10% of D_K* = 64
    c = chapter_cells(runs, runs.iloc[:0], runs.iloc[:0]).base.iloc[0]
    assert (c.h_tied, c.h_rejected, c.h_untested) == ((8, 16), (1,), (32,))
    assert (c.h_lo, c.h_hi) == (8, 16)  # the tied range itself is unchanged


def test_the_law_reading_sets_its_tightening_beside_the_papers():
    reading, _ = law_reading(thresholds(_runs(BASE, law)))
    said = reading.paper_tightening
    assert said.startswith("as the paper's") == reading.tightens.startswith("is tighter")
    assert said in ("as the paper's is", "so the paper's tightening is neither reproduced nor contradicted here") or \
        said.endswith("not reproduced here, for a reason unexplained")


def test_the_tightening_is_read_at_both_threshold_ends():
    """R² without the excluded cell (128, 16) minus R² with it, at D_K* and at the E3 ends: only a gap of one sign
    at all three reads as a tightening (a loosening); signs that disagree leave it open."""
    cells = thresholds(_runs(BASE, law))
    x = cells["x_law"].to_numpy(float)
    excluded = ((cells.d_model == 16) & (cells.m > 64)).to_numpy()
    ints = (lambda v: pd.array(np.round(v).astype(int), dtype="Int64"))  # noqa: E731
    off = ints(np.where(excluded, 4 * x, 2 * x))  # the kept cells on one line, the excluded one far above it
    noisy = ints(2 * x * np.array([0.5, 1, 1.6, 0.6, 1.5]))  # the kept cells scattered, the excluded one on the line

    def read(star, opt, cons):
        return law_reading(cells.assign(D_K_star=star, D_K_opt=opt, D_K_cons=cons))[0]

    tight, mixed, loose = read(off, off, off), read(off, noisy, off), read(noisy, noisy, noisy)
    assert tight.r2_gap > 0 and tight.tightens.startswith("is tighter") and "not measured" in tight.tightens
    assert tight.paper_tightening == "as the paper's is"
    assert mixed.r2_gap > 0 > mixed.r2_gap_opt and mixed.r2_gap_cons > 0
    assert mixed.tightens.startswith("is about as tight") and "cannot say" in mixed.tightens
    assert mixed.paper_tightening == "so the paper's tightening is neither reproduced nor contradicted here"
    assert loose.r2_gap_cons < 0 and loose.tightens.startswith("is looser")
    assert loose.paper_tightening.endswith("not reproduced here, for a reason unexplained")
    fits = law_fits(cells.assign(D_K_star=noisy))
    assert mixed.r2_gap_opt == pytest.approx(fits.origin_pre.r2 - fits.origin_all.r2)
    gone = read(off, off, pd.array([pd.NA] * len(cells), dtype="Int64"))  # no conservative end: it cannot say
    assert math.isnan(gone.r2_gap_cons) and "cannot say" in gone.tightens


def test_diagonal_that_grows_and_too_few_cells():
    cells = thresholds(_runs([(128, 16), (1024, 128)], lambda m, d: 8 * math.log(m)))
    d = diagonal_trend(cells)
    assert (d.dk_first, d.dk_last) == (64, 64)  # 8 ln 128 = 38.8 and 8 ln 1024 = 55.5 both round up to 64
    rising = thresholds(_runs([(128, 16), (1024, 128)], lambda m, d: m / 4))
    assert diagonal_trend(rising).grows == "grows" and diagonal_trend(rising).law_outside == "below"
    assert diagonal_trend(cells.iloc[:1]).n_cells == 1
    up = thresholds(_runs([(128, 16), (1024, 128)], lambda m, d: 30 if m == 128 else 40))  # 32 -> 64, seeds agree
    assert diagonal_trend(up).grows == "grows"
    noisy = _runs([(128, 16), (1024, 128)], lambda m, d: 30 if m == 128 else 40)
    noisy.loc[(noisy.m == 128) & (noisy.D_K == 32) & (noisy.seed == 0), "test_f1"] = 0.98  # D_K* 32, interval [32, 64]
    assert diagonal_trend(thresholds(noisy)).grows == "rises within the intervals"


def _cut(runs: pd.DataFrame, cut_at: dict[int, int]) -> pd.DataFrame:
    """``runs`` with a stop reason: the first ``cut_at[m]`` seeds of each point in cell m stopped at the cutoff."""
    cut = runs["seed"] < runs["m"].map(cut_at)
    return runs.assign(stop_reason=np.where(cut, "cutoff", "early_stop"))


def test_runs_at_each_threshold_and_the_cutoffs_as_a_likely_reason():
    flat = lambda m, d: 48  # noqa: E731  the same D_K* at both ends: no growth
    runs = pd.concat([_runs([(512, 64)], flat, seeds=10), _runs([(4096, 512)], flat, max_steps=200000)])
    at = at_threshold(_cut(runs, {512: 9, 4096: 3}), thresholds(runs)).sort_values("m")
    assert at[["n_at_star", "n_cut", "cutoff"]].values.tolist() == [[10, 9, 20000], [3, 3, 200000]]
    why = cutoff_reason(at)
    assert "m = 512: 9 of 10 at 20,000 steps; m = 4096: 3 of 3 at 200,000 steps" in why and "10 times" in why
    # no reason where most runs at one end settled, or the cutoffs are equal, or a cell has no threshold
    assert cutoff_reason(at_threshold(_cut(runs, {512: 4, 4096: 3}), thresholds(runs)).sort_values("m")) == ""
    same = _runs([(512, 64), (4096, 512)], flat, seeds=3)
    assert cutoff_reason(at_threshold(_cut(same, {512: 3, 4096: 3}), thresholds(same)).sort_values("m")) == ""
    t = thresholds(runs).sort_values("m")
    none = at_threshold(_cut(runs, {512: 9, 4096: 3}), t.assign(D_K_star=[t["D_K_star"].iloc[0], math.nan]))
    assert none["n_at_star"].tolist() == [10, 0] and cutoff_reason(none) == ""
    with pytest.raises(ValueError, match="stop_reason"):
        at_threshold(runs, t)


def test_a_shortfall_names_the_precondition_and_the_cutoffs_where_they_apply():
    flat = lambda m, d: 48  # noqa: E731
    runs = pd.concat([_runs([(128, 16)], flat, seeds=10), _runs([(4096, 512)], flat, max_steps=200000)])
    cells = thresholds(runs)
    d = diagonal_trend(cells)  # no stop reasons: the precondition only
    assert d.law_outside == "above" and "(128, 16), lies outside the law's precondition" in d.reason
    assert "cutoff" not in d.reason
    both = diagonal_trend(at_threshold(_cut(runs, {128: 10, 4096: 3}), cells))
    assert both.reason.startswith("Likely reasons, not measured here:") and "10 of 10 at 20,000 steps" in both.reason
    # runs cut only at the last cell can only raise its D_K*: no reason for a shortfall
    assert "cutoff" not in diagonal_trend(at_threshold(_cut(runs, {128: 0, 4096: 3}), cells)).reason
    rising = thresholds(_runs([(512, 64), (4096, 512)], lambda m, d: m / 4))
    assert diagonal_trend(rising).reason == ""  # the law's rise is no shortfall
    # from the first cell inside the precondition: does the law still overshoot there?
    three = thresholds(_runs([(128, 16), (256, 32), (4096, 512)], flat))
    said = diagonal_trend(three).reason
    assert "but from (256, 32), the first cell inside it, the law's rise to 96 at m = 4096 still lies above" in said
    assert said.endswith("explains part of the shortfall at most.")
    dk = [128, 64, 96]  # from (256, 32) the law's rise, 64 * ln 4096 / ln 256 = 96, is met
    grows = pd.DataFrame(dict(m=[128, 256, 4096], d_model=[16, 32, 512], D_K_star=dk, D_K_opt=dk, D_K_cons=dk,
                              preset="paper", n_seeds=10))
    assert "the law's rise to 96 at m = 4096 lies inside that cell's interval" in diagonal_trend(grows).reason


@pytest.mark.parametrize(("opt", "cons", "where"), [(64, 88, "inside"), (88, 96, "inside"), (89, 128, "below"),
                                                    (48, 87, "above")])
def test_the_law_at_an_end_of_the_last_interval_is_inside(opt, cons, where):
    """56 * ln 2048 / ln 128 is 88, a ladder budget, but 88.00000000000001 in floats here: the tie must not hang on
    the last ulp of the machine's log (it read "above" an interval ending at 88)."""
    cells = pd.DataFrame(dict(m=[128, 2048], d_model=[16, 256], D_K_star=[56, cons], D_K_opt=[56, opt],
                              D_K_cons=[56, cons], preset="paper", n_seeds=[10, 3]))
    d = diagonal_trend(cells)
    assert d.law_last == pytest.approx(88, rel=1e-12) and d.law_outside == where


def test_rank_ceiling_measures_one_heads_gain_past_d_model():
    runs = _runs([(64, 16)], law)  # one head stuck at 0.1 everywhere: no gain
    rank = _findings(runs).rank
    assert rank == type(rank)(1, 0.0, 0.0)
    runs.loc[(runs.h == 1) & (runs.D_K > 16), "test_f1"] = 0.6
    rank = _findings(runs).rank
    assert rank.max_abs == pytest.approx(0.5)
    runs.loc[(runs.h == 1) & (runs.D_K > 16), "test_f1"] = 0.05
    rank = _findings(runs).rank
    assert rank.max_abs == pytest.approx(0.05)  # a loss: its size


def test_cutoff_share_names_its_extreme_cells():
    runs = _runs(BASE, law)
    runs["stop_reason"] = ["cutoff" if m >= 256 else "converged" for m in runs.m]
    runs.loc[(runs.m == 128) & (runs.d_model == 16), "stop_reason"] = "cutoff"
    runs.loc[(runs.m == 128) & (runs.d_model == 16) & (runs.h == 1), "stop_reason"] = "converged"
    c = _findings(runs).cutoffs
    assert (c.low, c.low_m, c.low_d_model) == (0.0, 64, 16) and (c.high, c.high_m, c.high_d_model) == (1.0, 256, 32)


def test_too_little_data_gives_notes_not_errors():
    base = _runs([(16, 8), (32, 8)], lambda m, d: math.inf)
    f = permutation_findings(base, chapter_cells(base, base.iloc[:0], base.iloc[:0]), None)
    assert f.notes.count("; ") == 2 and "got 0" in f.notes.split("; ")[0]
    assert math.isnan(f.law.c_all) and f.bracket.n_cells == 0


def test_tables(tmp_path):
    runs = _runs(BASE, law)
    cells = thresholds(runs)
    t1 = dk_table(cells)
    assert list(t1.columns) == ["m", "d_model=16", "d_model=32", "d_model=64"] and t1["m"].tolist() == [64, 128, 256]
    assert np.isnan(t1.loc[t1.m == 64, "d_model=64"]).all()
    assert "D_K*(h=1) / D_K*" in penalty_table(cells)
    assert read_constructions(tmp_path / "none.csv", "book") is None
    (tmp_path / "bad.csv").write_text("m,d_model\n1,2\n")
    with pytest.raises(TableError, match="missing"):
        read_constructions(tmp_path / "bad.csv", "book")


def test_a_cell_in_two_tables_takes_its_runs_from_the_diagonal_table_only():
    # the paper's lambda = 8 grid repeats base cells: the cell's threshold must come from one table, not a pool
    base = _runs([(128, 16), (256, 32)], lambda m, d: 64.0, seeds=10)
    diag = _runs([(256, 32), (1024, 128)], lambda m, d: 16.0, seeds=2)
    cells = chapter_cells(base, diag, diag.iloc[:0]).diagonal.set_index("m")
    assert cells.loc[256, "D_K_star"] == 16 and cells.loc[256, "n_seeds"] == 2  # the diagonal table's runs
    assert cells.loc[128, "D_K_star"] == 64 and cells.loc[128, "n_seeds"] == 10  # only in base: base's runs


def test_the_diagonal_table_names_each_cells_preset():

    base = _runs([(128, 16), (256, 32)], lambda m, d: 64.0, seeds=10).assign(preset="paper")
    diag = _runs([(1024, 128)], lambda m, d: 16.0, seeds=2).assign(preset="book")
    cells = chapter_cells(base, diag, diag.iloc[:0])
    t = diagonal_table(cells.diagonal, 1.0).set_index("m")
    assert t.loc[128, "preset"] == "paper" and t.loc[1024, "preset"] == "book" and t.loc[1024, "seeds"] == 2
    assert "preset" in extreme_table(cells.diagonal) and "preset" not in diagonal_table(thresholds(base), 1.0)


def test_the_diagonal_says_whether_its_cells_were_measured_alike():

    base = _runs([(128, 16), (256, 32)], lambda m, d: 64.0, seeds=10).assign(preset="paper")
    diag = _runs([(1024, 128)], lambda m, d: 16.0, seeds=2).assign(preset="book")
    mixed = chapter_cells(base, diag, diag.iloc[:0]).diagonal
    assert diagonal_trend(mixed).basis == ("paper with 10 seeds at m = 128–256, book with 2 at m = 1024: "
                                           "not all measured alike")
    alike = chapter_cells(base, base.iloc[:0], base.iloc[:0]).diagonal
    assert diagonal_trend(alike).basis == "all from the paper preset, 10 seeds"
    assert diagonal_trend(thresholds(base)).basis == "all with 10 seeds" and diagonal_trend(alike.iloc[:0]).basis == "—"
    fewer = chapter_cells(base.assign(preset="book"), diag, diag.iloc[:0]).diagonal
    assert diagonal_trend(fewer).basis == "all from the book preset, seeds 10 at m = 128–256 and 2 at m = 1024"
