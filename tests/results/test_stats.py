import math

import numpy as np
import pandas as pd
import pytest

from rgr.results.stats import (
    dk_star,
    fit_line,
    h_star_compared,
    h_star_interval,
    seeds_per_cell,
    summarize,
    t_interval,
    wilson_interval,
)
from rgr.theory.bounds import regular_x, scaling_x


def test_t_interval_by_hand():
    # mean 2, s = 1, n = 3: half width = t_{0.975,2} / sqrt(3) = 4.302653 / 1.732051
    mean, lo, hi = t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0
    assert hi - mean == pytest.approx(4.302652729911275 / math.sqrt(3), rel=1e-9)
    assert mean - lo == pytest.approx(hi - mean)
    m1, lo1, hi1 = t_interval([0.5])
    assert m1 == 0.5 and math.isnan(lo1) and math.isnan(hi1)
    with pytest.raises(ValueError, match="values"):
        t_interval([])


def _cell():
    # h=1 reaches 0.99 only at D_K=64; h=4 at D_K=32 (mean 0.995) with spread; ties at 32 broken by mean
    rows = []
    f1 = {
        (1, 16): [0.5, 0.6, 0.55], (1, 32): [0.8, 0.85, 0.9], (1, 64): [0.99, 1.0, 1.0],
        (4, 16): [0.9, 0.95, 0.92], (4, 32): [0.99, 1.0, 0.995], (4, 64): [1.0, 1.0, 1.0],
        (2, 32): [0.99, 0.99, 0.99],
    }
    for (h, dk), vals in f1.items():
        for seed, v in enumerate(vals):
            rows.append(dict(h=h, D_K=dk, seed=seed, test_f1=v))
    return pd.DataFrame(rows)


def test_summarize_and_dk_star():
    runs = _cell()
    s = summarize(runs, ["h", "D_K"])
    row = s[(s.h == 4) & (s.D_K == 32)].iloc[0]
    assert row["mean"] == pytest.approx(0.995) and row["n"] == 3
    star = dk_star(s)
    assert star.central == 32 and star.h_star == 4  # h=2 also >= 0.99 at 32 but lower mean
    assert star.d_k_star == 8
    # optimistic: CI high of (4,16) = 0.9233 + t*0.0252/sqrt3 = ~0.986 < 0.99 -> not 16
    assert star.optimistic == 32
    # conservative: CI low at (4,32) is below 0.99; (2,32) has zero spread -> lo = 0.99
    assert star.conservative == 32
    assert dk_star(s[s.h == 1]).central == 64


def test_dk_star_none_when_never_reached():
    s = summarize(_cell().query("D_K == 16"), ["h", "D_K"])
    star = dk_star(s)
    assert (star.central, star.optimistic, star.conservative, star.h_star, star.d_k_star) == (None,) * 5
    assert h_star_interval(_cell(), star) is None


def test_h_star_interval_paired():
    runs = _cell()
    star = dk_star(summarize(runs, ["h", "D_K"]))
    lo, hi = h_star_interval(runs, star)
    # h=2 at D_K=32: differences (0, 0.01, 0.005) -> p ~ 0.23 > 0.05 -> kept; h=1 differences large -> dropped
    assert (lo, hi) == (2, 4)


def test_h_star_compared_names_what_the_tied_range_tested():
    runs = _cell()
    star = dk_star(summarize(runs, ["h", "D_K"]))
    p = h_star_compared(runs, star.central, star.h_star)
    assert set(p) == {1, 2} and p[2] > 0.05 >= p[1]  # the two head counts h_star_interval read
    far = runs[~((runs.h == 1) & (runs.D_K >= 29) & (runs.D_K <= 35))]  # h=1 has no run within 10% of 32
    assert set(h_star_compared(far, star.central, star.h_star)) == {2}
    assert h_star_interval(far, star) == (2, 4)  # 1 is left out either way: not compared is not tied



def test_a_constant_paired_difference_is_a_tie_at_zero_and_a_difference_otherwise():
    def runs(h1: list[float]) -> pd.DataFrame:
        return pd.DataFrame(dict(h=[2, 2, 1, 1], D_K=32, seed=[0, 1, 0, 1], test_f1=[0.995, 0.999, *h1]))

    same = runs([0.995, 0.999])  # differences (0, 0): a tie (p = 1); h* = 1, the smaller h at an equal mean
    assert h_star_interval(same, dk_star(summarize(same, ["h", "D_K"]))) == (1, 2)
    shifted = runs([0.985, 0.989])  # differences (0.01, 0.01): no spread, yet a difference (p = 0)
    star = dk_star(summarize(shifted, ["h", "D_K"]))
    assert star.h_star == 2 and h_star_interval(shifted, star) == (2, 2)


def test_fit_line_closed_forms():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    f = fit_line(x, 2 * x + 1)
    assert (f.slope, f.intercept, f.r2) == pytest.approx((2.0, 1.0, 1.0))
    g = fit_line(x, np.array([2.0, 4.0, 5.0, 9.0]), intercept=False)
    assert g.slope == pytest.approx((2 + 8 + 15 + 36) / 30)  # x.y / x.x
    assert g.intercept == 0.0 and g.through_origin
    res = np.array([2.0, 4.0, 5.0, 9.0]) - g.slope * x
    assert g.r2 == pytest.approx(1 - res @ res / np.sum((np.array([2.0, 4, 5, 9]) - 5) ** 2))


def test_law_abscissae():
    assert scaling_x(256, 32) == pytest.approx(256 * math.log(256) / 32)
    assert regular_x(4, 128, 32) == pytest.approx(4 * 128 / 32 * 7)


def test_regular_x_bound_closed_form():
    from rgr.theory.bounds import regular_x, regular_x_bound

    # m = 128, d_model = 32, r = 32: m' = 4096, (m'/d) log2(m^2/m') = 128 * 2
    assert regular_x_bound(32, 128, 32) == pytest.approx(256.0)
    # r = 1: log2(m^2 / m) = log2 m, the two forms agree
    assert regular_x_bound(1, 128, 32) == pytest.approx(regular_x(1, 128, 32))
    with pytest.raises(ValueError, match="r must be below m"):
        regular_x_bound(128, 128, 32)


def test_seeds_are_counted_per_cell_by_the_columns_the_runs_have():
    runs = pd.DataFrame(dict(m=[512] * 4 + [4096] * 2, d_model=[64] * 4 + [512] * 2, seed=[0, 1, 2, 2, 0, 1]))
    assert seeds_per_cell(runs).to_dict() == {(512, 64): 3, (4096, 512): 2}
    assert seeds_per_cell(runs.drop(columns="d_model")).to_dict() == {512: 3, 4096: 2}
    assert seeds_per_cell(runs[["seed"]]).tolist() == [3]


def test_wilson_interval_at_the_ends_and_inside():
    lo, hi = wilson_interval(np.array([0, 5]), np.array([5, 5]))
    assert lo[0] == 0 and hi[1] == pytest.approx(1) and 0 < hi[0] < 1
