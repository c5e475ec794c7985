"""Figures of the chapter *GPT-2 block* (book/gpt2_block.ipynb, protocol E7): paper's Fig. 7, test accuracy of
one Transformer block against D_K."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...results.gpt2_block import embedding_label
from ...results.stats import t_interval
from ..style import MIN_FONT_PT, fig_size, head_color, nothing_to_draw, set_style


def plot_accuracy_vs_dk(df: pd.DataFrame) -> Figure:
    """Fig. 7: mean test accuracy vs D_K, one line per h, 95% t-intervals across seeds (drawn within [0, 1]), and
    every seed's accuracy as a point (dodged by h, 0.1 octave of D_K apart, and jittered by up to 0.04 octave; the
    x axis is log2, the jitter seeded), so split seeds show.

    ``df`` holds rows of :func:`rgr.gpt2.training.train_runs`: columns ``D_K``, ``h``,
    ``seed``, ``test_acc`` and ``embedding_source`` (``m``, ``steps`` are shown when present).
    """
    need = {"D_K", "h", "seed", "test_acc", "embedding_source"}
    missing = need - set(df.columns)
    if missing:
        raise ValueError(f"df is missing columns {sorted(missing)}")
    if df.empty:
        raise ValueError("df has no rows")
    set_style()
    rng = np.random.default_rng(0)
    heads = sorted(df["h"].unique())
    dks = sorted(df["D_K"].unique())
    fig, ax = plt.subplots(figsize=fig_size(4.8, 3.9))  # the legend below it: within the phone's column
    for j, h in enumerate(heads):
        sub = df[df["h"] == h]
        shift = 2 ** ((j - (len(heads) - 1) / 2) * 0.1)  # multiplicative: the x axis is log2
        rows = []
        for dk, g in sub.groupby("D_K"):
            mean, lo, hi = t_interval(g["test_acc"])
            rows.append((dk, mean, lo, hi))
            xs = dk * shift * 2 ** rng.uniform(-0.04, 0.04, len(g))
            ax.scatter(xs, g["test_acc"], s=14, color=head_color(int(h)), alpha=0.55, linewidths=0, zorder=2)
        dk_, mean_, lo_, hi_ = map(np.array, zip(*rows))
        err = np.vstack([mean_ - np.clip(lo_, 0, None), np.clip(hi_, None, 1) - mean_])  # drawn within [0, 1]
        ax.errorbar(dk_ * shift, mean_, yerr=np.nan_to_num(err), color=head_color(int(h)), marker="o", ms=5,
                    capsize=3, lw=1.8, label=f"h = {int(h)}", zorder=3)
    ax.axhline(0.0, color="grey", lw=0.8, ls=":", zorder=1)
    ax.set_xscale("log", base=2)
    ax.set_xticks(dks, [str(int(d)) for d in dks])
    ax.set_xlabel(r"total key width $D_K = h\,d_k$")
    ax.set_ylabel("test accuracy")
    ax.set_ylim(-0.03, 1.03)
    n_seeds = df.groupby(["D_K", "h"])["seed"].nunique()
    scale = []
    for col in ("m", "ell", "steps"):
        if col in df.columns and df[col].nunique() == 1:
            scale.append(f"{col} = {df[col].iloc[0]}")
    seeds = f"{n_seeds.min()}" if n_seeds.min() == n_seeds.max() else f"{n_seeds.min()}–{n_seeds.max()}"
    ax.set_title(f"{seeds} seeds a point" + (f"; {', '.join(scale)}" if scale else ""), fontsize=MIN_FONT_PT + 1,
                 fontweight="normal")  # what the lines and dots are: the caption
    label = embedding_label(df["embedding_source"])
    stand_in = label.startswith("STAND-IN")
    fig.suptitle(label, fontsize=11, color="firebrick" if stand_in else "black", fontweight="bold")
    fig.tight_layout()  # then the legend under the axes, each entry "h = ..."
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=MIN_FONT_PT,
               frameon=False, ncol=min(len(heads), 4))
    return fig


def plot_or_say(df: pd.DataFrame, what: str) -> Figure:
    """:func:`plot_accuracy_vs_dk` of ``df``, or a small figure saying ``what`` is missing where it has no rows (a
    preset not run yet)."""
    return plot_accuracy_vs_dk(df) if len(df) else nothing_to_draw(what)
