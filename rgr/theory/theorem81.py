"""Theorem 8.1's conditions made explicit, and the book's sufficient condition for its proof (chapter *constructions*).

Theorem 8.1 (Algorithm 2, softmax) holds "for absolute constants C, c_0, C_ell, gamma" that it does not give.
Its proof does pin two of them from below, and a number quoted as an instance of the theorem must respect
those bounds:

- Step 5(i) needs ``gamma >= 3`` with ``gamma = sqrt(C)/2 - 1``, so ``C >= 64``: the width must satisfy
  ``d_k >= 64 (ln m)^2`` (:data:`PROOF_C`);
- Step 5(ii) needs ``C_ell >= 8 (1 + 2 C_2)`` with ``C_2 > 0``, so ``C_ell > 8``: the context must satisfy
  ``ell > 8 max(h, ln m)`` (:data:`_PROOF_C_ELL`), and ``ell <= m``;
- ``h = m / d_model`` heads; ``d_model >= c_0 ln m`` with ``c_0`` not given (not checked).

These are *necessary* for a row to be an instance (the unknown ``C_2`` may ask for a longer context still).

The book's repair of the proof's gap (:func:`rgr.studies.theory_checks.theorem81_tables` measures it) is a
*sufficient condition*, sketched, not proved: keep the leakage logit bounded, ``d_k ln m / d_model <= c``;
together with ``d_k >= C (ln m)^2`` that needs ``d_model >= (C/c) (ln m)^3``. ``c`` is the book's choice
(:data:`REPAIR_C`; the paper has no such constant); written as ``d_k (B / d_model^2 + 1 / d_model) ln m <= c'``, the
leakage logit's variance times the union-bound log, it is ``c = c' / 2`` at ``B = d_model``.
:func:`repair_smallest_m` says where that window opens at the proof's C with the book's c.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

PROOF_C = 64.0  # d_k >= C (ln m)^2 with gamma = sqrt(C)/2 - 1 >= 3 (Theorem 8.1, Step 5(i))
_PROOF_C_ELL = 8.0  # ell >= C_ell max(h, ln m) with C_ell >= 8 (1 + 2 C_2), C_2 > 0 (Step 5(ii)): ell > 8 max(h, ln m)
REPAIR_C = 0.5  # c in the sufficient condition d_k ln m / d_model <= c: the book's choice, not the paper's


def _check_cell(m: int, d_model: int) -> None:
    for name, v in (("m", m), ("d_model", d_model)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    if m < 2:
        raise ValueError(f"m must be >= 2, got {m}")
    if m % d_model:
        raise ValueError(f"Theorem 8.1 has h = m / d_model heads: d_model must divide m, got m={m}, d_model={d_model}")


@dataclass(frozen=True)
class _Theorem81Bounds:
    """The explicit lower bounds Theorem 8.1's proof puts on one cell (m, d_model).

    ``d_k_min``: the smallest width the proof's ``C >= 64`` allows; ``ell_min``: the shortest context with
    ``ell > 8 max(h, ln m)`` (a context holds at most m items).
    """

    d_k_min: int
    ell_min: int


def theorem81_bounds(m: int, d_model: int) -> _Theorem81Bounds:
    """Theorem 8.1's explicit bounds at (m, d_model) (see :class:`_Theorem81Bounds`)."""
    _check_cell(m, d_model)
    h, ln_m = m // d_model, math.log(m)
    ell_min = math.floor(_PROOF_C_ELL * max(h, ln_m)) + 1
    return _Theorem81Bounds(d_k_min=math.ceil(PROOF_C * ln_m**2), ell_min=ell_min)


def inside_theorem81(m: int, d_model: int, d_k: int, ell: int) -> bool:
    """Whether a row (m, d_model, d_k, ell) meets every bound the proof makes explicit (``c_0`` aside)."""
    b = theorem81_bounds(m, d_model)
    return d_k >= b.d_k_min and b.ell_min <= ell <= m


def theorem81_widths(m: int, d_model: int, n: int = 3) -> list[int]:
    """``n`` widths inside the theorem: its smallest ``d_k`` and doublings of it."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    lo = theorem81_bounds(m, d_model).d_k_min
    return [lo * 2**i for i in range(n)]


def inside_rows(df: pd.DataFrame) -> pd.Series:
    """Per row of a table with columns m, d_model, h, d_k, ell: :func:`inside_theorem81`, and ``h = m / d_model``."""
    ok = [m % d == 0 and h == m // d and inside_theorem81(int(m), int(d), int(k), int(e))
          for m, d, h, k, e in zip(df.m, df.d_model, df.h, df.d_k, df.ell)]
    return pd.Series(ok, index=df.index, dtype=bool)


def _repair_min_d_model(m: int, C: float = PROOF_C, c: float = REPAIR_C) -> float:
    """The sufficient condition's ``d_model``: ``(C / c) (ln m)^3`` (the window
    ``C (ln m)^2 <= d_k <= c d_model / ln m``)."""
    if m < 2 or C <= 0 or c <= 0:
        raise ValueError(f"need m >= 2, C > 0, c > 0, got m={m}, C={C}, c={c}")
    return (C / c) * math.log(m) ** 3


def repair_smallest_m(C: float = PROOF_C, c: float = REPAIR_C, h: int = 2, max_log2: int = 40) -> int:
    """The smallest ``m = 2^k`` at which ``d_model = m / h`` (h heads, compression) meets the sufficient condition's
    ``d_model >= (C / c) (ln m)^3``.

    -1 if none up to ``2^max_log2``.
    """
    if h < 2:
        raise ValueError(f"h must be >= 2 (compression: d_model < m), got {h}")
    for k in range(1, max_log2 + 1):
        m = 2**k
        if m >= h and m / h >= _repair_min_d_model(m, C, c):
            return m
    return -1


def leakage_logit_sd(d_k: int, B: int, d_model: int) -> float:
    """Closed-form sd of the leakage logit ``sqrt(d_k) M^k_ij`` over Gaussian unit-norm embeddings.

    Generic pair: ``sqrt(d_k B) / d_model`` (when j is one of head k's targets the term
    ``<x_i, x_{pi^-1(j)}>`` adds variance ``d_k / d_model``, not counted here).
    """
    for name, v in (("d_k", d_k), ("B", B), ("d_model", d_model)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    return math.sqrt(d_k * B / d_model**2)


def kappa(d_k: int, m: int, d_model: int) -> float:
    """``d_k ln m / d_model``: the leakage logit's variance (at B = d_model) times the union-bound log."""
    if m < 2 or d_model < 1 or d_k < 1:
        raise ValueError(f"need m >= 2, d_model >= 1, d_k >= 1, got m={m}, d_model={d_model}, d_k={d_k}")
    return d_k * math.log(m) / d_model


def repaired_dk_window(m: int, d_model: int, C: float = 2.0, c: float = 0.5) -> tuple[float, float]:
    """The widths the repaired Theorem 8.1 allows: ``[C (ln m)^2, c d_model / ln m]`` (empty if lo > hi)."""
    if m < 2 or d_model < 1 or C <= 0 or c <= 0:
        raise ValueError(f"need m >= 2, d_model >= 1, C > 0, c > 0, got {m}, {d_model}, {C}, {c}")
    return C * math.log(m) ** 2, c * d_model / math.log(m)
