"""Figures of the chapter *theory*: a context, its labels, and how heads are aggregated."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from ..style import MAX_WIDTH_IN, MIN_FONT_PT, head_color, panel_grid, set_style


def plot_context(items: torch.Tensor, labels: torch.Tensor, sources: torch.Tensor) -> Figure:
    """One context: its items in order, arrows for in-context edges, and the label matrix.

    ``items`` (ell,), ``labels`` (ell, ell) bool, ``sources`` (ell,) bool.
    """
    set_style()
    ell = items.shape[0]
    lab = labels.cpu().numpy()
    fig, (ax0, ax1) = plt.subplots(2, 1, figsize=(MAX_WIDTH_IN, 7.8), gridspec_kw={"height_ratios": [1, 1.7]})
    xs = np.arange(ell)
    colors = ["tab:orange" if s else "lightgray" for s in sources.tolist()]
    ax0.scatter(xs, np.zeros(ell), s=min(420, 4200 / ell), c=colors, edgecolors="k", zorder=3)
    for p, it in enumerate(items.tolist()):
        ax0.text(p, 0, str(it), ha="center", va="center", fontsize=MIN_FONT_PT, zorder=4)
    for p, q in zip(*np.nonzero(lab)):
        rad = -0.5 if q > p else 0.5
        ax0.annotate("", xy=(q, 0.05), xytext=(p, 0.05),
                     arrowprops=dict(arrowstyle="->", color="tab:blue", lw=1.5, connectionstyle=f"arc3,rad={rad}"))
    ax0.set_xlim(-0.8, ell - 0.2)
    ax0.set_ylim(-1.2, 1.6)
    ax0.axis("off")
    ax0.set_title("the context (orange: designated sources;\narrows: edges p -> q)", fontsize=11)
    ax1.imshow(lab, cmap="Blues", vmin=0, vmax=1)
    ax1.set_xticks(xs, items.tolist(), rotation=90, fontsize=MIN_FONT_PT)
    ax1.set_yticks(xs, items.tolist(), fontsize=MIN_FONT_PT)
    ax1.set_xlabel("target q")
    ax1.set_ylabel("source p")
    ax1.grid(False)
    ax1.set_title(f"labels y[p, q]\n({int(lab.sum())} positives of {ell * ell} pairs)", fontsize=11)
    fig.tight_layout()
    return fig


def plot_head_scores(S: torch.Tensor, tau: float, labels: torch.Tensor) -> Figure:
    """Per-head scores S_k (h, ell, ell), their max over heads, and the decision S_max > tau.

    Rows are sources p, columns targets q, in context order; the score panels share one colour scale (the bar).
    """
    set_style()
    h = S.shape[0]
    S = S.detach().cpu()
    smax = S.amax(0)
    lim = float(S.abs().max())
    nrows, ncols, size = panel_grid(h + 2, (2.4, 2.5))
    fig, grid = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    axes = list(grid.flat)
    for ax in axes[h + 2:]:
        ax.axis("off")
    for k in range(h):
        axes[k].imshow(S[k].numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim)
        axes[k].set_title(f"head {k + 1}: $S_{k + 1}$", color=head_color(h), fontsize=10)
    scores = axes[h].imshow(smax.numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim)
    axes[h].set_title(r"$S_{\max}=\max_k S_k$", fontsize=10)
    pred = (smax > tau).numpy()
    truth = labels.cpu().numpy().astype(bool)
    outcome = {"true negative": (~pred & ~truth, "#eeeeee"), "false positive": (pred & ~truth, "#f4a582"),
               "missed edge": (~pred & truth, "#762a83"), "true positive": (pred & truth, "#2166ac")}
    code = np.zeros(pred.shape, dtype=int)
    for i, (mask, _) in enumerate(outcome.values()):
        code[mask] = i
    axes[h + 1].imshow(code, cmap=ListedColormap([c for _, c in outcome.values()]), vmin=-0.5, vmax=3.5)
    axes[h + 1].set_title(r"$S_{\max} > \tau$ vs labels", fontsize=10)
    for i, ax in enumerate(axes[: h + 2]):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
        if i % ncols == 0:
            ax.set_ylabel("source p", fontsize=MIN_FONT_PT)
        if i + ncols >= h + 2:  # nothing under it: the bottom of its column
            ax.set_xlabel("target q", fontsize=MIN_FONT_PT)
    fig.tight_layout()
    bar = fig.colorbar(scores, ax=axes, shrink=0.5, pad=0.04, aspect=30)  # one scale for every score panel
    bar.set_label(r"score $S_k[p, q]$ (same scale in each panel)", fontsize=MIN_FONT_PT)
    bar.ax.tick_params(labelsize=MIN_FONT_PT)
    fig.legend(handles=[Patch(color=c, label=k) for k, (_, c) in outcome.items()], loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=10, frameon=False)  # two a row: within the column
    return fig
