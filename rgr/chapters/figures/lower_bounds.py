"""Figures of the chapter *lower bounds*: one ``plot_*`` function per figure (style set inside).

Each takes a tidy table and returns the matplotlib Figure, already closed in pyplot's registry.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from ..style import done, fig_size, legend_row, nothing_to_draw, set_style, stacked


def plot_bounds_vs_constructions(table: pd.DataFrame, bounds: pd.DataFrame) -> plt.Figure:
    """Lower bound against explicit constructions: D_K against m' (r-regular) and against m (base grid).

    ``table``: ``data/constructions.csv``; ``bounds``: :func:`rgr.theory.bounds.bound_rows`
    for its cells. Lines: the bit-budget bound for each b; markers: the
    smallest D_K found for each rule and criterion (missing where no width
    up to the search cap separates).
    """
    set_style()
    fig, (a1, l1, a2, l2) = stacked(fig_size(4.8, 10.8), (4.0, 1.6, 4.0, 1.1))
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
        a1.set_title(f"r-regular graphs, m = {m}, d_model = {d}", fontsize=11)
        a1.set_xlabel("m' = r m (edges)")
    # (b) permutation base grid + theory cells
    per = table[table.construction.eq("compressive")]
    ds = sorted(per.d_model.unique())
    colours = dict(zip(ds, sns.color_palette("mako_r", len(ds))))
    b0 = bits[0]
    for d in ds:
        s = bounds[(bounds.d_model == d) & (bounds.b == b0) & (bounds.m_edges == bounds.m)].sort_values("m")
        s = s[s.m.isin(per[per.d_model == d].m)]
        a2.plot(s.m, s.bound_DK, color=colours[d], marker="x", label=f"b = {b0:g}, d_model = {d}")
        for (rule, crit), (mk, _) in marks.items():
            t = per[(per.d_model == d) & (per.rule == rule) & (per.criterion == crit) & per.found]
            if len(t):
                a2.scatter(t.m, t.D_K.astype(float), marker=mk, color=colours[d], s=40, zorder=3)
    a2.set_title("permutation graphs (markers as above)", fontsize=11)
    a2.set_xlabel("m (= m')")
    for ax in (a1, a2):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_ylabel("D_K = h d_k")
    shown = set(a1.get_legend_handles_labels()[1])
    for mk, lab in marks.values():  # every marker named once, for both panels ("markers as above")
        if lab not in shown:
            a1.scatter([], [], marker=mk, color="0.4", s=40, label=lab)
    legend_row(l1, a1)
    legend_row(l2, a2, ncol=2)
    return done(fig)


def plot_per_context(per_context: pd.DataFrame, budget: pd.DataFrame) -> plt.Figure:
    """The seed paper's per-context width against RGR's all-contexts budget.

    Left: ``per_context`` (:func:`rgr.studies.lower_bounds.per_context_table`): median (markers) and
    largest (bars) per-context width d against ell, one colour per m, with the union-bound width
    16 ln(ell) (dashed). Right: ``budget`` (columns m, d_model, D_K, source): the all-contexts D_K
    against m, one marker per source.
    """
    set_style()
    fig, (a1, l1, a2, l2) = stacked(fig_size(4.8, 9.0), (4.0, 0.8, 4.0, 0.8))
    ms = sorted(per_context.m.unique())
    colours = sns.color_palette("mako_r", len(ms))
    for c, m in zip(colours, ms):
        s = per_context[per_context.m == m].groupby("ell", as_index=False).agg(med=("d_median", "median"),
                                                                               mx=("d_max", "max"))
        a1.errorbar(s.ell, s.med, yerr=[np.zeros(len(s)), s.mx - s.med], marker="o", ms=4, capsize=2, color=c,
                    label=f"m = {m}")
    ells = np.array(sorted(per_context.ell.unique()))
    a1.plot(ells, 16 * np.log(ells), "k--", lw=1, label="16 ln ell")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("context length ell")
    a1.set_ylabel("per-context width d")
    a1.set_title("weights fitted to one context", fontsize=11)
    legend_row(l1, a1, ncol=3)
    for src, s in budget.groupby("source"):
        s = s.sort_values("m")
        a2.plot(s.m, s.D_K, marker="o", ms=4, label=src)
    a2.set_xscale("log", base=2)
    a2.set_yscale("log", base=2)
    a2.set_xlabel("m")
    a2.set_ylabel("D_K serving every context")
    if budget.empty:  # e.g. a smoke run of the chapter against a table without that d_model
        nothing_to_draw("no trained thresholds\nat this d_model in these rows", a2)
    a2.set_title("one set of weights for all contexts" + (f", d_model = {int(budget.d_model.iloc[0])}"
                                                          if len(budget) else ""), fontsize=11)
    if len(budget):
        legend_row(l2, a2, ncol=2)
    else:
        l2.axis("off")
    return done(fig)


def plot_margins(df: pd.DataFrame) -> plt.Figure:
    """Theorem 9.2 on trained models: the bound at the measured margin against the trained D_K.

    ``df``: :func:`rgr.studies.lower_bounds.trained_margins` rows. Markers: the trained D_K (x) against the
    bound at its normalised margin (y); the diagonal: bound = D_K (a point above it would break the
    theorem).
    """
    set_style()
    fig, ax = plt.subplots(figsize=fig_size(4.8, 4.2))
    ok = df[df.gamma > 0]
    for (m, d), s in ok.groupby(["m", "d_model"]):
        ax.scatter(s.D_K, s.bound_DK, s=30, label=f"m = {m}, d_model = {d}", zorder=3)
    top = float(max(ok.D_K.max(), ok.bound_DK.max())) * 1.5 if len(ok) else 1.0
    ax.plot([0.05, top], [0.05, top], "k--", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("trained D_K (F1 target met)")
    ax.set_ylabel("Theorem 9.2 bound at the measured margin")
    if len(ok):
        ax.legend(fontsize=9)
    else:
        ax.set_title("no model recovered every pair (gamma <= 0)", fontsize=11)
    return done(fig)
