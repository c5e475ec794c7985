"""Figures of chapter *denser graphs* (paper Figs. 11-13, protocol E4); Fig. 11 is
:func:`rgr.chapters.figures.permutation_sweeps.plot_f1_curves` on the E4 table.

Each function takes the per-cell thresholds of :func:`rgr.results.thresholds.thresholds` (``law="regular"``)
and returns a Figure; with no out-degree at the target the panel says so instead of failing.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...protocol import F1_TARGET
from ...results.denser_graphs import PAPER_R_MAX, FormFit
from ...theory.bounds import regular_x, regular_x_bound
from ..style import MIN_FONT_PT, fig_size, nothing_to_draw, plain_log_axes, set_style
from .permutation_sweeps import plot_f1_curves

__all__ = ["plot_f1_curves", "plot_h_star_vs_r", "plot_regular_forms", "plot_regular_law"]

_STYLE = {16: ("k--", "r <= 16 (the paper's range)"), None: ("k:", "every r")}


def _reached(cells: pd.DataFrame) -> pd.DataFrame:
    return cells[cells["D_K_star"].notna()].sort_values("r")


def plot_regular_law(cells: pd.DataFrame, fits: Sequence[FormFit] = ()) -> Figure:
    """Fig. 12: D_K* against x = (r m / d_model) log2 m across r, with one-parameter fits D_K* = c x
    (``fits``: :class:`rgr.results.denser_graphs.FormFit` of the log2 m form, e.g. over r <= 16 and over all r)."""
    set_style()
    ok = _reached(cells)
    fig, ax = plt.subplots(figsize=fig_size(5.8, 4.2))
    if not len(ok):
        nothing_to_draw(f"no out-degree reached mean F1 {F1_TARGET} at any tested budget", ax)
        return fig
    y = ok["D_K_star"].astype(float)
    err = np.vstack([y - ok["D_K_opt"].astype(float), ok["D_K_cons"].astype(float) - y])
    ax.errorbar(ok["x_law"], y, yerr=np.nan_to_num(np.clip(err, 0, None)), fmt="o", capsize=3, color="tab:blue")
    for _, row in ok.iterrows():
        ax.annotate(f"r={row['r']}", (row["x_law"], row["D_K_star"]), textcoords="offset points", xytext=(5, -10),
                    fontsize=MIN_FONT_PT)
    x = ok["x_law"].astype(float)
    xs = np.geomspace(float(x.min()) / 1.2, float(x.max()) * 1.2, 20)
    for f in fits:
        if f.form != "log2m" or not f.n:
            continue
        style, what = _STYLE.get(f.r_max if f.r_max == PAPER_R_MAX else None)
        ax.plot(xs, f.c * xs, style, lw=1, label=f"$D_K^* = {f.c:.2f}\\,x$, {what} ($R^2$={f.r2:.2f}, n={f.n})")
    plain_log_axes(ax)  # x and D_K* span more than a decade over r
    ax.set_xlabel(r"$x = (r\,m / d_{model}) \log_2 m$")
    ax.set_ylabel(r"$D_K^*$")
    fig.tight_layout()
    if fits:  # under the axes, clear of the points and their labels
        fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
                   fontsize=MIN_FONT_PT)
    return fig


def plot_regular_forms(cells: pd.DataFrame) -> Figure:
    """D_K* divided by two candidate laws against r: x = (r m / d_model) log2 m (the fitted form) and
    (r m / d_model) log2(m^2 / m') (the lower bound's form, m' = r m), with bars from the optimistic to the
    conservative threshold. A flat line is a law that holds across densities with one constant; the dotted
    vertical line marks the end of the paper's range r <= 16."""
    set_style()
    ok = _reached(cells)
    fig, ax = plt.subplots(figsize=fig_size(5.4, 3.8))
    if not len(ok):
        nothing_to_draw(f"no out-degree reached mean F1 {F1_TARGET} at any tested budget", ax)
        return fig
    y = ok["D_K_star"].astype(float)
    lo, hi = ok["D_K_opt"].astype(float), ok["D_K_cons"].astype(float)
    forms = [
        (regular_x(ok["r"], ok["m"], ok["d_model"]), r"$D_K^* \,/\, [(r m/d_{model}) \log_2 m]$", "tab:blue"),
        (regular_x_bound(ok["r"], ok["m"], ok["d_model"]), r"$D_K^* \,/\, [(m'/d_{model}) \log_2(m^2/m')]$",
         "tab:green"),
    ]
    for x, label, colour in forms:
        err = np.vstack([(y - lo) / x, (hi - y) / x])
        ax.errorbar(ok["r"], y / x, yerr=np.nan_to_num(np.clip(err, 0, None)), marker="o", capsize=3, color=colour,
                    label=label)
    if ok["r"].max() > PAPER_R_MAX:
        ax.axvline(PAPER_R_MAX, color="gray", ls=":", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("r (out-degree)")
    ax.set_ylabel("normalised threshold")
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig


def plot_h_star_vs_r(cells: pd.DataFrame) -> Figure:
    """Fig. 13: h* against r, with the trend r m / d_model scaled to the first point."""
    set_style()
    ok = cells[cells["h_star"].notna()].sort_values("r")
    fig, ax = plt.subplots(figsize=fig_size(5.4, 4))
    if not len(ok):
        nothing_to_draw(f"no out-degree reached mean F1 {F1_TARGET}: no h* to plot", ax)
        return fig
    lo, hi = ok["h_lo"].astype(float), ok["h_hi"].astype(float)
    hs = ok["h_star"].astype(float)
    ax.errorbar(ok["r"], hs, yerr=np.vstack([hs - lo, hi - hs]), fmt="o", capsize=3, color="tab:blue",
                label="$h^*$ (tied range)")
    trend = ok["r"] * ok["m"] / ok["d_model"]
    scale = hs.iloc[0] / trend.iloc[0]
    ax.plot(ok["r"], trend * scale, "k--", lw=1, label=r"$\propto r\,m / d_{model}$")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("r (out-degree)")
    ax.set_ylabel("$h^*$")
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig
