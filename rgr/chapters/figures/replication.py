"""Figure of the chapter *Does it replicate?*: the book's D_K* per cell against the paper's law."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ...results.replication.verdicts import LOG_BASES
from ..style import MIN_FONT_PT, fig_size, plain_log_axes, set_style

_M_MARKERS = ("o", "s", "^", "D", "v", "P", "X")  # one marker per m, smallest m first


def plot_law_vs_paper(cells: pd.DataFrame, paper_slope: float, label: str = "paper's fit") -> Figure:
    """The book's D_K* per (m, d_model) cell against m ln m / d_model, log-log (the cells span two decades; bars:
    optimistic to conservative), colour by d_model and marker by m (no per-point labels to collide), with the
    paper's line D_K* = c m log m / d_model drawn twice, reading its log as ln and as log2; the legend below the
    axes.

    ``cells``: :func:`rgr.results.thresholds.thresholds` (natural-log ``x_law``); ``paper_slope``: c.
    """
    if not len(cells):
        raise ValueError("cells is empty: nothing to plot")
    set_style()
    ok = cells[cells["D_K_star"].notna()]
    ds = sorted(int(d) for d in ok["d_model"].unique())
    ms = sorted(int(m) for m in ok["m"].unique())
    colour = dict(zip(ds, sns.color_palette("colorblind", len(ds))))
    marker = {m: _M_MARKERS[i % len(_M_MARKERS)] for i, m in enumerate(ms)}
    fig, ax = plt.subplots(figsize=fig_size(4.8, 4.6))
    for _, r in ok.iterrows():
        y = float(r["D_K_star"])
        lo = float(r["D_K_opt"]) if pd.notna(r["D_K_opt"]) else y
        hi = float(r["D_K_cons"]) if pd.notna(r["D_K_cons"]) else y
        ax.errorbar([r["x_law"]], [y], yerr=[[y - lo], [hi - y]], fmt=marker[int(r["m"])], ms=6, capsize=2,
                    color=colour[int(r["d_model"])])
    x = ok["x_law"].astype(float)
    xs = np.geomspace(float(x.min()) / 1.3, float(x.max()) * 1.3, 50)
    lines = []
    for base, ls in (("ln", "-"), ("log2", "--")):
        ax.plot(xs, paper_slope * LOG_BASES[base] * xs, "k", ls=ls, lw=1)
        log = "ln" if base == "ln" else "log$_2$"
        said = f"{label}: {paper_slope:g} m {log} m / $d_{{model}}$"
        lines.append(Line2D([], [], color="k", ls=ls, lw=1, label=said))
    plain_log_axes(ax)
    ax.set_xlabel(r"$m \ln m / d_\mathrm{model}$")
    ax.set_ylabel(r"$D_K^*$")
    colours = [Line2D([], [], ls="", marker="o", color=colour[d], label=f"$d_{{model}}$ = {d}") for d in ds]
    markers = [Line2D([], [], ls="", marker=marker[m], color="0.35", mfc="none", label=f"m = {m}") for m in ms]
    fig.tight_layout()
    below = dict(loc="upper center", fontsize=MIN_FONT_PT, frameon=False, handletextpad=0.3, columnspacing=1.0)
    fig.legend(handles=lines, bbox_to_anchor=(0.5, 0.02), ncol=1, **below)
    fig.legend(handles=colours, bbox_to_anchor=(0.5, -0.085), ncol=len(colours), **below)
    fig.legend(handles=markers, bbox_to_anchor=(0.5, -0.14), ncol=len(markers), **below)
    return fig
