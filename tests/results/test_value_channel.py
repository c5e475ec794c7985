"""Findings of the chapter *value channel* (rgr.results.value_channel) on synthetic tables."""

import dataclasses
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

matplotlib.use("Agg")

from rgr.results.value_channel import (  # noqa: E402
    cells_table,
    error_ratios,
    one_head_stopping,
    paper_mse,
    stopping_effect,
    value_cells,
    value_finding,
    value_setup,
)


def _runs(err, heads=(1, 2, 4), dks=(2, 4, 8, 16, 32, 64), d_models=(16, 32), seeds=(0, 1, 2), steps=1000):
    """test_mse = err(d_model, h, D_K) (seed-free), steps as given."""
    return pd.DataFrame([dict(m=64, d_model=d, h=h, D_K=dk, seed=s, test_mse=err(d, h, dk), steps=steps)
                         for d in d_models for h in heads for dk in dks if dk >= h for s in seeds])


BASE = pd.DataFrame(dict(d_model=[16, 16, 32, 32], mse_mean=[0.1, 0.1, 0.05, 0.05]))
FLOOR = "rank floor 1 - d_model/m"


def _cell(m: int, d_model: int):
    """One cell of the chapter's readings, at (m, d_model)."""
    c = value_cells(error_ratios(_runs(lambda d, h, dk: 0.01, d_models=(16,)), BASE), pd.DataFrame(), solved=0.1)[0]
    return dataclasses.replace(c, m=m, d_model=d_model)


def _stop():
    """No run trained to the cutoff: nothing to say of early stopping."""
    stopped = _runs(lambda d, h, dk: 0.06, heads=(1, 2), steps=500)
    return stopping_effect(one_head_stopping(stopped, stopped.iloc[:0], BASE))


@given(st.integers(2, 40), st.integers(1, 60), st.integers(0, 10_000))
def test_rank_floor_is_the_best_low_rank_fit_of_a_permutation(m, d_model, seed):
    P = np.eye(m)[np.random.default_rng(seed).permutation(m)]
    U, s, Vt = np.linalg.svd(P)
    r = min(d_model, m)
    best = (U[:, :r] * s[:r]) @ Vt[:r]  # Eckart-Young: the closest rank-r matrix
    floor = cells_table((_cell(m, d_model),))[FLOOR].iloc[0]
    assert np.square(P - best).sum() / m == pytest.approx(floor, abs=1e-9)


def test_rank_floor_and_paper_mse_inputs():
    assert cells_table((_cell(64, 16), _cell(64, 128)))[FLOOR].tolist() == [0.75, 0.0]
    with pytest.raises(ValueError, match="d_model"):
        cells_table((_cell(0, 16),))  # m and d_model must be positive
    assert paper_mse(0.01, 32) == pytest.approx(0.32)


def test_error_ratios_divide_by_the_mean_predictor():
    r = error_ratios(_runs(lambda d, h, dk: 0.01), BASE)
    assert np.allclose(r[r.d_model == 16].ratio, 0.1) and np.allclose(r[r.d_model == 32].ratio, 0.2)
    assert np.allclose(r.lo, r.ratio) and np.allclose(r.hi, r.ratio)  # no spread across seeds


def _err(d, h, dk):
    """Relative error: one head floors at 0.5 past D_K = d; h > 1 falls as 1/D_K (reaches 0.1 at D_K = 32)."""
    ratio = max(0.5, 8 / dk) if h == 1 else 3.2 / dk / (1 + 0.01 * h)
    return ratio * (0.1 if d == 16 else 0.05)


def test_value_cells_first_budget_best_heads_and_f1():
    ratios = error_ratios(_runs(_err), BASE)
    f1 = pd.DataFrame(dict(m=[64, 64], d_model=[16, 32], D_K_star=pd.array([20, 4], "Int64"),
                           h_star=pd.array([2, 1], "Int64")))
    cells = value_cells(ratios, f1, solved=0.1)
    c16, c32 = cells
    assert c16.first_solved_D_K == 32 and c16.first_solved_h == 4  # the lowest error at the first budget
    assert c16.one_head_solved_D_K is None and c16.one_head_best_ratio == pytest.approx(0.5)
    assert c16.multi_head_best == 6 and c16.n_budgets == 6  # one head's error is above the others' at every D_K
    assert c16.multi_head_paired == 6  # on every seed: the paired difference's interval is below zero
    assert c32.f1_D_K_star == 4 and c32.f1_h_star == 1 and c32.solved_over_f1 == pytest.approx(8.0)
    s = value_finding(cells, _stop(), 0.1, tracks_factor=8.0)
    assert (s.n_cells, s.n_solved, s.n_one_head_solved) == (2, 2, 0)
    assert s.closest_to_f1 == pytest.approx(32 / 20) and (s.n_f1_one_head_cells, s.n_f1_one_head_multi) == (1, 1)
    assert (s.closest_d_model, s.closest_first_D_K, s.closest_f1_D_K) == (16, 32, 20)  # the cell c16
    assert (s.multi_head_best, s.n_budgets) == (c16.multi_head_best + c32.multi_head_best, 12)
    assert s.multi_head_paired == c16.multi_head_paired + c32.multi_head_paired
    # the h* = 1 cell counts only where several heads beat one on paired seeds, not on means alone
    means_only = dataclasses.replace(c32, multi_head_best=3, multi_head_paired=0)
    assert value_finding((c16, means_only), _stop(), 0.1).n_f1_one_head_multi == 0
    paired = dataclasses.replace(means_only, multi_head_paired=1)
    assert value_finding((c16, paired), _stop(), 0.1).n_f1_one_head_multi == 1
    # the farthest cell sits at 8 times its F1 threshold: within 8, not within 7.99 (nor 2)
    assert s.tracks == "does" and value_finding(cells, _stop(), 0.1, tracks_factor=7.99).tracks == "does not"
    assert value_finding(cells, _stop(), 0.1).tracks == "does not"
    t = cells_table(cells)
    assert list(t["rank floor 1 - d_model/m"]) == [0.75, 0.5] and t["first D_K below level"].tolist() == [32, 32]
    with pytest.raises(ValueError, match="solved"):
        value_cells(ratios, f1, solved=0)


def test_value_cells_without_f1_or_success():
    cells = value_cells(error_ratios(_runs(lambda d, h, dk: 0.09), BASE), pd.DataFrame(), solved=0.1)
    assert all(c.first_solved_D_K is None and c.f1_D_K_star is None for c in cells)
    s = value_finding(cells, _stop(), 0.1, tracks_factor=100)
    assert math.isnan(s.closest_to_f1) and s.n_solved == 0 and s.closest_d_model is None and s.tracks == "does not"


def test_one_head_with_and_without_early_stopping():
    stopped = _runs(lambda d, h, dk: 0.1 * (0.6 if dk <= d else 0.6 + 0.01 * dk), heads=(1, 2), steps=500)
    full = _runs(lambda d, h, dk: 0.1 * (0.6 if dk <= d else 0.6 + 0.005 * dk), heads=(1,), steps=2000)
    compare = one_head_stopping(stopped, full, BASE)
    assert set(compare.stopping) == {"early stop", "to the cutoff"} and set(compare.mean_steps) == {500, 2000}
    e = stopping_effect(compare)
    w = value_finding((), e, 0.1)  # its readings of the stopping effect
    assert e.d_model == (16, 32) and w.n_min_at_d_model == 0  # ties: the minimum is the first D_K tested
    assert w.n_rise_without_stop == 2
    assert w.largest_gain == pytest.approx(0.005 * 64 / 0.5)  # d_model = 32: mean predictor 0.05
    assert w.best_gain == 0 and w.floor == "is not"
    lower = stopping_effect(one_head_stopping(stopped, full.assign(test_mse=full.test_mse * 0.5), BASE))
    assert value_finding((), lower, 0.1).best_gain == pytest.approx(0.6)
    assert value_finding((), lower, 0.1, floor_tol=0.01).floor == "may be"
    none = one_head_stopping(stopped, full.iloc[:0], BASE)
    assert set(none.stopping) == {"early stop"} and stopping_effect(none).d_model == ()
    w = value_finding((), stopping_effect(none), 0.1)
    assert w.floor == "may be" and math.isnan(w.best_gain)


def test_value_figures():
    from rgr.chapters.figures.value_channel import plot_one_head_stopping, plot_value_mse

    compare = one_head_stopping(_runs(_err), _runs(_err, heads=(1,)), BASE)
    fig = plot_one_head_stopping(compare)
    assert len(fig.axes) == 2 and {t.get_text() for t in fig.axes[-1].get_legend().get_texts()} == {
        "early stop", "to the cutoff"}
    assert plot_one_head_stopping(compare.iloc[:0]).axes[0].texts
    assert plot_value_mse(_runs(_err).iloc[:0], BASE).axes[0].texts


def test_value_words_name_the_closest_cell_and_the_stopping_effect():
    ratios = error_ratios(_runs(_err), BASE)
    f1 = pd.DataFrame(dict(m=[64, 64], d_model=[16, 32], D_K_star=pd.array([20, 4], "Int64"),
                           h_star=pd.array([2, 1], "Int64")))
    cells = value_cells(ratios, f1, solved=0.1)
    stopped = _runs(lambda d, h, dk: 0.1 * (0.6 if dk <= d else 0.6 + 0.01 * dk), heads=(1, 2), steps=500)
    full = _runs(lambda d, h, dk: 0.1 * (0.6 if dk <= d else 0.6 + 0.005 * dk), heads=(1,), steps=2000)
    w = value_finding(cells, stopping_effect(one_head_stopping(stopped, full, BASE)), solved=0.1)
    assert (w.closest_d_model, w.closest_first_D_K, w.closest_f1_D_K) == (16, 32, 20)
    assert w.tracks == "does not" and w.closest_to_f1 == pytest.approx(32 / 20)  # d_model = 32 is 8x its threshold
    assert (w.n_d_model, w.n_rise_without_stop, w.floor) == (2, 2, "is not")
    no_stop = stopping_effect(one_head_stopping(stopped, full.iloc[:0], BASE))
    none = value_finding(value_cells(ratios, pd.DataFrame(), solved=1e-9), no_stop, 1e-9)
    assert none.closest_d_model is None and none.n_solved == 0 and none.floor == "may be"


def test_value_setup_reads_the_stopping_rule():
    runs = _runs(_err).assign(d_msg=16, patience=5, check_every=100, mse_tol=1e-4)
    s = value_setup(runs)
    n16 = int((runs.d_model == 16).sum())
    assert (s.n_runs, s.n_dmsg, s.patience, s.check_every, s.mse_tol) == (len(runs), n16, 5, 100, "0.0001")
    with pytest.raises(ValueError, match="no rows"):
        value_setup(runs.iloc[:0])


def test_the_lowest_head_count_is_judged_on_paired_seeds():
    from rgr.results.value_channel import lowest_head

    def runs(gap_per_seed):
        rows = [dict(d_model=32, h=h, D_K=dk, seed=s, max_steps=80_000,
                     test_mse=0.01 + 0.001 * s + (gap_per_seed[s] if h == 8 else 0.0) + (0.005 if dk == 64 else 0.0))
                for h in (8, 16) for dk in (64, 256) for s in range(3)]
        return pd.DataFrame(rows)

    low = lowest_head(runs([0.0005, 0.0004, 0.0006]))  # h = 16 lower at every seed, by a steady gap
    assert (low.best_h, low.best_D_K, low.next_h, low.next_D_K) == (16, 256, 8, 256)
    assert low.beats == "beats" and low.n_lower == 3 == low.n_seeds and low.hi < 0
    assert (low.n_runs, low.top_D_K, low.steps) == (12, 256, 80_000)
    assert low.paper_claim == "does not hold"  # h = 16 beats the best of the paper's h = 4 and 8
    tie = lowest_head(runs([0.002, -0.0019, 0.0001]))  # the seeds disagree: no side
    assert tie.beats == "ties with" and tie.lo < 0 < tie.hi and tie.paper_claim == "is not decided"
    eight = lowest_head(runs([-0.0005, -0.0004, -0.0006]))  # h = 8 lowest: the paper's claim holds
    assert eight.best_h == 8 and eight.paper_claim == "holds"
    assert lowest_head(runs([0, 0, 0])[lambda r: r.h == 8]) is None


def test_a_best_head_count_that_ties_with_one_head_on_paired_seeds_is_not_counted_paired():
    """At D_K = 2 two heads have the lower mean error, but the seeds disagree (the paired interval holds zero);
    at D_K = 4 two heads are lower on every seed."""
    def err(s, h, dk):
        if dk == 2:
            return 0.05 + (0.0 if h == 1 else [-0.02, -0.02, 0.03][s])
        return 0.05 if h == 1 else 0.02 + 0.001 * s

    runs = pd.DataFrame([dict(m=64, d_model=16, h=h, D_K=dk, seed=s, test_mse=err(s, h, dk), steps=1000)
                         for h in (1, 2) for dk in (2, 4) for s in (0, 1, 2)])
    r = error_ratios(runs, BASE)
    assert r.set_index(["h", "D_K"])["below_one"].to_dict() == {(1, 2): False, (1, 4): False, (2, 2): False,
                                                                (2, 4): True}
    c = value_cells(r, pd.DataFrame(), solved=0.1)[0]
    assert (c.multi_head_best, c.multi_head_paired, c.n_budgets) == (2, 1, 2)
