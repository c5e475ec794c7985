"""Figure of the chapter *Does it replicate?*: the book's D_K* per cell against the paper's law."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...results.replication.verdicts import LOG_BASES
from ..style import MIN_FONT_PT, fig_size, set_style

__all__ = ["plot_law_vs_paper"]


def plot_law_vs_paper(cells: pd.DataFrame, paper_slope: float, label: str = "paper's fit") -> Figure:
    """The book's D_K* per (m, d_model) cell against m ln m / d_model (bars: optimistic to conservative),
    with the paper's line D_K* = c m log m / d_model drawn twice, reading its log as ln and as log2.

    ``cells``: :func:`rgr.results.thresholds.thresholds` (natural-log ``x_law``); ``paper_slope``: c.
    """
    if not len(cells):
        raise ValueError("cells is empty: nothing to plot")
    set_style()
    ok = cells[cells["D_K_star"].notna()]
    fig, ax = plt.subplots(figsize=fig_size(6.4, 4.4))
    for d, g in ok.groupby("d_model"):
        y = g["D_K_star"].astype(float).to_numpy()
        lo = g["D_K_opt"].astype(float).to_numpy()
        hi = g["D_K_cons"].astype(float).fillna(g["D_K_star"].astype(float)).to_numpy()
        ax.errorbar(g["x_law"], y, yerr=np.vstack([y - lo, hi - y]), fmt="o", capsize=3,
                    label=f"book, $d_{{model}}$={int(d)}")
        for x_, y_, m in zip(g["x_law"], y, g["m"]):
            ax.annotate(f"{int(m)}", (x_, y_), textcoords="offset points", xytext=(4, -10), fontsize=MIN_FONT_PT,
                        color="gray")
    xs = np.linspace(0, float(cells["x_law"].max()) * 1.05, 50)
    for base, ls in (("ln", "-"), ("log2", "--")):
        ax.plot(xs, paper_slope * LOG_BASES[base] * xs, "k", ls=ls, lw=1,
                label=f"{label}: {paper_slope:g} m {'ln' if base == 'ln' else 'log$_2$'} m / $d_{{model}}$")
    ax.set_xlabel(r"$m \ln m / d_\mathrm{model}$")
    ax.set_ylabel(r"$D_K^*$")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return fig
