"""The derangement count and its bit-budget bound (chapter *permutation sweeps*, bracketing) against closed forms."""

import math

import pytest

from rgr.theory.bounds import (
    bit_budget_DK,
    bit_budget_DK_derangements,
)


def log2_derangement_count(m: int) -> float:
    """``log2 D_m`` read off the public bound: at ``d_model = 1`` and ``b = 1`` bit it is ``(log2 D_m - 1) / 2``
    wherever the count is at least 1 bit (m >= 3; 0 below)."""
    return 2 * bit_budget_DK_derangements(m, 1, 1.0) + 1


def _derangements(m: int) -> int:
    """D_m by the recurrence D_m = (m - 1)(D_{m-1} + D_{m-2}), D_0 = 1, D_1 = 0."""
    a, b = 1, 0
    for k in range(2, m + 1):
        a, b = b, (k - 1) * (a + b)
    return b if m >= 1 else a


@pytest.mark.parametrize("m,count", [(2, 1), (3, 2), (4, 9), (5, 44), (6, 265), (7, 1854), (10, 1334961)])
def test_small_counts_are_exact(m, count):
    assert _derangements(m) == count
    if m == 2:  # one derangement, 0 bits: the bound is clamped at 0
        assert bit_budget_DK_derangements(m, 1, 1.0) == 0.0
    else:
        assert 2 ** log2_derangement_count(m) == pytest.approx(count, rel=1e-12)


@pytest.mark.parametrize("m", [2, 5, 8, 13, 17])
def test_count_is_the_nearest_integer_to_m_factorial_over_e(m):
    assert _derangements(m) == round(math.factorial(m) / math.e)  # floats hold m!/e exactly enough up to m = 17


@pytest.mark.parametrize("m", [8, 20, 64, 128, 171, 1024])
def test_log2_count_matches_the_exact_integer(m):
    exact = _derangements(m)
    assert log2_derangement_count(m) == pytest.approx(math.log2(exact), rel=1e-12)
    # |D_m - m!/e| < 1/(m+1): log2 D_m = log2 m! - log2 e up to e / ((m+1)! ln 2)
    gap = 2.0 ** -min(1000, math.lgamma(m + 2) / math.log(2)) * math.e / math.log(2) + 1e-9
    assert log2_derangement_count(m) == pytest.approx(math.log2(math.factorial(m)) - math.log2(math.e), abs=gap)


def test_bound_closed_form_and_below_all_graphs():
    m, d, b = 64, 16, 32.0
    want = (math.log2(_derangements(m)) / b - 1) / (2 * d)
    assert bit_budget_DK_derangements(m, d, b) == pytest.approx(want, rel=1e-12)
    for m in (64, 128, 256, 512, 1024):  # derangements are a subset of the m-edge graphs: a smaller count
        ratio = bit_budget_DK(m, m, 32, 1.0) / bit_budget_DK_derangements(m, 32, 1.0)
        assert 1.3 < ratio < 1.7
    assert bit_budget_DK_derangements(4, 64, 32.0) == 0.0  # 9 derangements fit in one float32 threshold


@pytest.mark.parametrize("bad", [dict(m=1), dict(m=-3), dict(d_model=0), dict(b=0.0)])
def test_bad_input_names_the_parameter(bad):
    kw = dict(m=64, d_model=16, b=32.0) | bad
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name if name != "b" else "bits"):
        bit_budget_DK_derangements(**kw)
