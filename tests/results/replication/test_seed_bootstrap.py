"""The seed bootstrap behind every verdict interval (rgr.results.replication.seed_bootstrap)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from rgr.results.replication.seed_bootstrap import cell_noise, fit_stats, noise, seed_draws
from rgr.results.stats import fit_line


def _cell(m: int, f1: dict[tuple[int, int], list[float]]) -> pd.DataFrame:
    """Runs of one cell (m, 16): f1[(h, D_K)] lists the per-seed F1."""
    return pd.DataFrame([dict(m=m, d_model=16, r=1, h=h, D_K=dk, seed=s, test_f1=v)
                         for (h, dk), vals in f1.items() for s, v in enumerate(vals)])


def test_identical_seeds_give_no_spread():
    runs = _cell(64, {(1, 8): [0.5] * 4, (1, 16): [1.0] * 4, (2, 8): [1.0] * 4})
    d = seed_draws(runs, n_boot=200)
    assert np.all(d.dk == 8) and np.all(d.h == 2) and np.all(d.dk1 == 16)
    n = noise(d, lambda dk, h: dk[0] / h[0])
    assert (n.value, n.lo, n.hi) == (4.0, 4.0, 4.0) and n.used == 200


def test_a_seeds_runs_move_together():
    # seed 0 passes at D_K 8 with both head counts, seed 1 fails with both: a replicate either draws seed 0 twice
    # (D_K* 8), seed 1 twice (D_K* 16), or both (mean 0.5 + ... fails at 8): never a mix of h = 1 from one seed and
    # h = 2 from the other
    runs = _cell(64, {(1, 8): [1.0, 0.0], (2, 8): [1.0, 0.0], (1, 16): [1.0, 1.0], (2, 16): [1.0, 1.0]})
    d = seed_draws(runs, n_boot=400)
    assert set(np.unique(d.dk)) == {8.0, 16.0}
    share8 = float((d.dk == 8).mean())
    assert 0.15 < share8 < 0.35  # both draws seed 0: probability 1/4


def test_draws_are_reproducible_and_do_not_depend_on_other_cells():
    a = _cell(64, {(1, 8): [0.98, 1.0, 0.99], (1, 16): [1.0, 1.0, 1.0]})
    b = _cell(128, {(1, 8): [0.5, 0.99, 1.0], (1, 16): [1.0, 1.0, 1.0]})
    alone = seed_draws(a, n_boot=300)
    both = seed_draws(pd.concat([a, b]), n_boot=300)
    assert np.array_equal(alone.dk[0], both.dk[0]) and np.array_equal(seed_draws(a, n_boot=300).dk, alone.dk)
    assert not np.array_equal(seed_draws(a, n_boot=300, seed=1).dk, alone.dk)


def test_noise_holds_the_value_and_the_e3_ends():
    # three seeds straddle 0.99 at D_K 8: optimistic end 8, conservative end 16
    runs = _cell(64, {(1, 8): [0.985, 0.99, 0.995], (1, 16): [1.0, 1.0, 1.0]})
    d = seed_draws(runs, n_boot=500)
    c = d.cells.iloc[0]
    assert (int(c.D_K_opt), int(c.D_K_cons)) == (8, 16)
    n = noise(d, lambda dk, h: dk[0])
    assert n.ends == (8.0, 16.0) and n.lo == 8.0 and n.hi == 16.0 and n.lo99 <= n.lo and n.hi99 >= n.hi
    assert "seed bootstrap" in n.parts() and "16" in n.parts()
    per = cell_noise(d, "D_K_star")
    assert per[["lo", "hi"]].iloc[0].tolist() == [8.0, 16.0]


def test_a_cell_that_never_reaches_the_target_has_no_value_and_no_interval():
    runs = _cell(64, {(1, 8): [0.5, 0.6, 0.7], (2, 8): [0.9, 0.95, 0.97]})
    d = seed_draws(runs, n_boot=200)
    assert d.cells["D_K_star"].isna().all() and np.isnan(d.dk).all()
    n = noise(d, lambda dk, h: dk[0])
    assert math.isnan(n.value) and math.isnan(n.lo)


def test_fit_stats_equal_fit_line_column_by_column():
    rng = np.random.default_rng(3)
    x = rng.uniform(1, 10, 7)
    y = rng.uniform(0, 20, (7, 5))
    for intercept in (False, True):
        slope, icpt, r2 = fit_stats(x, y, intercept)
        for k in range(5):
            f = fit_line(x, y[:, k], intercept=intercept)
            assert (slope[k], icpt[k], r2[k]) == pytest.approx((f.slope, f.intercept, f.r2))


def test_n_boot_is_checked():
    with pytest.raises(ValueError, match="n_boot"):
        seed_draws(_cell(64, {(1, 8): [1.0]}), n_boot=10)
