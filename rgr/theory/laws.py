"""The scaling-law forms the book fits and compares (chapter *theory*, Theorem 1.1; chapters
*permutation sweeps* and *denser graphs*).

One home for the abscissae of every law:

- :func:`scaling_x` — m ln m / d_model, the permutation law D_K* = Theta(m log m / d_model);
- :func:`regular_x` — (r m / d_model) log2 m, the paper's normalisation for r-regular graphs (E4);
- :func:`regular_x_bound` — (m' / d_model) log2(m^2 / m'), the lower bound's form with m' = r m.
"""

from __future__ import annotations

import numpy as np

__all__ = ["scaling_x", "regular_x", "regular_x_bound"]


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
