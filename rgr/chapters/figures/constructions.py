"""Figures of the chapters *constructions* and *lower bounds*: one function per figure.

Each takes a tidy table (from :mod:`rgr.experiments.construction_sweeps`,
:mod:`rgr.theory.checks` or :mod:`rgr.theory.bounds`) and returns the matplotlib Figure,
already closed in pyplot's registry: a notebook cell that ends with the call
displays it exactly once (``fig.savefig`` works as usual). Call
:func:`rgr.chapters.style.set_style` once before drawing.
"""

from __future__ import annotations

import math

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..style import head_color

__all__ = [
    "wilson_interval",
    "score_separation",
    "success_vs_C",
    "limit_phase",
    "leakage_vs_block",
    "head_split",
    "softmax_background",
    "bounds_vs_constructions",
]

_EDGE, _NON = "#0072B2", "#D55E00"  # blue: true edges, vermillion: non-edges


def _done(fig: plt.Figure) -> plt.Figure:
    """Lay out and detach from pyplot: a notebook cell ending with the returned Figure shows it once."""
    fig.tight_layout()
    plt.close(fig)
    return fig


def wilson_interval(k: np.ndarray, n: np.ndarray, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """95% Wilson score interval of a success rate k / n (elementwise)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return np.clip(mid - half, 0.0, 1.0), np.clip(mid + half, 0.0, 1.0)


def score_separation(panels: dict[str, pd.DataFrame], ncols: int = 3, bins: int = 60) -> plt.Figure:
    """Histograms of score / tau for true edges and non-edges, one panel per construction.

    ``panels`` maps a title to a :func:`rgr.theory.checks.score_samples` table. Each
    kind is normalised separately (non-edges outnumber edges by about m), and
    the dashed line marks the threshold (score / tau = 1): a construction
    separates when blue lies wholly right of it and orange wholly left.
    """
    n = len(panels)
    ncols = min(ncols, n)
    nrows = math.ceil(n / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.0 * nrows), squeeze=False)
    for ax, (title, df) in zip(axes.flat, panels.items()):
        lo, hi = float(df.score_over_tau.min()), float(df.score_over_tau.max())
        edges = np.linspace(min(lo, 0.0), max(hi, 2.0), bins)
        for kind, colour in (("non-edge", _NON), ("edge", _EDGE)):
            v = df.score_over_tau[df.kind == kind]
            if len(v):
                ax.hist(v, bins=edges, density=True, alpha=0.55, color=colour, label=kind)
        ax.axvline(1.0, color="k", ls="--", lw=1)
        ax.set_title(title)
        ax.set_xlabel("score / tau")
        ax.set_yscale("log")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    axes.flat[0].set_ylabel("density")
    axes.flat[0].legend(loc="upper left")
    return _done(fig)


def success_vs_C(df: pd.DataFrame, hue: str = "label") -> plt.Figure:
    """Share of seeds whose construction separates all pairs, against C in d_k = C ln m.

    ``df``: rows of :func:`rgr.experiments.construction_sweeps.success_rate` with a
    ``hue`` column naming each curve. Bars: 95% Wilson intervals over seeds.
    """
    fig, ax = plt.subplots()
    colours = sns.color_palette("colorblind", df[hue].nunique())
    for colour, (name, g) in zip(colours, df.groupby(hue, sort=False)):
        agg = g.groupby("C").success.agg(["sum", "count"]).reset_index()
        lo, hi = wilson_interval(agg["sum"], agg["count"])
        rate = agg["sum"] / agg["count"]
        ax.errorbar(agg.C, rate, yerr=[rate - lo, hi - rate], marker="o", ms=4, capsize=2, color=colour,
                    label=str(name))
    ax.set_xlabel("C  (d_k = ceil(C ln m))")
    ax.set_ylabel("share of seeds separating all pairs")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(title=hue)
    return _done(fig)


def limit_phase(df: pd.DataFrame, value: str = "slack") -> plt.Figure:
    """The d_k -> infinity slack (or margin) of the template against the block size B, per d_model.

    ``df``: :func:`rgr.experiments.construction_sweeps.limit_phase` rows (possibly several
    constructions, one panel each). Above zero the construction separates
    every pair once d_k is large; below zero no width helps. Points: mean over
    seeds; bars: min to max; y axis linear within +-0.5, logarithmic beyond.
    """
    names = list(dict.fromkeys(df.construction))
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 3.6), squeeze=False, sharey=True)
    for ax, name in zip(axes.flat, names):
        sub = df[df.construction == name]
        ds = sorted(sub.d_model.unique())
        colours = sns.color_palette("mako_r", len(ds))
        for colour, d in zip(colours, ds):
            g = sub[sub.d_model == d].groupby("B")[value].agg(["mean", "min", "max"]).reset_index()
            ax.errorbar(g.B, g["mean"], yerr=[g["mean"] - g["min"], g["max"] - g["mean"]], marker="o", ms=4,
                        capsize=2, color=colour, label=f"{d}")
        ax.axhline(0, color="k", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_yscale("symlog", linthresh=0.5)
        ax.set_yticks([-30, -10, -3, -1, -0.5, 0, 0.5])
        ax.yaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda y, _: f"{y:g}"))
        ax.yaxis.set_minor_locator(mpl.ticker.NullLocator())
        ax.set_xlabel("block size B (edges per head)")
        ax.set_title(f"{name}, m = {int(sub.m.iloc[0])}")
    axes.flat[0].set_ylabel(f"limit {value} / tau")
    axes.flat[-1].legend(title="d_model")
    return _done(fig)


def leakage_vs_block(df: pd.DataFrame) -> plt.Figure:
    """Sec. 5's leakage term N3 against the block size B (log-log), with the predicted scales.

    Solid: measured largest |N3 - E N3| (fluctuation), its RMS, and the
    largest conditional mean |E N3|; dashed: (B/d_model) sqrt(d_k ln m),
    (B/d_model) sqrt(d_k), and d_k sqrt(B ln m)/d_model. Points: mean over seeds.
    """
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
    ax.set_title(f"m = {int(g.m.iloc[0])}, d_model = {int(d)}, d_k = {int(dk)} (dashed: predicted scale)")
    ax.legend()
    return _done(fig)


def head_split(df: pd.DataFrame) -> plt.Figure:
    """Equal budget, different head counts: all-pairs slack / tau and context F1 against D_K.

    ``df``: :func:`rgr.experiments.construction_sweeps.head_split` rows. Filled markers:
    every pair separated at tau. Colours: one per head count, as in every chapter.
    """
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
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
    a1.legend()
    return _done(fig)


def softmax_background(df: pd.DataFrame) -> plt.Figure:
    """Softmax summed over heads: the largest non-edge score in target-containing rows
    against the predicted background (h - 1) / ell, per context length.

    ``df`` columns: h, ell, max_non_edge, min_edge. On the diagonal the
    background is exactly what the non-owner heads add; the dashed line is
    tau = 1/2, which non-edges must stay below.
    """
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
    return _done(fig)


def bounds_vs_constructions(table: pd.DataFrame, bounds: pd.DataFrame) -> plt.Figure:
    """Lower bound against explicit constructions: D_K against m' (r-regular) and against m (base grid).

    ``table``: ``data/constructions.csv``; ``bounds``: :func:`rgr.theory.bounds.bound_rows`
    for its cells. Lines: the bit-budget bound for each b; markers: the
    smallest D_K found for each rule and criterion (missing where no width
    up to the search cap separates).
    """
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    marks = {("prescribed", "tau"): ("s", "prescribed split, tau = d_k/2"),
             ("best-split", "tau"): ("o", "best split, tau = d_k/2"),
             ("best-split", "margin"): ("^", "best split, calibrated tau")}
    bits = sorted(bounds.b.unique())
    greys = sns.color_palette("Greys_r", len(bits) + 2)
    # (a) r-regular graphs
    reg = table[table.graph.eq("regular") | (table.construction.eq("general-graph"))]
    if len(reg):
        m, d = int(reg.m.iloc[0]), int(reg.d_model.iloc[0])
        bsub = bounds[(bounds.m == m) & (bounds.d_model == d)].sort_values("m_edges")
        bsub = bsub[bsub.m_edges.isin(reg.m_edges)]
        for c, b in zip(greys, bits):
            s = bsub[bsub.b == b]
            a1.plot(s.m_edges, s.bound_DK, color=c, marker="x", label=f"bit bound, b = {b:g}")
        for (rule, crit), (mk, lab) in marks.items():
            s = reg[(reg.rule == rule) & (reg.criterion == crit) & reg.found]
            if len(s):
                a1.scatter(s.m_edges, s.D_K.astype(float), marker=mk, s=40, label=lab, zorder=3)
        a1.set_title(f"r-regular graphs, m = {m}, d_model = {d}")
        a1.set_xlabel("m' = r m (edges)")
    # (b) permutation base grid + theory cells
    per = table[table.construction.eq("compressive")]
    ds = sorted(per.d_model.unique())
    colours = dict(zip(ds, sns.color_palette("mako_r", len(ds))))
    b0 = bits[0]
    for d in ds:
        s = bounds[(bounds.d_model == d) & (bounds.b == b0) & (bounds.m_edges == bounds.m)].sort_values("m")
        s = s[s.m.isin(per[per.d_model == d].m)]
        a2.plot(s.m, s.bound_DK, color=colours[d], marker="x", label=f"bit bound b = {b0:g}, d_model = {d}")
        for (rule, crit), (mk, _) in marks.items():
            t = per[(per.d_model == d) & (per.rule == rule) & (per.criterion == crit) & per.found]
            if len(t):
                a2.scatter(t.m, t.D_K.astype(float), marker=mk, color=colours[d], s=40, zorder=3)
    a2.set_title("permutation graphs (markers as left)")
    a2.set_xlabel("m (= m')")
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylabel("D_K = h d_k")
    a1.legend(fontsize="x-small")
    a2.legend(fontsize="x-small")
    return _done(fig)
