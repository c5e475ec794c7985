"""Figures of the chapter *the law beside other capacity results* (book/peers.ipynb): the peer's per-width
slopes under their own power fits, the head sweep of their design on the law's axis x, and pal's associative
memory at capacity on that axis."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ...results.peers.dana import POWERS, PowerRefit, power_rss
from ...results.peers.single_head import PalReading
from ...results.peers.sweep import LEVELS
from ..style import MIN_FONT_PT, fig_size, nothing_to_draw, set_style


def plot_power_refit(fit: PowerRefit) -> Figure:
    """Top: their slope of accuracy in H per width d, with their fits a d^p + b at p = 2 (the law's form) and
    p = 3 (their claim). Bottom: the residual sum of squares of that fit against p."""
    set_style()
    d, y = np.array(fit.d, float), np.array(fit.slope)
    fig, (a, b) = plt.subplots(2, 1, figsize=fig_size(4.8, 6.4))  # stacked: readable on a phone
    a.plot(d, y, "o", color="k", ms=4, label="their slope per d")
    dd = np.linspace(d.min(), d.max(), 200)
    for p, ls, name in ((2.0, "-", "p = 2 (law)"), (3.0, "--", "p = 3 (their claim)")):
        ca, cb, _ = power_rss(d, y, p)
        a.plot(dd, ca * dd**p + cb, ls=ls, lw=1.4, label=name)
    a.set_xlabel(r"$d = d_{head} = d_{model}$")
    a.set_ylabel("accuracy per head (slope in H)")
    a.legend(fontsize=MIN_FONT_PT, frameon=False)
    rss = [power_rss(d, y, p)[2] for p in POWERS]
    b.plot(POWERS, rss, color="k", lw=1.4)
    for p, ls in ((2.0, "-"), (3.0, "--")):
        b.axvline(p, color="grey", ls=ls, lw=1)
    b.axvline(fit.best_p, color="C3", lw=1.2, label=f"best p = {fit.best_p:.2f}")
    b.set_yscale("log")
    b.set_xlabel("power p in slope = a d^p + b")
    b.set_ylabel("residual sum of squares")
    b.legend(fontsize=MIN_FONT_PT, frameon=False)
    fig.tight_layout()
    return fig


def plot_head_sweep(curve: pd.DataFrame, series: dict[str, tuple[tuple[int, int], ...]]) -> Figure:
    """Mean test F1 against x = h d_k d_model / (m ln m), one panel per series of cells, one line per cell,
    95% t-intervals across seeds (drawn within [0, 1], F1's range); dotted lines at the levels where the transition
    is read."""
    if curve.empty:
        return nothing_to_draw("no head-sweep runs in this table")
    set_style()
    n = len(series)  # one panel a row: their long x labels and legends need the column's width
    fig, axes = plt.subplots(n, 1, figsize=fig_size(4.8, 3.4 * n), squeeze=False)
    for ax, (name, cells) in zip(axes.flat, series.items()):
        colours = plt.get_cmap("viridis")(np.linspace(0, 0.85, max(len(cells), 1)))
        for colour, (m, d) in zip(colours, cells):
            g = curve[(curve.m == m) & (curve.d_model == d)].sort_values("x")
            if g.empty:
                continue
            err = np.vstack([g["mean"] - g["lo"].clip(lower=0), g["hi"].clip(upper=1) - g["mean"]])  # F1 is in [0, 1]
            ax.errorbar(g["x"], g["mean"], yerr=np.nan_to_num(err), marker="o", ms=3, lw=1.3, capsize=2,
                        color=colour, label=f"m={m}, d={d}")
        for level in LEVELS:
            ax.axhline(level, color="grey", ls=":", lw=1)
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(r"$x = h\,d_k\,d_{model} / (m \ln m)$ with $d_k = d_{model} = d$")
        ax.set_ylabel("test F1 (mean over seeds)")
        ax.set_title(name, fontsize=max(10, MIN_FONT_PT))
        ax.legend(fontsize=MIN_FONT_PT, frameon=False, loc="upper left")  # the curves start low: clear there
    for ax in list(axes.flat)[len(series):]:
        ax.axis("off")
    fig.tight_layout()
    return fig


def _law_n(d: np.ndarray, x: float) -> np.ndarray:
    """N solving N ln N = d^2 / x, per width (bisection in N)."""
    lo, hi = np.full(d.shape, 2.0), d.astype(float) ** 2
    for _ in range(100):
        mid = (lo + hi) / 2
        ok = mid * np.log(mid) < d**2 / x
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return lo


def plot_pal_capacity(caps: pd.DataFrame, reading: PalReading) -> Figure:
    """Top: x at capacity per line against d (bars: from x(N_fail) up to x(N_pass)), one marker per budget; the
    law's form is a horizontal line. Bottom: the capacity N against d in log-log, with the law's form at the
    smallest width's x and the line N = d^2."""
    set_style()
    fig, (a, b) = plt.subplots(2, 1, figsize=fig_size(4.8, 6.4))  # stacked: readable on a phone
    for i, (steps, g) in enumerate(sorted(caps.dropna(subset=["N_pass"]).groupby("steps"))):
        jitter = g.d * (1 + 0.04 * (g.seed - g.seed.mean()) + 0.1 * i)
        err = np.vstack([g.x_pass - g.x_fail.fillna(g.x_pass), np.zeros(len(g))])
        a.errorbar(jitter, g.x_pass, yerr=err, fmt="o" if i == 0 else "s", ms=4, capsize=2, lw=1, color=f"C{i}",
                   mfc="none" if i else None, label=f"{steps:,} Adam steps")
        b.plot(jitter, g.N_pass, "o" if i == 0 else "s", ms=4, color=f"C{i}", mfc="none" if i else None,
               label=f"{steps:,} steps")
    a.axhline(reading.x_at_d_min, color="grey", ls="--", lw=1, label="the law: x* fixed")
    dd = np.geomspace(reading.d_min, reading.d_max, 50)
    b.plot(dd, _law_n(dd, reading.x_at_d_min), "--", color="grey", lw=1, label="the law: N ln N = d^2 / x*")
    b.plot(dd, dd**2, ":", color="k", lw=1, label="N = d^2")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("embedding width d (W is d x d)")
        ax.legend(fontsize=MIN_FONT_PT, frameon=False)
    a.set_ylabel(r"$x^* = d^2 / (N \ln N)$ at capacity")
    b.set_yscale("log")
    b.set_ylabel("capacity N (largest N stored)")
    fig.tight_layout()
    return fig
