"""Findings of the chapter *softmax* (rgr.results.softmax) on synthetic tables with known answers."""

import math

import matplotlib
import pandas as pd
import pytest

matplotlib.use("Agg")

from rgr.results.softmax import (  # noqa: E402
    algorithm2_reading,
    best_f1_by_cell,
    linear_sum_check,
    shift_finding,
    softmax_cells_summary,
    threshold_shift,
)
from rgr.results.thresholds import paired_seeds  # noqa: E402


def _cells(rows, ties=None):
    """Threshold rows; ``ties``: per row the h* tie set (h_lo, h_hi), (h, h) by default."""
    ties = ties or [(h, h) for _, _, _, h, _ in rows]
    return pd.DataFrame([dict(m=m, d_model=d, r=1, D_K_star=dk, h_star=h, h_lo=lo, h_hi=hi, max_f1_h1=f1, n_seeds=3)
                         for (m, d, dk, h, f1), (lo, hi) in zip(rows, ties)])


def test_threshold_shift_ratios_and_counts():
    mx = _cells([(64, 16, 20, 2, 0.9), (64, 32, 6, 1, 1.0), (128, 32, 20, 1, 1.0), (512, 16, 100, 8, 0.3)])
    soft = _cells([(64, 16, 32, 4, 0.67), (64, 32, 6, 4, 1.0), (128, 32, 200, 4, 0.99), (256, 32, 40, 4, 1.0)])
    s = threshold_shift(mx, soft)
    assert [(c.m, c.d_model) for c in s.cells] == [(64, 16), (64, 32), (128, 32)]  # cells in both tables only
    assert [c.ratio for c in s.cells] == pytest.approx([1.6, 1.0, 10.0])
    w = shift_finding(s, soft)
    assert w.ratio_min == pytest.approx(1.0) and w.ratio_max == pytest.approx(10.0)
    assert w.n_costly == 3 == w.n_both
    assert w.n_below_ln_m == 2  # 10 > ln 128
    assert w.n_more_heads == w.n_point_more_heads == 3 and w.n_one_head_soft == 2  # 0.99 reaches, 0.67 does not
    assert w.n_seeds == "3"
    assert w.one_head_soft_cells == "(64, 32) and (128, 32)"
    t = s.table()
    assert list(t.ratio.round(2)) == [1.6, 1.0, 10.0] and t.ln_m.iloc[0] == pytest.approx(math.log(64))


def test_more_heads_needs_the_tie_sets_apart():
    """A larger point h* counts only where the softmax's tie set lies wholly above the max model's."""
    rows_max, rows_soft = [(64, 16, 20, 2, 0.9), (128, 32, 16, 2, 1.0)], [(64, 16, 32, 4, 0.6), (128, 32, 36, 4, 0.8)]
    mx = _cells(rows_max, ties=[(2, 4), (2, 2)])
    soft = _cells(rows_soft, ties=[(4, 8), (4, 4)]).assign(n_seeds=[3, 2])
    s = threshold_shift(mx, soft)
    assert [c.more_heads for c in s.cells] == [False, True]  # 4 is tied in both at (64, 16)
    w = shift_finding(s, soft)
    assert (w.n_more_heads, w.n_point_more_heads, w.n_seeds) == (1, 2, "2 to 3")
    assert s.table().h_ties_max.tolist() == ["2 to 4", "2"] and s.table().seeds.tolist() == [3, 2]


def test_paired_seeds_keeps_the_softmax_tables_draws():
    maxed = pd.DataFrame(dict(m=64, d_model=[16] * 4 + [32] * 2, r=1, seed=[0, 1, 2, 3, 0, 1], test_f1=0.5))
    soft = pd.DataFrame(dict(m=64, d_model=[16, 16, 16, 32], r=1, seed=[0, 2, 2, 5], test_f1=0.4))
    p = paired_seeds(maxed, soft)
    assert sorted(zip(p.d_model, p.seed)) == [(16, 0), (16, 2)] and len(p.columns) == len(maxed.columns)


def test_threshold_shift_missing_thresholds():
    mx = _cells([(64, 16, 20, 2, 0.9)])
    soft = _cells([(64, 16, None, None, 0.5)])
    soft["D_K_star"] = soft["D_K_star"].astype("Int64")
    s = threshold_shift(mx, soft)
    w = shift_finding(s, soft)
    assert len(s.cells) == 1 and w.n_both == 0 and math.isnan(w.ratio_min)
    assert w.n_costly == 0 and w.n_below_ln_m == 0 and w.n_more_heads == 0
    assert w.n_one_head_soft == 0 and w.one_head_soft_cells == "none"


def test_algorithm2_reading():
    summary = pd.DataFrame(dict(m=[64, 128, 64], d_model=[16, 32, 32], h=[4, 4, 2], ln_m=0.0,
                                one_hot_min_ell=[32.0, math.nan, 16.0], gaussian_best_f1=[0.5, 0.7, 0.6]))
    a = algorithm2_reading(summary)
    assert (a.n_cells, a.n_one_hot) == (3, 2) and a.gaussian_best_f1 == 0.7
    assert a.ell_scale_min == pytest.approx(16 / math.log(64)) and a.ell_scale_max == pytest.approx(32 / math.log(64))
    assert a.ell == "16 to 32" and a.n_seeds == 0  # a summary without seed counts
    same = algorithm2_reading(summary.assign(one_hot_min_ell=32.0, n_seeds=[2, 3, 2], n_contexts=200,
                                             one_hot_low_seed_f1=[0.995, 0.991, 0.999]))
    assert (same.ell, same.n_seeds, same.n_contexts, same.low_seed_f1) == ("32 in every cell", 2, 200, 0.991)
    assert algorithm2_reading(summary.assign(one_hot_min_ell=[32.0, math.nan, 32.0])).ell == "32"
    empty = algorithm2_reading(summary.iloc[:0])
    assert empty.n_cells == 0 and math.isnan(empty.ell_scale_min) and math.isnan(empty.gaussian_best_f1)


def test_softmax_cells_summary_per_cell():
    """Mean over seeds per (inputs, d_k, ell); the shortest one-hot ell at the target, the best Gaussian mean."""
    rows = [dict(m=64, d_model=16, h=4, inputs=i, d_k=dk, ell=ell, seed=s, f1=f1)
            for i, dk, ell, f1s in (("one-hot", 35, 4, (0.5, 0.5)), ("one-hot", 35, 32, (1.0, 0.97)),
                                    ("one-hot", 35, 64, (1.0, 1.0)), ("gaussian", 16, 4, (0.3, 0.3)),
                                    ("gaussian", 16, 64, (0.6, 0.7)), ("gaussian", 64, 64, (0.5, 0.5)))
            for s, f1 in enumerate(f1s)]
    rows += [dict(r, m=128, d_model=32, ell=8, f1=0.2) for r in rows if r["inputs"] == "one-hot" and r["ell"] == 4]
    rows[5]["f1"] = 0.993  # seed 1 at ell = 64: the mean 0.9965 still reaches the target, that seed is the low one
    s = softmax_cells_summary(pd.DataFrame(rows)).set_index("m")
    assert s.loc[64, "h"] == 4 and s.loc[64, "one_hot_min_ell"] == 64  # ell = 32 averages 0.985 < 0.99
    assert s.loc[64, "one_hot_low_seed_f1"] == 0.993 and s.loc[64, "n_seeds"] == 2
    assert math.isnan(s.loc[128, "one_hot_low_seed_f1"])
    assert s.loc[64, "gaussian_best_f1"] == pytest.approx(0.65)
    assert (s.loc[64, "gaussian_best_d_k"], s.loc[64, "gaussian_best_ell"]) == (16, 64)
    assert math.isnan(s.loc[128, "one_hot_min_ell"]) and math.isnan(s.loc[128, "gaussian_best_f1"])
    assert s.loc[128, "gaussian_best_d_k"] == -1


def _runs(heads, f1=lambda dk, s: dk / 64, tau=0.5):
    return pd.DataFrame([dict(m=64, d_model=16, r=1, h=h, D_K=dk, seed=s, max_steps=100, test_f1=f1(dk, s), tau=tau)
                         for h in heads for dk in (4, 8, 16, 32, 64) if dk >= h for s in (0, 1)])


def test_linear_sum_check_identical_and_not():
    maxed = _runs((1, 2, 4), f1=lambda dk, s: 1.0 if dk >= 16 else 0.5)
    linear = _runs((1, 4), f1=lambda dk, s: 1.0 if dk >= 16 else 0.5, tau=0.5 + 1e-7)
    c = linear_sum_check(linear, maxed)
    assert c.n_runs == len(linear) == c.n_matched and c.f1_gap == 0 and c.h_spread == 0
    assert c.tau_gap == pytest.approx(1e-7)
    assert c.n_same_f1 == c.n_matched and math.isnan(c.f1_differing)
    bad = linear.copy()
    bad.loc[(bad.h == 4) & (bad.D_K == 8), "test_f1"] = 0.7  # one head count learns differently
    c = linear_sum_check(bad, maxed)
    assert c.f1_gap == pytest.approx(0.2) and c.h_spread == pytest.approx(0.2)
    assert c.n_same_f1 == c.n_matched - 2 and c.f1_differing == pytest.approx(0.7)  # two seeds at (h=4, D_K=8)
    other = linear_sum_check(linear.assign(max_steps=200), maxed)  # a different cutoff is not the same run
    assert other.n_matched == 0 and math.isnan(other.f1_gap)


def test_best_f1_by_cell():
    maxed = _runs((1, 4), f1=lambda dk, s: min(1.0, dk / 32) if True else 0)
    maxed.loc[maxed.h == 1, "test_f1"] = 0.4
    linear = _runs((1, 4), f1=lambda dk, s: 0.4)
    b = best_f1_by_cell(linear, maxed).iloc[0]
    assert (b.linear, b.max_one_head, b.max_best_h) == pytest.approx((0.4, 0.4, 1.0))
    assert math.isnan(best_f1_by_cell(linear.assign(m=128), maxed).iloc[0].max_one_head)


def test_softmax_figures_say_when_empty():
    from rgr.chapters.figures.softmax import plot_linear_ablation, plot_softmax_construction, plot_threshold_shift

    empty = _cells([(64, 16, 20, 2, 0.9)])
    for fig in (plot_threshold_shift(empty, empty.assign(m=128)),
                plot_linear_ablation(_runs((1,)).iloc[:0], _runs((1,))),
                plot_softmax_construction(pd.DataFrame(columns=["m", "d_model"]))):
        assert any(t.get_text().startswith("no ") for t in fig.axes[0].texts)


def test_shift_words_count_the_softmax_tables_own_cells():
    mx = _cells([(64, 16, 20, 2, 0.9), (64, 32, 6, 1, 1.0)])
    soft = _cells([(64, 16, 32, 4, 0.67), (64, 32, None, 4, 1.0), (256, 32, 40, 4, 1.0)])
    soft["D_K_star"] = soft["D_K_star"].astype("Int64")
    w = shift_finding(threshold_shift(mx, soft), soft)
    assert (w.n_cells, w.n_both, w.n_soft_reach, w.n_soft_cells) == (2, 1, 2, 3)
    assert w.ratio_min == w.ratio_max == pytest.approx(1.6)
