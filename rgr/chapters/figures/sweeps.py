"""Deprecated alias: the figures moved to one module per chapter,
:mod:`rgr.chapters.figures.permutation_sweeps` and :mod:`rgr.chapters.figures.denser_graphs`.

Kept only while chapter *softmax* still imports ``figures.sweeps`` (its ``plot_f1_curves``); remove it
once that chapter imports from ``permutation_sweeps``.
"""

from .denser_graphs import plot_h_star_vs_r, plot_regular_forms, plot_regular_law
from .permutation_sweeps import (
    plot_diagonal,
    plot_dk_star_grid,
    plot_f1_curves,
    plot_h_star,
    plot_heads_law,
    plot_scaling_law,
)

__all__ = [
    "plot_diagonal",
    "plot_dk_star_grid",
    "plot_f1_curves",
    "plot_h_star",
    "plot_h_star_vs_r",
    "plot_heads_law",
    "plot_regular_forms",
    "plot_regular_law",
    "plot_scaling_law",
]
