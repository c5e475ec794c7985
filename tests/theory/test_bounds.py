"""Lower bounds (Sec. 9) against closed forms."""

import math

import pandas as pd
import pytest

from rgr.studies.construction_search import build
from rgr.theory.bounds import (
    DEFAULT_C,
    bit_budget_DK,
    bound_rows,
    dk_from_C,
    n_pairs,
    regime,
    regime_form,
    regime_table,
)


def log2_count(m: int, m_edges: int) -> float:
    """``log2 binom(m (m - 1), m')`` read off the public bound: at ``d_model = 1`` and ``b = 1`` bit the bound is
    ``(log2 binom(N, m') - 1) / 2`` wherever the count is at least 1 bit (0 below)."""
    return 2 * bit_budget_DK(m, m_edges, 1, 1.0) + 1


def _bracket(m: int, m_edges: int):
    """The row of :func:`regime_table` whose sparse size is ``m'`` (exponent log m' / log m): its exact count and
    its entropy bracket."""
    t = regime_table([m], 1, sparse_exponent=math.log(m_edges) / math.log(m))
    row = t[t.regime == "sparse"].iloc[0]
    assert row.m_edges == m_edges
    return row.entropy_lo, row.log2_count, row.entropy_hi


@pytest.mark.parametrize("m,k", [(3, 2), (4, 6), (5, 1), (8, 8), (10, 45), (15, 17), (30, 435)])
def test_the_count_matches_math_comb(m, k):
    assert log2_count(m, k) == pytest.approx(math.log2(math.comb(m * (m - 1), k)), abs=1e-9)


def test_graph_count_is_exact_on_small_m():
    for m in (2, 3, 5, 8):
        for me in range(0, n_pairs(m) + 1, 3):
            want = math.log2(math.comb(m * (m - 1), me))
            assert bit_budget_DK(m, me, 1, 1.0) == pytest.approx(max(0.0, (want - 1) / 2), abs=1e-9)


@pytest.mark.parametrize("m,me", [(64, 64), (256, 4096), (512, 2000), (1024, 523776)])
def test_entropy_bracket(m, me):
    lo, count, hi = _bracket(m, me)
    assert lo <= count <= hi
    assert (lo, hi) == pytest.approx((me * math.log2(m * (m - 1) / me), me * math.log2(math.e * m * (m - 1) / me)))


def test_bit_budget_is_the_smallest_integer_meeting_the_count():
    for m, me, d, b in [(64, 64, 16, 1), (256, 256, 32, 8), (128, 4096, 32, 1), (20, 380, 4, 3), (8, 1, 64, 32)]:
        bits = math.log2(math.comb(m * (m - 1), me))
        D = int(bound_rows(pd.DataFrame(dict(m=[m], m_edges=[me], d_model=[d])), bits=(b,)).bound_min_DK[0])
        assert b * (2 * d * D + 1) >= bits
        assert D == 0 or b * (2 * d * (D - 1) + 1) < bits
        assert D == math.ceil(bit_budget_DK(m, me, d, b) - 1e-9) or D == 0
    assert bit_budget_DK(64, 64, 16, 1) == pytest.approx((math.log2(math.comb(64 * 63, 64)) - 1) / 32)


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
    cells = pd.DataFrame(dict(m=[64, 64], m_edges=[64, 64], d_model=[16, 16]))
    rows = bound_rows(cells, bits=(1.0, 8.0))
    assert len(rows) == 2 and (rows.bound_min_DK >= rows.bound_DK).all()


def upper_bound(
    construction: str,
    m: int,
    d_model: int | None = None,
    *,
    m_edges: int | None = None,
    delta: int = 1,
    C: float | None = None,
    B: int | None = None,
) -> int:
    """D_K = h d_k of a construction at width constant C (default: :data:`rgr.theory.bounds.DEFAULT_C`): the
    formula the constructions build.

    ``one-hot``: ``ceil(C ln m)`` (one head); ``compressive``:
    ``ceil(m/d_model) ceil(C ln m)``; ``softmax``: ``ceil(m/d_model) ceil(C (ln m)^2)``;
    ``general-embedding``: ``ceil(m/B) ceil(C ln m)``; ``general-graph``:
    ``(ceil(m'/d_model) + Delta) ceil(C ln m)`` (Algorithm 5's head bound).
    These are the formulas; :func:`rgr.studies.construction_search.min_dk` measures
    the widths that actually suffice.
    """
    if construction not in DEFAULT_C:
        raise ValueError(f"construction must be one of {sorted(DEFAULT_C)}, got {construction!r}")
    C = DEFAULT_C[construction] if C is None else C
    if construction in ("one-hot", "one-hot-rademacher"):
        return dk_from_C(C, m)
    if d_model is None:
        raise ValueError(f"{construction} needs d_model")
    if construction == "compressive":
        return math.ceil(m / d_model) * dk_from_C(C, m)
    if construction == "softmax":
        return math.ceil(m / d_model) * dk_from_C(C, m, 2)
    if construction == "general-embedding":
        if B is None:
            raise ValueError("general-embedding needs the block size B")
        return math.ceil(m / B) * dk_from_C(C, m)
    if construction == "general-graph":
        if m_edges is None:
            raise ValueError("general-graph needs m_edges")
        return (math.ceil(m_edges / d_model) + delta) * dk_from_C(C, m)
    raise AssertionError(construction)  # pragma: no cover


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
    with pytest.raises(ValueError, match="k must be <= n"):
        bit_budget_DK(2, 3, 1, 1.0)  # 3 edges among the 2 ordered pairs of 2 items
    with pytest.raises(ValueError, match="m_edges must be in"):
        regime_table([8], 1, sparse_exponent=2.5)  # a sparse size beyond the 56 pairs
    with pytest.raises(ValueError):
        bit_budget_DK(10, 10, 2, 0)
