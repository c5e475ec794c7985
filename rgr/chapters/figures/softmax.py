"""Figures of the chapter *softmax* (book/softmax.ipynb): paper Fig. 5, the threshold shift, Algorithm 2 at
the trained cells, and the linear-sum ablation. Every function sets the book's style and draws a note instead
of failing when its table has nothing to show (the smoke preset, a checkout with no tables)."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...protocol import F1_TARGET
from ...results.thresholds import curves
from ..style import (
    MAX_WIDTH_IN,
    MIN_FONT_PT,
    errorbar_curve,
    head_color,
    legend_below,
    nothing_to_draw,
    panel_grid,
    set_style,
)
from .permutation_sweeps import plot_f1_curves


def plot_softmax_f1(runs: pd.DataFrame) -> Figure:
    """Paper's Fig. 5: the softmax model's mean test F1 against D_K per h, one panel per cell."""
    if runs.empty:
        return nothing_to_draw("no softmax runs in this table")
    return plot_f1_curves(runs, ncols=3, title="softmax per head, heads summed")


def plot_threshold_shift(max_cells: pd.DataFrame, soft_cells: pd.DataFrame) -> Figure:
    """D_K* of the max-over-heads and the softmax model in the cells both measured, with the ratio
    against ln m (Theorem 8.1's extra factor).

    Markers: D_K* (central); bars: its bracket on the threshold ladder, from the optimistic to the
    conservative reading (``D_K_opt``, ``D_K_cons`` of :func:`rgr.results.thresholds.thresholds`): the
    measurement's own noise (seeds, ladder steps). A model that never reached the target has no marker. The chapter
    passes max-over-heads thresholds read on :func:`rgr.results.thresholds.paired_seeds` (the softmax table's seeds).
    """
    both = max_cells.merge(soft_cells, on=["m", "d_model", "r"], suffixes=("_max", "_soft"))
    both = both.sort_values(["m", "d_model"]).reset_index(drop=True)
    if both.empty:
        return nothing_to_draw("no cell measured by both the max-over-heads and the softmax table")
    set_style()
    fig, ax = plt.subplots(figsize=(min(max(5, 1.3 * len(both) + 2), MAX_WIDTH_IN), 3.8))
    x = np.arange(len(both))
    for side, dx, label, colour in (("max", -0.12, "max over heads", "tab:blue"),
                                    ("soft", 0.12, "softmax, summed", "tab:orange")):
        y = both[f"D_K_star_{side}"].astype(float)
        lo = both[f"D_K_opt_{side}"].astype(float).fillna(y)
        hi = both[f"D_K_cons_{side}"].astype(float).fillna(y)
        err = np.clip(np.vstack([y - lo, hi - y]), 0, None)
        ax.errorbar(x + dx, y, yerr=np.nan_to_num(err), fmt="o", ms=6, capsize=3, color=colour, label=label)
    for i, row in both.iterrows():
        if pd.notna(row["D_K_star_max"]) and pd.notna(row["D_K_star_soft"]):
            r = float(row["D_K_star_soft"]) / float(row["D_K_star_max"])
            top = float(np.nanmax([row["D_K_cons_soft"], row["D_K_star_soft"]]))
            ax.annotate(f"x{r:.1f}\n(ln m={math.log(row['m']):.1f})", (i + 0.12, top), xytext=(0, 4),
                        textcoords="offset points", ha="center", va="bottom", fontsize=MIN_FONT_PT)
    ax.set_yscale("log", base=2)
    ax.margins(y=0.25)
    ax.set_xlim(-0.6, len(both) - 0.4)
    ax.set_xticks(x, [f"({m},{d})" for m, d in zip(both["m"], both["d_model"])])
    ax.set_xlabel(r"cell $(m, d_{model})$")
    ax.set_ylabel(r"$D_K^*$ (bars: ladder bracket)")
    ax.legend(frameon=False, fontsize=9, loc="upper left")
    fig.tight_layout()
    return fig


def plot_linear_ablation(linear: pd.DataFrame, maxed: pd.DataFrame) -> Figure:
    """Per cell: F1 vs D_K of heads summed linearly (every h), beside max-over-heads with h = 1 and
    with the cell's best h at any budget up to D_K (an envelope)."""
    if linear.empty:
        return nothing_to_draw("no linear-sum runs in this table")
    set_style()
    sl, sm = curves(linear), curves(maxed)
    keys = sorted({(int(m), int(d)) for m, d in sl[["m", "d_model"]].itertuples(index=False)})
    nrows, ncols, size = panel_grid(len(keys), (3.6, 3.0))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False, sharey=True)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    for ax, (m, d) in zip(axes.flat, keys):
        for h, g in sl[(sl.m == m) & (sl.d_model == d)].groupby("h"):
            errorbar_curve(ax, g, color=head_color(int(h)), ls="--", label=f"linear sum, h={int(h)}")
        cm = sm[(sm.m == m) & (sm.d_model == d)]
        if len(cm):
            errorbar_curve(ax, cm[cm.h == 1], color="k", label="max, h=1")
            # best head count at each budget, as an envelope over budgets <= D_K: the ladders of large h stop
            # earlier than h = 1's, so a plain per-budget maximum would fall back to h = 1 at the top
            best = cm.groupby("D_K")["mean"].max().sort_index().cummax()
            ax.plot(best.index, best.values, color="tab:red", lw=2.2, alpha=0.7, label="max, best h (budget <= D_K)")
        ax.set_xscale("log", base=2)
        ax.set_title(f"m={m}, $d_{{model}}$={d}", fontsize=10)
        ax.set_xlabel(r"$D_K = h\,d_k$")
    for ax in axes[:, 0]:
        ax.set_ylabel("test micro-F1")
    legend_below(fig, axes)
    return fig


def plot_softmax_construction(df: pd.DataFrame) -> Figure:
    """Algorithm 2 at the trained cells (``rgr.studies.softmax_cells.softmax_at_cells``): mean context
    F1 across seeds against ell, one panel per (m, d_model); solid black on one-hot inputs (the
    theorem's setting), dashed greys on Gaussian embeddings of width d_model (one per d_k). The dashed
    red line is ell = max(h, ln m), Theorem 8.1's condition with C_ell = 1; the shaded region is
    ell <= 2 (h - 1), where the non-owner heads' background (h - 1) / ell alone reaches tau = 1/2."""
    if df.empty:
        return nothing_to_draw("no construction results for these cells")
    set_style()
    keys = sorted({(int(m), int(d)) for m, d in df[["m", "d_model"]].itertuples(index=False)})
    nrows, ncols, size = panel_grid(len(keys), (3.6, 3.0))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False, sharey=True)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    d_ks = sorted(df.loc[df.inputs == "gaussian", "d_k"].unique())
    greys = plt.get_cmap("Greys")(np.linspace(0.35, 0.75, max(len(d_ks), 1)))
    for ax, (m, d) in zip(axes.flat, keys):
        cell = df[(df.m == m) & (df.d_model == d)]
        s = cell.groupby(["inputs", "d_k", "ell"])["f1"].mean().reset_index()
        for colour, d_k in zip(greys, d_ks):
            g = s[(s.inputs == "gaussian") & (s.d_k == d_k)]
            ax.plot(g["ell"], g["f1"], color=colour, ls="--", marker="o", ms=3,
                    label=f"Gaussian inputs, $d_k$={int(d_k)}")
        g = s[s.inputs == "one-hot"]
        ax.plot(g["ell"], g["f1"], color="k", marker="o", ms=3.5, lw=1.8,
                label=r"one-hot inputs, $d_k=\lceil 2 \ln^2 m \rceil$")
        h = int(cell["h"].iloc[0])
        lo = cell["ell"].min() / 1.3
        if 2 * (h - 1) > lo:
            ax.axvspan(lo, 2 * (h - 1), color="tab:red", alpha=0.1, lw=0, label=r"$(h-1)/\ell \geq 1/2$")
        ax.axvline(max(h, math.log(m)), color="tab:red", ls="--", lw=1, label=r"$\ell = \max(h, \ln m)$")
        ax.axhline(F1_TARGET, color="k", ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"context length $\ell$")
        ax.set_title(f"m={m}, $d_{{model}}$={d}, h={h}\none-hot $d_k$={int(g.d_k.iloc[0])}", fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("context micro-F1")
    legend_below(fig, axes)
    return fig
