"""rgr.results.peers.dana: Dana et al.'s rule re-applied, on synthetic slopes with a known power in d."""

import numpy as np
import pandas as pd
import pytest

from rgr.results.peers.dana import exp3_refit, power_refit, power_rss, their_slope, their_stop

D = np.arange(3, 14)


@pytest.mark.parametrize("p", [2.0, 3.0, 1.5])
def test_their_rule_recovers_a_known_power(p):
    slope = 1e-4 * D**p + 2e-4
    fit = power_refit(D, slope)
    assert abs(fit.best_p - p) < 1e-9 and fit.best_p_low == fit.best_p_high == fit.best_p
    assert (fit.rss_ratio > 1) == (p < 2.5)  # the quadratic fits better below 2.5, the cubic above


def test_loglog_exponent_without_intercept():
    fit = power_refit(D, 3e-4 * D**2.0)
    assert fit.loglog_p == pytest.approx(2.0) and fit.intercept_law == pytest.approx(0.0, abs=1e-12)
    assert power_rss(D, 3e-4 * D**2.0, 2.0)[0] == pytest.approx(3e-4)  # a of the p = 2 fit


def test_noise_moves_the_power_only_a_little():
    rng = np.random.default_rng(0)
    slope = 1e-4 * D**2 * (1 + 0.02 * rng.standard_normal(len(D)))
    fit = power_refit(D, slope)
    assert 1.7 <= fit.best_p_low <= fit.best_p <= fit.best_p_high <= 2.3 and fit.rss_ratio > 1


def test_their_slope_stops_at_the_first_saturated_point():
    H = np.array([1, 6, 11, 16, 21])
    acc = np.array([0.1, 0.35, 0.6, 0.97, 0.99])  # linear 0.05 / head up to 11, then saturated
    assert their_slope(H, acc) == pytest.approx(np.polyfit(H[:4], acc[:4], 1)[0])
    assert their_slope(H[:3], acc[:3]) == pytest.approx(0.05)
    assert their_stop(acc) == 4 and their_stop(acc[:3]) == 3 and their_stop(np.array([0.99, 1.0])) == 2
    with pytest.raises(ValueError, match="H and acc"):
        their_slope(H, acc[:3])


def test_power_rss_is_zero_on_an_exact_law_and_refit_rejects_bad_input():
    assert power_rss(D, 2 * D**3 + 1, 3)[2] == pytest.approx(0, abs=1e-16)
    with pytest.raises(ValueError, match="slope must be positive"):
        power_refit(D, -D**2.0)
    with pytest.raises(ValueError, match="at least 4"):
        power_refit(D[:3], D[:3] ** 2.0)


def test_exp3_split_at_d_head():
    d = np.arange(5, 16)
    acc = np.where(d <= 10, 0.1 * d - 0.2, 0.8)
    fit = exp3_refit(pd.DataFrame(dict(acc=acc, para=20, N=50, d=d, d_head=10)))
    assert fit.slope_below == pytest.approx(0.1) and fit.slope_above == pytest.approx(0.0, abs=1e-12)
    assert fit.acc_at_d_head == pytest.approx(0.8)


def test_rss_ratios_say_how_sharply_the_fit_picks_its_power():
    """RSS at p = 1 and p = 2 over RSS at the best p: large where the data pin the power, near 1 where they do not."""
    rng = np.random.default_rng(1)
    sharp = power_refit(D, 1e-4 * D**3 * (1 + 0.01 * rng.standard_normal(len(D))))
    assert sharp.rss_p1_ratio > 100 and sharp.rss_p2_ratio > 10
    flat = power_refit(D, 1e-3 * D**1.5 * (1 + 0.3 * rng.standard_normal(len(D))))
    assert 1 <= flat.rss_p2_ratio < 2 and 1 <= flat.rss_p1_ratio < 2
    assert flat.rss_p2_ratio == pytest.approx(flat.rss_law / power_rss(D, flat.slope, flat.best_p)[2])
