"""Lower bounds (Sec. 9) against closed forms."""

import math

import pytest

from rgr.studies.construction_search import build
from rgr.theory.bounds import (
    DEFAULT_C,
    bit_budget_DK,
    bit_budget_min_DK,
    bound_rows,
    entropy_bounds,
    log2_binom,
    log2_graph_count,
    n_pairs,
    regime,
    regime_form,
    regime_table,
    upper_bound,
)


@pytest.mark.parametrize("n,k", [(0, 0), (5, 2), (12, 6), (30, 1), (56, 8), (90, 45), (200, 17)])
def test_log2_binom_matches_math_comb(n, k):
    assert log2_binom(n, k) == pytest.approx(math.log2(math.comb(n, k)), abs=1e-9)


def test_graph_count_is_exact_on_small_m():
    for m in (2, 3, 5, 8):
        for me in range(0, n_pairs(m) + 1, 3):
            assert log2_graph_count(m, me) == pytest.approx(math.log2(math.comb(m * (m - 1), me)), abs=1e-9)


@pytest.mark.parametrize("m,me", [(64, 64), (256, 4096), (512, 2000), (1024, 523776)])
def test_entropy_bracket(m, me):
    lo, hi = entropy_bounds(m, me)
    assert lo <= log2_graph_count(m, me) <= hi


def test_bit_budget_is_the_smallest_integer_meeting_the_count():
    for m, me, d, b in [(64, 64, 16, 1), (256, 256, 32, 8), (128, 4096, 32, 1), (20, 380, 4, 3), (8, 1, 64, 32)]:
        bits = log2_graph_count(m, me)
        D = bit_budget_min_DK(m, me, d, b)
        assert b * (2 * d * D + 1) >= bits
        assert D == 0 or b * (2 * d * (D - 1) + 1) < bits
        assert D == math.ceil(bit_budget_DK(m, me, d, b) - 1e-9) or D == 0
    assert bit_budget_DK(64, 64, 16, 1) == pytest.approx((log2_graph_count(64, 64) - 1) / 32)


def test_regimes():
    assert regime(100, 100) == "permutation"
    assert regime(100, 5000) == "dense" and regime(100, 1000) == "sparse"
    assert regime_form(64, 64, 16, "permutation") == pytest.approx(4 * math.log(64))
    assert regime_form(64, 640, 16, "sparse") == pytest.approx(40 * math.log(64))
    assert regime_form(64, 640, 16, "dense") == 40
    assert regime_form(64, 640, 16) == pytest.approx(40 * math.log(64 * 64 / 640))
    t = regime_table([256, 1024], 32)
    dense = t[t.regime == "dense"]
    assert dense.form_ratio.between(0.98, 1.02).all()  # log2 binom(N, N/2) ~ N: bound = m'/d_model
    with pytest.raises(ValueError):
        regime_form(8, 8, 2, "other")


def test_bound_rows():
    import pandas as pd

    cells = pd.DataFrame(dict(m=[64, 64], m_edges=[64, 64], d_model=[16, 16]))
    rows = bound_rows(cells, bits=(1.0, 8.0))
    assert len(rows) == 2 and (rows.bound_min_DK >= rows.bound_DK).all()


def test_upper_bounds_are_what_the_constructions_build():
    c, _ = build("compressive", 1024, 512, 0, d_k=None)
    assert upper_bound("compressive", 1024, 512) == c.info.D_K
    c, _ = build("one-hot", 256, 256, 0)
    assert upper_bound("one-hot", 256) == c.info.D_K == math.ceil(DEFAULT_C["one-hot"] * math.log(256))
    c, g = build("general-graph", 128, 32, 0, d_k=None, r=4)
    assert c.info.D_K <= upper_bound("general-graph", 128, 32, m_edges=512, delta=4)
    assert upper_bound("softmax", 256, 32, C=2) == 8 * math.ceil(2 * math.log(256) ** 2)
    assert upper_bound("general-embedding", 256, 32, B=8) == 32 * math.ceil(250 * math.log(256))
    with pytest.raises(ValueError):
        upper_bound("nope", 10, 2)


def test_lower_bound_below_constructions():
    """Sanity: every construction that succeeds spends at least the 1-bit bound."""
    for m, d in [(1024, 512), (256, 64)]:
        assert bit_budget_DK(m, m, d, 1) < upper_bound("compressive", m, d)
    with pytest.raises(ValueError):
        log2_binom(3, 4)
    with pytest.raises(ValueError):
        bit_budget_DK(10, 10, 2, 0)
