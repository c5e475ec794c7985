"""Lower bounds on the key budget D_K (chapter *lower bounds*; paper Sec. 9).

Counting argument (Sec. 9, warm-up). There are ``N = m (m - 1)`` ordered
pairs of distinct items, so ``binom(N, m')`` graphs with ``m'`` edges. A
layer whose ``2 d_model D_K`` query/key entries and one threshold are stored
with ``b`` bits each can take at most ``2^(b (2 d_model D_K + 1))`` distinct
states, hence realise at most that many edge sets. Recovering every graph
with ``m'`` edges therefore needs

    b (2 d_model D_K + 1) >= log2 binom(m (m - 1), m'),

i.e. ``D_K >= (log2 binom(N, m') / b - 1) / (2 d_model)``
(:func:`bit_budget_DK`). This holds for any aggregation over heads and any
context length ``ell >= 2``. Theorem 9.2 replaces the bit count by a covering
number under a constant margin, with an unspecified constant ``c(gamma)``.

Since ``m' log2(N/m') <= log2 binom(N, m') <= m' log2(e N / m')`` the bound is
``Theta((m'/d_model) log(m^2/m'))``; its regime forms (:func:`regime_form`)
drop constants: permutations ``m' = m``: ``(m/d_model) log m``; sparse
``m' = O(m^(2-eps))``: ``(m'/d_model) log m``; dense ``m' = Theta(m^2)``:
``m'/d_model``. Logarithms are natural unless named log2.

The scaling-law forms the book fits and compares (chapter *theory*, Theorem 1.1; chapters *permutation sweeps*
and *denser graphs*) live here too, one home for the abscissae of every law: :func:`scaling_x` (m ln m / d_model,
the permutation law), :func:`regular_x` ((r m / d_model) log2 m, the paper's normalisation for r-regular graphs,
E4), :func:`regular_x_bound` ((m' / d_model) log2(m^2 / m'), the lower bound's form with m' = r m); and the
constructions' per-head width law d_k = ceil(C (ln m)^a) (:func:`dk_from_C`) with the constants C each
construction uses by default (:data:`DEFAULT_C`; chapter *constructions*).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

# Default width constants C in d_k = ceil(C (ln m)^a), measured with
# rgr.studies.construction_sweeps.success_rate (chapter *constructions*): the smallest
# round value at which every one of 5-20 seeds separated all pairs, in the
# regime where the construction works at all:
#   one-hot             Bernoulli(1/4), m in {64, 256, 1024}, 20 seeds (proof: C > 171)
#   one-hot-rademacher  Sec. 4's +-1 variant, same sizes
#   compressive         Algorithm 1 at m = 1024, d_model = 512 (d_model ~ 74 ln m), 5 seeds
#   softmax             Algorithm 2 on one-hot inputs, target-containing context rows, 10 seeds
#   general-embedding   Algorithm 4, Gaussian family, Bernoulli(1/20), m = d_model = 256, B = 16
#   general-graph       Algorithm 5, as compressive
# At the book grid's d_model (16-64) the compressive constructions fail at
# every width; see rgr.theory.checks.limit_separation.
DEFAULT_C: dict[str, float] = {
    "one-hot": 80.0,
    "one-hot-rademacher": 20.0,
    "compressive": 160.0,
    "softmax": 2.0,
    "general-embedding": 250.0,
    "general-graph": 160.0,
}


def theorem_B1_C(p: float) -> float:
    """The sufficient constant of Theorem B.1's proof: ``C > max(3/c1, 2/c2)`` with
    ``c1 = p(1-p)^2/8`` and ``c2 = p(1-p)^2 / (2(1+3p))``."""
    c1 = p * (1 - p) ** 2 / 8
    c2 = p * (1 - p) ** 2 / (2 * (1 + 3 * p))
    return max(3 / c1, 2 / c2)


def scaling_x(m: np.ndarray | float, d_model: np.ndarray | float) -> np.ndarray | float:
    """m ln m / d_model (natural log), the abscissa of the permutation scaling law."""
    m = np.asarray(m, float)
    return m * np.log(m) / np.asarray(d_model, float)


def regular_x(r: np.ndarray | float, m: np.ndarray | float, d_model: np.ndarray | float) -> np.ndarray | float:
    """(r m / d_model) log2 m, the normalised budget of r-regular graphs (E4)."""
    m = np.asarray(m, float)
    return np.asarray(r, float) * m / np.asarray(d_model, float) * np.log2(m)


def regular_x_bound(r: np.ndarray | float, m: np.ndarray | float, d_model: np.ndarray | float) -> np.ndarray | float:
    """(m' / d_model) log2(m^2 / m') with m' = r m: the lower bound's form for r-regular graphs (chapter
    *denser graphs*). It equals :func:`regular_x` with log2 m replaced by log2(m / r), which shrinks as the
    graph fills up."""
    m, r = np.asarray(m, float), np.asarray(r, float)
    if np.any(r >= m):
        raise ValueError("r must be below m for the bound's form log2(m / r) to be positive")
    return r * m / np.asarray(d_model, float) * np.log2(m / r)


def dk_from_C(C: float, m: int, log_power: int = 1) -> int:
    """``d_k = ceil(C (ln m)^log_power)`` (at least 1)."""
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C}")
    return max(1, math.ceil(C * math.log(m) ** log_power - 1e-9))



def _check_nonneg_int(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    return int(v)


def n_pairs(m: int) -> int:
    """``N = m (m - 1)``: ordered pairs of distinct items (possible edges)."""
    m = _check_nonneg_int("m", m)
    return m * (m - 1)


def _log2_binom(n: int, k: int) -> float:
    """``log2 binom(n, k)`` through ``lgamma`` (exact to float rounding, any size)."""
    n, k = _check_nonneg_int("n", n), _check_nonneg_int("k", k)
    if k > n:
        raise ValueError(f"k must be <= n, got k={k}, n={n}")
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)) / math.log(2)


def _log2_graph_count(m: int, m_edges: int) -> float:
    """``log2 binom(m (m - 1), m')``: bits needed to name one graph with ``m'`` edges."""
    return _log2_binom(n_pairs(m), m_edges)


def bit_budget_DK(m: int, m_edges: int, d_model: int, b: float) -> float:
    """The real-valued bit-budget bound ``(log2 binom(N, m') / b - 1) / (2 d_model)`` (at least 0)."""
    if not b > 0:
        raise ValueError(f"b (bits per parameter) must be > 0, got {b}")
    if d_model < 1:
        raise ValueError(f"d_model must be >= 1, got {d_model}")
    return max(0.0, (_log2_graph_count(m, m_edges) / b - 1) / (2 * d_model))


def margin_bits(gamma: float) -> float:
    """Bits per parameter the gamma/4-net of the unit ball pays: ``log2(12 / gamma)``."""
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma}")
    return math.log2(12 / gamma)


def margin_bound_DK(m: int, m_edges: int, d_model: int, gamma: float) -> float:
    """Theorem 9.2's lower bound on D_K at normalised margin gamma (explicit net constant 12; measured gamma:
    :func:`rgr.studies.lower_bounds.trained_margins`)."""
    return bit_budget_DK(m, m_edges, d_model, margin_bits(gamma))


def _bit_budget_min_DK(m: int, m_edges: int, d_model: int, b: float) -> int:
    """Smallest integer D_K with ``b (2 d_model D_K + 1) >= log2 binom(m (m-1), m')``."""
    bits = _log2_graph_count(m, m_edges)
    D = max(0, math.ceil((bits / b - 1) / (2 * d_model) - 1e-12))
    while b * (2 * d_model * D + 1) < bits:  # guard against rounding
        D += 1
    return D


def _entropy_bounds(m: int, m_edges: int) -> tuple[float, float]:
    """``(m' log2(N/m'), m' log2(e N/m'))``, which bracket ``log2 binom(N, m')`` (``m' >= 1``)."""
    N = n_pairs(m)
    if not 1 <= m_edges <= N:
        raise ValueError(f"m_edges must be in [1, m(m-1)={N}], got {m_edges}")
    return m_edges * math.log2(N / m_edges), m_edges * math.log2(math.e * N / m_edges)


def regime(m: int, m_edges: int, dense_fraction: float = 0.25) -> str:
    """Which of Sec. 9's regimes a size falls in: "permutation" (``m' = m``),
    "dense" (``m' >= dense_fraction * m (m-1)``) or "sparse" (otherwise).

    The paper's regimes are asymptotic (``Theta(m^2)`` vs ``O(m^(2-eps))``);
    the cut-off ``dense_fraction`` makes them a finite-size label.
    """
    if m_edges == m:
        return "permutation"
    return "dense" if m_edges >= dense_fraction * n_pairs(m) else "sparse"


def regime_form(m: int, m_edges: int, d_model: int, form: str = "general") -> float:
    """Sec. 9's bound shapes, constants dropped: "general" ``(m'/d) ln(m^2/m')``,
    "permutation" ``(m/d) ln m``, "sparse" ``(m'/d) ln m``, "dense" ``m'/d``."""
    if form == "general":
        return m_edges / d_model * math.log(m * m / m_edges)
    if form == "permutation":
        return m / d_model * math.log(m)
    if form == "sparse":
        return m_edges / d_model * math.log(m)
    if form == "dense":
        return m_edges / d_model
    raise ValueError(f"form must be general, permutation, sparse or dense, got {form!r}")


def regime_table(ms: list[int], d_model: int, b: float = 1.0, sparse_exponent: float = 1.5) -> pd.DataFrame:
    """One row per (m, regime): the exact count of bits, its entropy bracket, the
    bit-budget bound and Sec. 9's regime form, for ``m' = m`` (permutation),
    ``m' = round(m^sparse_exponent)`` (sparse) and ``m' = m(m-1)/2`` (dense).

    ``form_ratio`` = bound / regime form: roughly constant down a regime's
    column when the form captures the bound's growth.
    """
    rows = []
    for m in ms:
        sizes = {"permutation": m, "sparse": round(m**sparse_exponent), "dense": n_pairs(m) // 2}
        for name, me in sizes.items():
            lo, hi = _entropy_bounds(m, me)
            bound = bit_budget_DK(m, me, d_model, b)
            form = regime_form(m, me, d_model, name)
            rows.append(dict(m=m, regime=name, m_edges=me, log2_count=_log2_graph_count(m, me),
                             entropy_lo=lo, entropy_hi=hi, d_model=d_model, b=b, bound_DK=bound,
                             regime_form=form, form_ratio=bound / form, label=regime(m, me)))
    return pd.DataFrame(rows)


def bound_rows(cells: pd.DataFrame, bits: tuple[float, ...] = (1.0, 8.0, 32.0)) -> pd.DataFrame:
    """The bit-budget bound for each (m, m_edges, d_model) row of ``cells`` and each ``b``.

    Columns: m, m_edges, d_model, b, bound_DK (real), bound_min_DK (integer),
    general_form ``(m'/d_model) ln(m^2/m')``.
    """
    keys = cells[["m", "m_edges", "d_model"]].drop_duplicates()
    rows = []
    for m, me, d in keys.itertuples(index=False):
        for b in bits:
            rows.append(dict(m=int(m), m_edges=int(me), d_model=int(d), b=b,
                             bound_DK=bit_budget_DK(int(m), int(me), int(d), b),
                             bound_min_DK=_bit_budget_min_DK(int(m), int(me), int(d), b),
                             general_form=regime_form(int(m), int(me), int(d))))
    return pd.DataFrame(rows)


def gap_table(table: pd.DataFrame, b: float = 1.0) -> pd.DataFrame:
    """Constructions' D_K against the bit-budget bound, one row per cell of ``table``.

    ``table`` has the columns of ``data/constructions.csv``; for each cell
    (construction, m, d_model, r) the row gives the smallest D_K found under
    each rule/criterion (NaN if none), the bound at ``b`` bits per parameter,
    the general form ``(m'/d_model) ln(m^2/m')``, and the ratio of the best
    D_K found to the bound.
    """
    keys = ["construction", "m", "d_model", "r", "m_edges"]
    t = table.copy()
    t["col"] = t["rule"] + ", " + t["criterion"]
    wide = t.pivot_table(index=keys, columns="col", values="D_K", aggfunc="first").reset_index()
    wide.columns.name = None
    found = [c for c in wide.columns if c not in keys]
    wide["best_D_K"] = wide[found].min(axis=1)
    wide["bound_DK"] = [bit_budget_DK(int(m), int(me), int(d), b)
                        for m, me, d in zip(wide.m, wide.m_edges, wide.d_model)]
    wide["general_form"] = [regime_form(int(m), int(me), int(d))
                            for m, me, d in zip(wide.m, wide.m_edges, wide.d_model)]
    wide["best_over_bound"] = wide.best_D_K / wide.bound_DK
    return wide


def _log2_derangement_count(m: int) -> float:
    """``log2 D_m``, the number of derangements of ``m`` items (``m >= 2``): the family the permutation
    experiments sample (chapter *permutation sweeps*). ``D_m = m! sum_{k=0}^{m} (-1)^k / k!``, the nearest
    integer to ``m!/e``, so ``log2 D_m = log2 m! - log2 e`` up to a term below ``1/(m+1)!``."""
    m = _check_nonneg_int("m", m)
    if m < 2:
        raise ValueError(f"m must be >= 2 (there is no derangement of {m} item(s)), got {m}")
    partial = math.fsum((-1) ** k / math.factorial(k) for k in range(min(m, 40) + 1))  # 1/e to double precision
    return math.lgamma(m + 1) / math.log(2) + math.log2(partial)


def bit_budget_DK_derangements(m: int, d_model: int, b: float) -> float:
    """:func:`bit_budget_DK` for the derangements of ``m`` items rather than all m-edge graphs:
    ``(log2 D_m / b - 1) / (2 d_model)`` (at least 0). A layer that recovers every derangement needs this
    much; it is the necessary side for the family the experiments actually draw."""
    if not b > 0:
        raise ValueError(f"b (bits per parameter) must be > 0, got {b}")
    if d_model < 1:
        raise ValueError(f"d_model must be >= 1, got {d_model}")
    return max(0.0, (_log2_derangement_count(m) / b - 1) / (2 * d_model))
