"""The scaling-law forms the book fits and compares (chapter *theory*, Theorem 1.1; chapters
*permutation sweeps* and *denser graphs*).

One home for the abscissae of every law:

- :func:`scaling_x` — m ln m / d_model, the permutation law D_K* = Theta(m log m / d_model);
- :func:`regular_x` — (r m / d_model) log2 m, the paper's normalisation for r-regular graphs (E4);
- :func:`regular_x_bound` — (m' / d_model) log2(m^2 / m'), the lower bound's form with m' = r m;

and the constructions' per-head width law d_k = ceil(C (ln m)^a) (:func:`dk_from_C`) with the constants C each
construction uses by default (:data:`DEFAULT_C`; chapter *constructions*).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["scaling_x", "regular_x", "regular_x_bound", "DEFAULT_C", "dk_from_C"]

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
