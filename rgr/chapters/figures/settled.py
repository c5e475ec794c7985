"""D_K* against the step budget, cell by cell (the settled-threshold extension; chapters *permutation sweeps* and
*does it replicate?*)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...results.settled import SETTLED_SHARE, lowest_points
from ..style import fig_size, plain_log_axes, set_style

_DODGE = 0.05  # log2 units between neighbouring cells' points at one budget, so equal readings do not hide each other


def _panel(ax, f: pd.DataFrame, title: str, low: dict[tuple[int, int], int]) -> None:
    n = max(1, f.groupby(["m", "d_model"]).ngroups)
    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.85, n))
    for k, (color, ((m, d), g)) in enumerate(zip(colors, f.groupby(["m", "d_model"]))):
        g = g[(g["complete"] >= 1.0) & g["D_K_star"].notna()].sort_values("budget")
        if not len(g):
            continue
        x = g["budget"].to_numpy(float) * 2 ** (_DODGE * (k - (n - 1) / 2))
        y = g["D_K_star"].to_numpy(float)
        err = np.vstack([y - g["D_K_opt"].astype(float).fillna(pd.Series(y, index=g.index)).to_numpy(),
                         g["D_K_cons"].astype(float).fillna(pd.Series(y, index=g.index)).to_numpy() - y])
        ax.errorbar(x, y, yerr=np.clip(err, 0, None), color=color, lw=1.2, capsize=2, label=f"{m}, {d}")
        cut = (g["cut_at_star"].astype(float) > SETTLED_SHARE * g["at_star"].astype(float)).to_numpy()
        ax.scatter(x[~cut], y[~cut], color=color, s=28, zorder=3)
        ax.scatter(x[cut], y[cut], facecolor="white", edgecolor=color, s=28, zorder=3)
        floor = (g["budget"] > 1).to_numpy() & (y == low.get((m, d), -1))
        ax.scatter(x[floor], y[floor] * 0.88, marker="v", color=color, s=18, zorder=3)
    plain_log_axes(ax, "y")
    ax.set_xscale("log", base=2)
    ax.set_xticks([1, 4, 16], ["1x", "4x", "16x"])
    ax.minorticks_off()
    ax.set_xlim(0.7, 23)
    ax.set_title(title)
    ax.set_xlabel("step budget (x the protocol's cutoff)")
    ax.legend(fontsize=9, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5), title="(m, d_model)",
              title_fontsize=9)


def plot_budget_thresholds(frame: pd.DataFrame) -> Figure:
    """D_K* (optimistic-conservative bars) against the budget, one line per cell: the lambda = 8 diagonal left, the
    other base cells right. A filled point: at most :data:`rgr.results.settled.SETTLED_SHARE` of the runs at that
    D_K* ran to the budget (settled); hollow: more did. A triangle under a point: D_K* is the design's lowest point,
    so it may lie lower. Only budgets with every point's runs are drawn; the cells' points at one budget are set
    slightly apart (:data:`_DODGE`), so that two equal readings both show. ``frame``:
    :func:`rgr.results.settled.budget_thresholds`."""
    set_style()
    fig, axes = plt.subplots(2, 1, figsize=fig_size(4.8, 6.4))
    low = lowest_points()
    diag = frame["m"] == 8 * frame["d_model"]
    _panel(axes[0], frame[diag], r"$m / d_{model} = 8$", low)
    _panel(axes[1], frame[~diag], "other base cells", low)
    for ax in axes:
        ax.set_ylabel(r"$D_K^*$")
    axes[0].set_xlabel("")
    fig.tight_layout()
    return fig
