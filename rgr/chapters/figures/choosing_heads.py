"""Figures of the chapter *choosing heads*: the rule against its data, and a chart to read it off."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ...protocol import F1_TARGET
from ...results.choosing_heads.design import DesignRule, recommend
from ..style import fig_size, head_color, nothing_to_draw, panel_grid, set_style

_D_MODELS = (16, 32, 48, 64)  # the chart's lines

_HELD_OUT_MARKERS = ("D", "s", "^", "v", "P", "X", "h", "p")  # held-out cells, in order of x


def plot_validation(rule: DesignRule | None, held_out: pd.DataFrame) -> Figure:
    """Left: D_K* against x = m' ln m' / d_model, the rule's line c x with its 95% prediction band, the fitted
    cells (dots) and the held-out cells (diamonds; hollow where outside the domain) with their optimistic to
    conservative range. Right: h* against m'/d_model, the fitted h* line and the heads the rule picks."""
    set_style()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=panel_grid(2, (3.95, 3.8))[2])
    if rule is None:
        nothing_to_draw("no rule: too few thresholds in this preset", a1)
        nothing_to_draw("", a2)
        return fig
    held_out = held_out.drop_duplicates(["m", "d_model"])  # a cell predicted twice is measured once
    cells = pd.DataFrame(rule.cells, columns=["m", "d_model", "x", "lam", "D_K_star", "h_star"])
    xs = np.geomspace(min(cells.x.min(), held_out.get("x", cells.x).min()) / 1.5,
                      max(cells.x.max(),
                          (held_out.m * np.log(held_out.m) / held_out.d_model).max() if len(held_out) else 0) * 1.5, 50)
    c, f = rule.c(), rule.factor()
    a1.fill_between(xs, c * xs / f, c * xs * f, color="0.85", label="95% prediction band")
    a1.plot(xs, c * xs, color="k", lw=1.2, label=f"rule: $D_K^* = c\\,x$, c = {c:.2f}")
    a1.scatter(cells.x, cells.D_K_star, color="tab:blue", zorder=3, label="fitted cells (base)")
    shown = held_out[held_out["D_K_star"].notna()].assign(x=lambda t: t.m * np.log(t.m) / t.d_model).sort_values("x")
    for r, mark in zip(shown.itertuples(index=False), _HELD_OUT_MARKERS):  # each cell its marker, named below
        x = r.x
        lo = r.D_K_opt if pd.notna(r.D_K_opt) else r.D_K_star
        hi = r.D_K_cons if pd.notna(r.D_K_cons) else r.D_K_star
        a1.errorbar([x], [r.D_K_star], yerr=[[r.D_K_star - lo], [hi - r.D_K_star]], fmt=mark, ms=7, capsize=3,
                    color="tab:red", mfc="tab:red" if r.in_domain else "white", zorder=4,
                    label=f"held out ({r.m}, {r.d_model})")
    a1.scatter([], [], marker="o", color="white", edgecolors="tab:red", label="hollow: outside the domain")
    a1.set(xscale="log", yscale="log", xlabel=r"$x = m' \ln m' / d_{model}$", ylabel=r"$D_K^*$ (F1 $\geq$ 0.99)")
    lam = np.linspace(1, max(rule.domain.lam[1], held_out["lam"].max() if len(held_out) else 1), 100)
    lo_hi = np.array([rule.h_interval(v) for v in lam])
    a2.fill_between(lam, lo_hi[:, 0], lo_hi[:, 1], color="0.85", label="95% prediction band")
    a2.plot(lam, np.maximum(rule.h_fit(lam), 1), color="k", lw=1.2,
            label=f"$h^* = {rule.a:.2f}\\,m'/d_{{model}} {rule.b:+.2f}$")
    a2.scatter(cells.lam, cells.h_star, color="tab:blue", zorder=3, label="fitted cells: $h^*$")
    for r in held_out.itertuples(index=False):
        if pd.notna(r.h_star):
            a2.scatter([r.lam], [r.h_star], marker="D", s=45, color="tab:red",
                       facecolor="tab:red" if r.in_domain else "white", zorder=4)
    a2.axvspan(rule.domain.lam[1], lam.max() + 1, color="tab:red", alpha=0.06, label="outside the fitted range")
    a2.set(yscale="log", xlabel=r"$m' / d_{model}$", ylabel="heads")
    a2.set_yticks([1, 2, 4, 8, 16, 32, 64], labels=["1", "2", "4", "8", "16", "32", "64"])
    fig.tight_layout()
    a1.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.42))  # below the x label
    a2.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.42))
    return fig


def plot_chart(rule: DesignRule | None) -> Figure:
    """The rule as a chart: the budget D_K needed for the F1 target against m', one line per d_model of
    :data:`_D_MODELS` over its domain, with the 95% band; markers coloured by the head count the rule picks."""
    set_style()
    fig, ax = plt.subplots(figsize=fig_size(6.8, 4.4))
    if rule is None:
        nothing_to_draw("no rule: too few thresholds in this preset", ax)
        return fig
    drawn: set[int] = set()  # the head counts of the markers drawn: the legend names each of them
    for d in _D_MODELS:
        ms = [m for m in np.unique(np.geomspace(d * rule.domain.lam[0], d * rule.domain.lam[1], 24).round().astype(int))
              if not rule.domain.violations(int(m), d)]
        if not ms:
            continue
        rs = [recommend(rule, int(m), d, target_f1=F1_TARGET) for m in ms]
        line, = ax.plot(ms, [r.D_K for r in rs], lw=1.3, label=f"$d_{{model}}$ = {d}")
        ax.fill_between(ms, [r.D_K_lo for r in rs], [r.D_K_hi for r in rs], color=line.get_color(), alpha=0.12)
        ax.scatter(ms, [r.D_K for r in rs], c=[head_color(r.h) for r in rs], s=22, zorder=3, edgecolor="none")
        drawn |= {int(r.h) for r in rs}
    for h in sorted(drawn):
        ax.scatter([], [], color=head_color(h), s=22, label=f"h = {h}")
    ax.set(xscale="log", yscale="log", xlabel="m' (relations; = m for a permutation graph)",
           ylabel=f"$D_K$ needed for F1 $\\geq$ {F1_TARGET}")
    ax.legend(frameon=False, fontsize=9, loc="upper left", ncol=2)
    fig.tight_layout()
    return fig
