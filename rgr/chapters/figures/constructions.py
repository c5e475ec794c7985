"""Figures of the chapter *constructions*: one ``plot_*`` function per figure (style set inside).

Each takes a tidy table (from :mod:`rgr.studies.construction_sweeps`,
:mod:`rgr.theory.checks` or :mod:`rgr.theory.bounds`) and returns the matplotlib Figure,
already closed in pyplot's registry: a notebook cell that ends with the call
displays it exactly once (``fig.savefig`` works as usual).
"""

from __future__ import annotations

import textwrap

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ...results.stats import wilson_interval
from ..style import MAX_WIDTH_IN, MIN_FONT_PT, done, fig_size, head_color, panel_grid, plain_log_axes, set_style

_EDGE, _NON = "#0072B2", "#D55E00"  # blue: true edges, vermillion: non-edges


def plot_score_separation(panels: dict[str, pd.DataFrame], ncols: int = 2) -> plt.Figure:
    """Histograms of score / tau for true edges and non-edges, one panel per construction.

    ``panels`` maps a title to a :func:`rgr.theory.checks.score_samples` table. Each
    kind is normalised separately (non-edges outnumber edges by about m), and
    the dashed line marks the threshold (score / tau = 1): a construction
    separates when blue lies wholly right of it and orange wholly left. At most ``ncols`` panels a row,
    within the book's column (:func:`rgr.chapters.style.panel_grid`).
    """
    set_style()
    n = len(panels)
    nrows, ncols, size = panel_grid(n, (3.9, 2.8), max_width=min(MAX_WIDTH_IN, 3.9 * max(ncols, 1)))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False)
    for ax, (title, df) in zip(axes.flat, panels.items()):
        lo, hi = float(df.score_over_tau.min()), float(df.score_over_tau.max())
        edges = np.linspace(min(lo, 0.0), max(hi, 2.0), 60)
        for kind, colour in (("non-edge", _NON), ("edge", _EDGE)):
            v = df.score_over_tau[df.kind == kind]
            if len(v):
                ax.hist(v, bins=edges, density=True, alpha=0.55, color=colour, label=kind)
        ax.axvline(1.0, color="k", ls="--", lw=1)
        ax.set_title(textwrap.fill(title, 26), fontsize=MIN_FONT_PT)  # a narrow panel: short lines
        ax.set_xlabel(r"score / $\tau$")
        ax.set_yscale("log")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("density")
    fig.tight_layout()
    fig.legend(*axes.flat[0].get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
               frameon=False)
    plt.close(fig)
    return fig


def plot_success_vs_C(df: pd.DataFrame) -> plt.Figure:
    """Share of seeds whose construction separates all pairs, against C in d_k = C ln m.

    ``df``: rows of :func:`rgr.studies.construction_sweeps.success_rate` with a
    ``label`` column naming each curve. Bars: 95% Wilson intervals over seeds.
    """
    set_style()
    fig, ax = plt.subplots(figsize=fig_size(4.8, 3.2))
    colours = sns.color_palette("colorblind", df["label"].nunique())
    for colour, (name, g) in zip(colours, df.groupby("label", sort=False)):
        agg = g.groupby("C").success.agg(["sum", "count"]).reset_index()
        lo, hi = wilson_interval(agg["sum"], agg["count"])
        rate = agg["sum"] / agg["count"]
        ax.errorbar(agg.C, rate, yerr=[rate - lo, hi - rate], marker="o", ms=4, capsize=2, color=colour,
                    label=str(name))
    ax.set_xlabel("C  (d_k = ceil(C ln m))")
    ax.set_ylabel("share of seeds\nseparating all pairs")
    ax.set_ylim(-0.03, 1.03)
    fig.tight_layout()  # then the legend under the axes, outside the curves
    fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, frameon=False,
               fontsize=MIN_FONT_PT)
    plt.close(fig)
    return fig


def plot_limit_phase(df: pd.DataFrame) -> plt.Figure:
    """The d_k -> infinity slack of the template against the block size B, per d_model.

    ``df``: :func:`rgr.studies.construction_sweeps.limit_phase` rows (possibly several
    constructions, one panel each). Above zero the construction separates
    every pair once d_k is large; below zero no width helps. Points: mean over
    seeds; bars: min to max; y axis linear within +-0.5, logarithmic beyond.
    """
    set_style()
    names = list(dict.fromkeys(df.construction))
    # one panel a row at the column's width: the symlog axis needs height, the labels width
    fig, axes = plt.subplots(len(names), 1, figsize=fig_size(4.8, 3.4 * len(names)), squeeze=False, sharey=True)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    for ax, name in zip(axes.flat, names):
        sub = df[df.construction == name]
        ds = sorted(sub.d_model.unique())
        colours = sns.color_palette("mako_r", len(ds))
        for colour, d in zip(colours, ds):
            g = sub[sub.d_model == d].groupby("B")["slack"].agg(["mean", "min", "max"]).reset_index()
            ax.errorbar(g.B, g["mean"], yerr=[g["mean"] - g["min"], g["max"] - g["mean"]], marker="o", ms=4,
                        capsize=2, color=colour, label=f"{d}")
        ax.axhline(0, color="k", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=0.5)
        ax.set_yticks([-30, -10, -3, -1, 0, 0.5])
        ax.yaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_locator(mpl.ticker.NullLocator())
        ax.set_xlabel("block size B (edges per head)")
        ax.set_title(f"{name}, m = {int(sub.m.iloc[0])}", fontsize=11)
        ax.yaxis.set_tick_params(labelleft=True)
    for ax in axes[:, 0]:
        ax.set_ylabel("limit slack / $\\tau$")
    fig.tight_layout()
    fig.legend(*axes.flat[0].get_legend_handles_labels(), title=r"$d_{model}$", loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=6, frameon=False)
    plt.close(fig)
    return fig


def plot_leakage_vs_block(df: pd.DataFrame) -> plt.Figure:
    """Sec. 5's leakage term N3 against the block size B (log-log), with the predicted scales.

    Solid: measured largest |N3 - E N3| (fluctuation), its RMS, and the
    largest conditional mean |E N3|; dashed: (B/d_model) sqrt(d_k ln m),
    (B/d_model) sqrt(d_k), and d_k sqrt(B ln m)/d_model. Points: mean over seeds.
    """
    set_style()
    g = df[df.B > 1].groupby("B").mean(numeric_only=True).reset_index()
    d, dk = g.d_model.iloc[0], g.d_k.iloc[0]
    series = [
        ("max fluctuation", g.n3_fluct_max, g.predicted, "C0"),
        ("RMS fluctuation", g.n3_fluct_rms, g.B / d * np.sqrt(dk), "C1"),
        ("max conditional mean", g.n3_mean_max, g.predicted_mean, "C2"),
    ]
    fig, ax = plt.subplots()
    for label, y, pred, c in series:
        ax.plot(g.B, y, marker="o", ms=4, color=c, label=label)
        ax.plot(g.B, pred, ls="--", color=c, lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("block size B")
    ax.set_ylabel("|N3|")
    ax.set_title(f"m = {int(g.m.iloc[0])}, d_model = {int(d)}, d_k = {int(dk)}\n(dashed: predicted scale)", fontsize=11)
    ax.legend()
    return done(fig)


def plot_head_split(df: pd.DataFrame) -> plt.Figure:
    """Equal budget, different head counts: all-pairs slack / tau and context F1 against D_K.

    ``df``: :func:`rgr.studies.construction_sweeps.head_split` rows. Filled markers:
    every pair separated at tau. Colours: one per head count, as in every chapter.
    """
    set_style()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=panel_grid(2, (3.9, 3.4))[2])
    for h, g in df.groupby("h"):
        agg = g.groupby("D_K").agg(slack=("slack", "mean"), f1=("f1", "mean"), sep=("separated", "all"))
        c = head_color(int(h))
        a1.plot(agg.index, agg.slack, color=c, label=f"h = {h}")
        face = [c if sep else "white" for sep in agg.sep]
        a1.scatter(agg.index, agg.slack, c=face, edgecolors=[c] * len(face), zorder=3)
        a2.plot(agg.index, agg.f1, color=c, marker="o", ms=4, label=f"h = {h}")
    a1.axhline(0, color="k", lw=1)
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("D_K = h d_k")
    a1.set_ylabel("all-pairs slack / tau")
    a2.set_ylabel("micro-F1 on test contexts")
    fig.tight_layout()
    fig.legend(*a1.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=6, frameon=False)
    plt.close(fig)
    return fig


def plot_softmax_background(df: pd.DataFrame) -> plt.Figure:
    """Softmax summed over heads: the largest non-edge score in target-containing rows
    against the predicted background (h - 1) / ell, per context length.

    ``df`` columns: h, ell, max_non_edge, min_edge. On the diagonal the
    background is exactly what the non-owner heads add; the dashed line is
    tau = 1/2, which non-edges must stay below.
    """
    set_style()
    fig, ax = plt.subplots()
    for ell, g in df.groupby("ell"):
        x = (g.h - 1) / ell
        ax.scatter(x, g.max_non_edge, label=f"ell = {ell}", zorder=3)
    lim = max(1.0, float(df.max_non_edge.max()) * 1.05)
    ax.plot([0, lim], [0, lim], color="k", lw=1)
    ax.axhline(0.5, color="k", ls="--", lw=1)
    ax.set_xlabel("predicted background (h - 1) / ell")
    ax.set_ylabel("largest non-edge score (rows with target)")
    ax.legend()
    return done(fig)


def plot_softmax_width(df: pd.DataFrame) -> plt.Figure:
    """Algorithm 2 against d_k: failures with and without the leakage mean, and the leakage logit's spread.

    ``df``: :func:`rgr.studies.theory_checks.theorem81_tables` rows. Top: non-edge failures per 1,000
    non-edges on target-present (solid) and target-absent (dotted) rows, one colour per cell, grey:
    the same contexts with the leakage mean removed from every logit. Below: the measured sd of the
    leakage logit (markers) and ``sqrt(d_k B) / d_model`` (lines). Both log-log, stacked at the column's width (tick
    labels in plain numbers), one legend of the cells under them.
    """
    set_style()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=fig_size(4.8, 6.6), sharex=True)
    cells = list(dict.fromkeys(zip(df.m, df.d_model)))
    colours = sns.color_palette("colorblind", len(cells))
    g = df.groupby(["m", "d_model", "d_k"], as_index=False).sum(numeric_only=True)
    for c, (m, d) in zip(colours, cells):
        s = g[(g.m == m) & (g.d_model == d)]
        a1.plot(s.d_k, 1e3 * s.present / s.n_present, marker="o", ms=4, color=c, label=f"m = {m}, d_model = {d}")
        a1.plot(s.d_k, 1e3 * s.absent / s.n_absent, ls=":", marker=".", color=c)
        a1.plot(s.d_k, 1e3 * s.present_no_leak / s.n_present, color="0.6", lw=1)
        a1.plot(s.d_k, 1e3 * s.absent_no_leak / s.n_absent, color="0.6", lw=1, ls=":")
        t = df[(df.m == m) & (df.d_model == d)].groupby("d_k", as_index=False)[["leak_sd", "leak_sd_predicted"]].mean()
        a2.plot(t.d_k, t.leak_sd_predicted, color=c, lw=1)
        a2.scatter(t.d_k, t.leak_sd, color=c, s=20)
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        plain_log_axes(ax, "y", subs=(1.0, 3.0))
    a1.set_ylabel("failures per 1,000")
    a1.set_title("solid: target present, dotted: absent; grey: leakage mean removed", fontsize=MIN_FONT_PT)
    a2.set_xlabel("$d_k$")
    a2.set_ylabel("sd of leakage logit")
    a2.set_title(r"markers: measured; lines: $\sqrt{d_k B}\,/\,d_{model}$", fontsize=MIN_FONT_PT)
    fig.tight_layout()
    fig.legend(*a1.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1, frameon=False,
               fontsize=MIN_FONT_PT)
    plt.close(fig)
    return fig


def plot_algorithm1_onset(df: pd.DataFrame) -> plt.Figure:
    """Share of seeds on which Algorithm 1's d_k -> infinity limit separates every pair, against d_model / ln m.

    ``df``: :func:`rgr.studies.theory_checks.algorithm1_onset` rows. One line per m; filled markers where
    m > d_model (compression), hollow where d_model >= m (one head, no compression); bars: 95% Wilson
    intervals.
    """
    set_style()
    fig, ax = plt.subplots()
    ms = sorted(df.m.unique())
    colours = sns.color_palette("mako_r", len(ms))
    for c, m in zip(colours, ms):
        p = df[df.m == m].groupby("d_model").agg(ratio=("ratio", "first"), k=("separated", "sum"), n=("seed", "size"))
        lo, hi = wilson_interval(p.k.values, p.n.values)
        y = p.k / p.n
        err = np.clip(np.vstack([y - lo, hi - y]), 0.0, None)  # Wilson bounds can sit a rounding error past y
        ax.errorbar(p.ratio, y, yerr=err, color=c, lw=1, capsize=2, label=f"m = {m}")
        comp = p.index.values < m
        ax.scatter(p.ratio[comp], y[comp], color=c, s=18, zorder=3)
        ax.scatter(p.ratio[~comp], y[~comp], facecolors="white", edgecolors=c, s=18, zorder=3)
    ax.axhline(0.5, color="k", ls="--", lw=1)
    ax.set_xlabel("d_model / ln m")
    ax.set_ylabel("P(limit separates all pairs)")
    ax.legend(title="hollow: d_model >= m", fontsize=9, title_fontsize=9)
    return done(fig)
