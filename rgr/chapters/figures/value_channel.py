"""Figures of the chapter *value channel* (book/value_channel.ipynb): paper Fig. 6 and the one-head error
with and without early stopping. Every function sets the book's style and draws a note instead of failing
when its table has nothing to show."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...results.thresholds import curves
from ..style import MIN_FONT_PT, errorbar_curve, head_color, nothing_to_draw, panel_grid, plain_log_axes, set_style


def plot_value_mse(runs: pd.DataFrame, baselines: pd.DataFrame) -> Figure:
    """Paper's Fig. 6: test MSE against D_K per h, one panel per d_model, 95% intervals, with the MSE of
    the zero and mean-message predictors (``baselines``: columns d_model, mse_zero, mse_mean) as lines."""
    if runs.empty:
        return nothing_to_draw("no value-channel runs in this table")
    set_style()
    s = curves(runs, "test_mse")
    ds = sorted(s["d_model"].unique())
    nrows, ncols, size = panel_grid(len(ds), (3.9, 3.4))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    for ax in list(axes.flat)[len(ds):]:
        ax.axis("off")
    for ax, d in zip(axes.flat, ds):
        for h, g in s[s.d_model == d].groupby("h"):
            errorbar_curve(ax, g, color=head_color(int(h)), label=f"h={int(h)}")
        b = baselines[baselines.d_model == d]
        ax.axhline(b["mse_zero"].mean(), color="k", ls=":", lw=1, label="predict 0")
        ax.axhline(b["mse_mean"].mean(), color="k", ls="--", lw=1, label="predict the mean message")
        ax.set_xscale("log", base=2)
        plain_log_axes(ax, "y")
        ax.set_xlabel(r"$D_K = h\,d_k$")
        ax.set_ylabel("test MSE")  # per coordinate of the message: the caption says so
        ax.set_title(f"m={int(s.m.iloc[0])}, $d_{{model}}$={d}", fontsize=10)
    fig.tight_layout()
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, frameon=False, fontsize=MIN_FONT_PT, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=4)
    return fig


def plot_one_head_stopping(compare: pd.DataFrame) -> Figure:
    """One head's test MSE as a fraction of the mean predictor's against D_K, with early stopping (the E6
    table) and trained to the step cutoff, one panel per d_model; the dotted line is D_K = d_model.

    ``compare``: rows of :func:`rgr.results.value_channel.one_head_stopping` (d_model, D_K, stopping,
    ratio, lo, hi).
    """
    if compare.empty:
        return nothing_to_draw("no one-head runs without early stopping in this table")
    set_style()
    ds = sorted(compare["d_model"].unique())
    nrows, ncols, size = panel_grid(len(ds), (3.6, 3.0))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False, sharey=True)
    for ax in list(axes.flat)[len(ds):]:
        ax.axis("off")
    styles = {"early stop": dict(color="tab:blue", ls="-"), "to the cutoff": dict(color="tab:red", ls="--")}
    for ax, d in zip(axes.flat, ds):
        for how, g in compare[compare.d_model == d].groupby("stopping"):
            g = g.sort_values("D_K")
            err = np.vstack([g["ratio"] - g["lo"], g["hi"] - g["ratio"]])
            ax.errorbar(g["D_K"], g["ratio"], yerr=np.nan_to_num(err), marker="o", ms=3.5, capsize=2, label=how,
                        **styles.get(how, {}))
        ax.axvline(d, color="grey", ls=":", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(r"$D_K = d_k$ (one head)")
        ax.set_title(f"$d_{{model}}$={d}", fontsize=10)
    for ax in axes[:, 0]:
        ax.set_ylabel("test MSE / mean predictor's")
    axes[0, -1].legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig
