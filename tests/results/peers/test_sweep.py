"""The peers' design on rgr's engine: its planner (rgr.experiments.peers.engine_sweeps) and where its transitions fall
in x (rgr.results.peers.sweep), on synthetic tables whose crossing x* is known."""

import math

import numpy as np
import pandas as pd
import pytest

from rgr.experiments.peers.engine_sweeps import PEERS
from rgr.protocol import law_x
from rgr.results.peers.sweep import curve, series_drift, transitions, transitions_table

HEADS = tuple(range(1, 200))


def _runs(cells, x_star, seeds=(0, 1, 2), sharp=6.0):
    """Rows with d_k = d_model whose F1 is 1 / (1 + (x*/x)^sharp) at every seed (x* per cell); at (128, 16) one
    head is x = 0.41 apart, so a crossing read between tested heads is good to ~10%."""
    rows = []
    for (m, d), xs in zip(cells, x_star):
        for h in HEADS:
            x = law_x(h, d, d, m)
            if x > 8 * xs:
                break
            for s in seeds:
                rows.append(dict(m=m, d_model=d, d_k=d, h=h, seed=s, test_f1=1 / (1 + (xs / x) ** sharp)))
    return pd.DataFrame(rows)


def test_law_x_and_the_head_list():
    assert law_x(4, 8, 8, 64) == pytest.approx(256 / (64 * math.log(64)))
    grid = PEERS.grid("book")
    heads = sorted({r.h for r in PEERS.planned_runs("book") if (r.m, r.d_model) == (128, 16)})
    assert heads == [h for h in sorted(grid.heads) if law_x(h, 16, 16, 128) <= grid.dk_factor and h * 16 <= grid.dk_max]
    assert 0 < len(heads) < len(grid.heads)
    with pytest.raises(ValueError, match="m must be"):
        law_x(1, 1, 1, 1)


def test_planned_runs_are_the_peers_design():
    exp = PEERS
    for preset in ("smoke", "book", "paper"):
        runs = exp.planned_runs(preset)
        assert runs and all(r.d_k == r.d_model and r.model == "max" for r in runs)
        assert len({exp.run_key(r, preset) for r in runs}) == len(runs)
    book = exp.planned_runs("book")
    assert {(r.m, r.d_model) for r in book} >= {(8 * d, d) for d in (4, 8, 16, 32)} | {(128, 8), (128, 32)}


def _two_heads(f1: tuple[float, float]) -> pd.DataFrame:
    """One cell, (m, d) = (32, 4), with mean F1 ``f1`` at h = 1 and h = 4 (x four times apart)."""
    return pd.DataFrame([dict(m=32, d_model=4, d_k=4, h=h, seed=s, test_f1=f) for h, f in zip((1, 4), f1)
                         for s in (0, 1)])


def test_crossing_interpolates_in_log_x_and_says_where_it_is_censored():
    runs = _two_heads((0.0, 1.0))
    (t,) = transitions(runs)
    x1, x4 = curve(runs).x  # F1 = 0.5 halfway between them in log x: their geometric mean
    assert t.x_half == pytest.approx(math.sqrt(x1 * x4)) and t.censored_half == ""
    assert x4 == pytest.approx(4 * x1)
    (t,) = transitions(_two_heads((0.6, 1.0)))
    assert (t.x_half, t.censored_half) == (None, "below")
    (t,) = transitions(_two_heads((0.1, 0.4)))
    assert (t.x_half, t.censored_half) == (None, "above")


@pytest.mark.parametrize("k", [0.0, 0.5, -0.5])
def test_drift_exponent_is_recovered(k):
    cells = ((32, 4), (64, 8), (128, 16))
    x_star = [1.5 * (d / 4) ** k for _, d in cells]
    found = transitions(_runs(cells, x_star))
    for t, xs in zip(found, x_star):
        assert t.x_half == pytest.approx(xs, rel=0.1) and t.n_seeds == 3 and not t.censored_half
    drift = series_drift(found, "m/d = 8", cells)
    assert drift.exponent == pytest.approx(k, abs=0.1) and drift.n_censored == 0
    assert drift.spread == pytest.approx(max(x_star) / min(x_star), rel=0.1)


def test_a_cell_passing_at_one_head_is_censored_not_guessed():
    runs = _runs(((128, 32),), [0.5])  # one head already has x = 1.65 > x* = 0.5
    (t,) = transitions(runs)
    assert t.x_half is None and t.censored_half == "below" and t.h_pass is not None
    drift = series_drift([t], "m = 128", ((128, 32),))
    assert drift.n_censored == 1 and drift.exponent is None and drift.spread is None
    assert transitions_table([t])["x at F1 = 0.5"].iloc[0] == "below the tested h"


def test_bad_input_is_named():
    runs = _runs(((32, 4),), [1.0])
    with pytest.raises(ValueError, match="d_k = d_model"):
        transitions(runs.assign(d_k=1))
    with pytest.raises(ValueError, match="cells not in the table"):
        series_drift(transitions(runs), "x", ((64, 8),))
    with pytest.raises(ValueError, match="level"):
        series_drift(transitions(runs), "x", ((32, 4),), level=0.7)
    assert np.isfinite(transitions(runs)[0].d_over_ln_m)


def test_series_for_keeps_the_book_series_or_falls_back_to_every_cell():
    from rgr.results.peers.sweep import drift_table, series_for

    book = transitions(_runs(((32, 4), (64, 8), (128, 8)), [1.0, 1.0, 1.0]))
    said = series_for(book)
    assert said["fixed compression m / d_model = 8"] == ((32, 4), (64, 8)) and said["fixed m = 128"] == ((128, 8),)
    smoke = transitions(_runs(((16, 2), (16, 4)), [1.0, 1.0]))
    assert series_for(smoke) == {"every cell": ((16, 2), (16, 4))}
    table = drift_table(book)
    assert len(table) == 4 and table["exponent k in x* ∝ d^k"].abs().max() < 0.1


def test_crossings_read_on_the_interval_ends_bracket_the_means_and_say_whether_one_x_fits_all():
    """Seeds spread about the curve: the upper end crosses first, the lower last; cells at one x* share x, cells
    whose x* differ fourfold do not. Three cells equally spaced in log d: the end cells set k."""
    cells = ((32, 4), (64, 8), (128, 16))
    noisy = _runs(cells, [1.5] * 3).assign(test_f1=lambda r: (r.test_f1 + 0.05 * (r.seed - 1)).clip(0, 1))
    drift = series_drift(transitions(noisy), "m/d = 8", cells)
    for (lo, hi), x in zip(drift.ranges, drift.x_star):
        assert lo < x < hi
    assert drift.shared.startswith("share x from") and drift.k_from.startswith("the two end cells alone")
    assert drift.range_words.startswith("(32, 4): ") and " to " in drift.range_words
    apart = series_drift(transitions(_runs(cells, [0.5, 1.0, 2.0])), "m/d = 8", cells)
    assert apart.shared == "share no x"  # no seed spread: each range is its mean's crossing
    two = series_drift(transitions(_runs(cells[:2], [1.0, 1.0])), "m/d = 8", cells[:2])
    assert two.k_from == "its 2 cells"
