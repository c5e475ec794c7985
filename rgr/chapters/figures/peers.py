"""Figures of the chapter *the law beside other capacity results* (book/peers.ipynb): the peer's per-width
slopes under their own power fits, and the head sweep of their design on the law's axis x."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ...results.peers.dana import POWERS, PowerRefit, power_rss
from ...results.peers.sweep import LEVELS
from ..style import panel_grid, set_style

__all__ = ["plot_power_refit", "plot_head_sweep"]


def _empty(message: str) -> Figure:
    set_style()
    fig, ax = plt.subplots(figsize=(6, 1.6))
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=10)
    return fig


def plot_power_refit(fit: PowerRefit) -> Figure:
    """Left: their slope of accuracy in H per width d, with their fits a d^p + b at p = 2 (the law's form) and
    p = 3 (their claim). Right: the residual sum of squares of that fit against p."""
    set_style()
    d, y = np.array(fit.d, float), np.array(fit.slope)
    fig, (a, b) = plt.subplots(1, 2, figsize=(7.6, 3.3))
    a.plot(d, y, "o", color="k", ms=4, label="their slope per d")
    dd = np.linspace(d.min(), d.max(), 200)
    for p, ls, name in ((2.0, "-", "p = 2 (law)"), (3.0, "--", "p = 3 (their claim)")):
        ca, cb, _ = power_rss(d, y, p)
        a.plot(dd, ca * dd**p + cb, ls=ls, lw=1.4, label=name)
    a.set_xlabel(r"$d = d_{head} = d_{model}$")
    a.set_ylabel("accuracy per head (slope in H)")
    a.legend(fontsize=9, frameon=False)
    rss = [power_rss(d, y, p)[2] for p in POWERS]
    b.plot(POWERS, rss, color="k", lw=1.4)
    for p, ls in ((2.0, "-"), (3.0, "--")):
        b.axvline(p, color="grey", ls=ls, lw=1)
    b.axvline(fit.best_p, color="C3", lw=1.2, label=f"best p = {fit.best_p:.2f}")
    b.set_yscale("log")
    b.set_xlabel("power p in slope = a d^p + b")
    b.set_ylabel("residual sum of squares")
    b.legend(fontsize=9, frameon=False)
    fig.tight_layout()
    return fig


def plot_head_sweep(curve: pd.DataFrame, series: dict[str, tuple[tuple[int, int], ...]]) -> Figure:
    """Mean test F1 against x = h d_k d_model / (m ln m), one panel per series of cells, one line per cell,
    95% t-intervals across seeds; dotted lines at the levels where the transition is read."""
    if curve.empty:
        return _empty("no head-sweep runs in this table")
    set_style()
    nrows, ncols, size = panel_grid(len(series), (3.9, 3.4))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    for ax, (name, cells) in zip(axes.flat, series.items()):
        colours = plt.get_cmap("viridis")(np.linspace(0, 0.85, max(len(cells), 1)))
        for colour, (m, d) in zip(colours, cells):
            g = curve[(curve.m == m) & (curve.d_model == d)].sort_values("x")
            if g.empty:
                continue
            err = np.vstack([g["mean"] - g["lo"], g["hi"] - g["mean"]])
            ax.errorbar(g["x"], g["mean"], yerr=np.nan_to_num(err), marker="o", ms=3, lw=1.3, capsize=2,
                        color=colour, label=f"m={m}, d={d}")
        for level in LEVELS:
            ax.axhline(level, color="grey", ls=":", lw=1)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(r"$x = h\,d_k\,d_{model} / (m \ln m)$, $d_k = d_{model} = d$")
        ax.set_ylabel("test F1 (mean over seeds)")
        ax.set_title(name, fontsize=10)
        ax.legend(fontsize=8, frameon=False, loc="lower right")
    for ax in list(axes.flat)[len(series):]:
        ax.axis("off")
    fig.tight_layout()
    return fig
