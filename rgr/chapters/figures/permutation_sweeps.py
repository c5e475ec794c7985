"""Figures of chapter *permutation sweeps* (paper Figs. 1-4 and 8-10); :func:`plot_f1_curves` also draws
Fig. 11 of chapter *denser graphs*.

Each function takes a table (runs, or the per-cell thresholds of
:func:`rgr.results.thresholds.thresholds`) and returns a Figure; where the table has too little to draw
(a smoke run whose cells never reach the target) the panel says so in words instead of failing.

:func:`figure_picker` shows one figure at a time, chosen from a list (the per-cell F1 curves). The book is a static
site (no kernel behind it), so the picker is plain HTML: every figure is drawn once as a PNG inside the page (a
``data:`` URI), a ``<select>`` lists them, and one inline ``onchange`` handler shows the chosen one. Without
JavaScript (a notebook viewer that strips scripts and handlers, an untrusted notebook) the first figure stays shown
and the others hidden: the static fallback. The HTML is deterministic (no random ids, no timestamps in the PNGs), so
nbval keeps comparing it between executions.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import HTML
from matplotlib.figure import Figure

from ...protocol import F1_TARGET
from ...results.stats import Fit
from ...results.thresholds import LawFits, curves
from ..style import (
    FIGURE_DPI,
    MAX_WIDTH_IN,
    MIN_FONT_PT,
    errorbar_curve,
    fig_size,
    head_color,
    legend_row,
    nothing_to_draw,
    panel_grid,
    plain_log_axes,
    set_style,
    shown_png,
    stacked,
)


def _cell_title(m: int, d_model: int, r: int) -> str:
    return f"m={m}, $d_{{model}}$={d_model}" + (f", r={r}" if r > 1 else "")


def plot_f1_curves(
    runs: pd.DataFrame,
    cells: Sequence[tuple[int, int, int]] | None = None,
    ncols: int = 3,
    title: str | None = None,
) -> Figure:
    """Mean test micro-F1 vs D_K, one line per h, 95% t-intervals, the F1 target dashed; one panel per (m, d_model, r)
    cell.

    A dotted vertical line marks D_K = d_model: past it a single head's score
    x_p^T W_Q W_K^T x_q cannot gain rank (rank <= min(D_K, d_model)).
    """
    set_style()
    if not len(runs):
        fig, ax = plt.subplots(figsize=fig_size(4.6, 3.5))
        nothing_to_draw("no runs in the table", ax)
        return fig
    s = curves(runs)
    keys = sorted({(int(a), int(b), int(c)) for a, b, c in s[["m", "d_model", "r"]].itertuples(index=False)})
    cells = list(cells) if cells is not None else keys
    missing = [c for c in cells if c not in keys]
    if missing:
        raise ValueError(f"cells not in the table: {missing}")
    # panels wrap into rows within the book's column (rgr.chapters.style.panel_grid); at most ``ncols`` a row
    panel = (4.6, 3.4) if len(cells) == 1 else (2.6, 2.3)
    nrows, ncols, size = panel_grid(len(cells), panel, max_width=min(ncols * panel[0], MAX_WIDTH_IN))
    fig, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False, sharey=True)
    for ax, (m, d, r) in zip(axes.flat, cells):
        c = s[(s.m == m) & (s.d_model == d) & (s.r == r)]
        for h, g in c.groupby("h"):
            errorbar_curve(ax, g, color=head_color(int(h)), label=f"h={int(h)}")
        ax.axhline(F1_TARGET, color="k", ls="--", lw=0.8)
        ax.axvline(d, color="gray", ls=":", lw=1)
        ax.set_xscale("log", base=2)
        ax.set_title(_cell_title(m, d, r), fontsize=10)
    for ax in axes[-1, :]:
        ax.set_xlabel(r"$D_K = h\,d_k$")
    for ax in axes[:, 0]:
        ax.set_ylabel("test micro-F1")
    for ax in list(axes.flat)[len(cells):]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    order = np.argsort([int(lbl.split("=")[1]) for lbl in labels])
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="upper center", frameon=False,
               bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 4), fontsize=10)
    return fig


def f1_curves_per_cell(runs: pd.DataFrame) -> dict[str, Figure]:
    """One :func:`plot_f1_curves` figure per (m, d_model, r) cell of ``runs``, keyed by the cell's name
    ("m = 64, d_model = 16", with ", r = 2" where r > 1), in (m, d_model, r) order: the pages of the
    chapter's interactive figure (:func:`figure_picker`)."""
    if not len(runs):
        raise ValueError("runs: no rows, so no cell to draw")
    keys = sorted({(int(a), int(b), int(c)) for a, b, c in runs[["m", "d_model", "r"]].itertuples(index=False)})
    return {
        f"m = {m}, d_model = {d}" + (f", r = {r}" if r > 1 else ""): plot_f1_curves(runs, [(m, d, r)], ncols=1)
        for m, d, r in keys
    }


def plot_dk_star_grid(cells: pd.DataFrame) -> Figure:
    """Fig. 8: D_K* per (m, d_model) as a grid, with [optimistic, conservative] under each value."""
    set_style()
    if not len(cells):
        fig, ax = plt.subplots(figsize=fig_size(4.6, 3.5))
        nothing_to_draw("no cells in the table", ax)
        return fig
    ms = sorted(cells["m"].unique())
    ds = sorted(cells["d_model"].unique())
    grid = np.full((len(ms), len(ds)), np.nan)
    fig, ax = plt.subplots(figsize=(min(1.9 * len(ds) + 2, MAX_WIDTH_IN), 0.9 * len(ms) + 1.4))
    for _, row in cells.iterrows():
        i, j = ms.index(row["m"]), ds.index(row["d_model"])
        c = row["D_K_star"]
        grid[i, j] = np.log2(float(c)) if pd.notna(c) else np.nan
        fmt = lambda v: "-" if pd.isna(v) else str(int(v))
        ax.text(j, i, f"{fmt(c)}\n[{fmt(row['D_K_opt'])}, {fmt(row['D_K_cons'])}]", ha="center", va="center",
                fontsize=9)
    ax.imshow(grid, cmap="Blues", alpha=0.6, aspect="auto")
    ax.set_xticks(range(len(ds)), [str(d) for d in ds])
    ax.set_yticks(range(len(ms)), [str(m) for m in ms])
    ax.set_xlabel(r"$d_{model}$")
    ax.set_ylabel("m")
    ax.grid(False)
    ax.set_title(r"$D_K^*$  [optimistic, conservative]   ('-': not reached)", fontsize=10)
    fig.tight_layout()
    return fig


def plot_h_star(cells: pd.DataFrame) -> Figure:
    """Fig. 2: h* per (m, d_model) cell with its interval (head counts tied by the paired t-test)."""
    set_style()
    c = cells[cells["h_star"].notna()].sort_values(["d_model", "m"]).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(min(max(5, 0.5 * len(c) + 1.5), MAX_WIDTH_IN), 3.6))
    if not len(c):
        nothing_to_draw(f"no cell reached mean F1 {F1_TARGET} at any tested budget: no h* to show", ax)
        return fig
    x = np.arange(len(c))
    hs = c["h_star"].astype(float).to_numpy()
    lo, hi = c["h_lo"].astype(float).to_numpy(), c["h_hi"].astype(float).to_numpy()
    ax.vlines(x, lo, hi, color="gray", lw=3, alpha=0.5, label="tied head counts (p > 0.05)")
    ax.scatter(x, hs, c=[head_color(int(h)) for h in hs], s=60, zorder=3, edgecolors="k", label="$h^*$")
    ax.set_yscale("log", base=2)
    ax.set_xticks(x, [f"({m},{d})" for m, d in zip(c["m"], c["d_model"])], rotation=90, fontsize=MIN_FONT_PT)
    ax.set_xlabel(r"cell $(m, d_{model})$")
    ax.set_ylabel("$h^*$")
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig


def _fit_label(name: str, f: Fit) -> str:
    icpt = "" if f.through_origin else f" {f.intercept:+.1f}"
    return f"{name}: {f.slope:.2f} x{icpt}  ($R^2$={f.r2:.2f}, n={f.n})"


def plot_scaling_law(
    cells: pd.DataFrame,
    fits: LawFits | None,
    bounds: pd.DataFrame | None = None,
    xlabel: str = r"$m \ln m / d_{model}$",
) -> Figure:
    """Fig. 3: D_K* against m ln m / d_model with its fits (left). With ``bounds``
    (:func:`rgr.results.thresholds.bracket`) a second, log-log panel puts beside the learned D_K* of each cell
    the necessary budget for the family sampled (``lower_sampled``: the float32 bit-budget bound counting
    derangements; ``lower`` when absent), the rank-one construction (``construction``: one rank-one head per
    edge, D_K = m') and the paper's Algorithm 1 (``algorithm1``, drawn where it separated; the legend counts
    the cells where it was tried and did not)."""
    set_style()
    ok = cells[cells["D_K_star"].notna()]
    two = bounds is not None and len(bounds)
    # the panels stack (top: the law; below: the bracket), each with its legend in a row of its own under it, so no
    # legend covers data or an axis label; both log-log (the cells span two decades)
    rows = [4.0, 1.0, 4.0, 1.5] if two else [4.0, 1.0]
    fig, (ax, lax, *more) = stacked(fig_size(6.8, 12.4 if two else 5.6), rows)
    if fits is None or not len(ok):
        nothing_to_draw(f"too few cells reached mean F1 {F1_TARGET} to fit the law ({len(ok)} of {len(cells)})", ax)
    else:
        _law_panel(ax, ok, fits, xlabel)
    legend_row(lax, ax)
    if two:
        _bracket_panel(more[0], cells, bounds, xlabel)
        legend_row(more[1], more[0])
    fig.tight_layout()
    return fig


def _law_panel(ax, ok: pd.DataFrame, fits: LawFits, xlabel: str) -> None:
    for d, g in ok.groupby("d_model"):
        y = g["D_K_star"].astype(float)
        err = np.vstack([y - g["D_K_opt"].astype(float), g["D_K_cons"].astype(float) - y])
        ax.errorbar(g["x_law"], y, yerr=np.nan_to_num(np.clip(err, 0, None)), fmt="o", capsize=3,
                    label=f"learned $D_K^*$, $d_{{model}}$={d}")
    x = ok["x_law"].astype(float)
    xs = np.geomspace(float(x.min()) / 1.2, float(x.max()) * 1.2, 50)
    ax.plot(xs, fits.origin_all(xs), "k-", lw=1, label=_fit_label("fit, all", fits.origin_all))
    if fits.origin_pre is not None and fits.n_excluded:
        ax.plot(xs, fits.origin_pre(xs), "k--", lw=1, label=_fit_label("fit, precondition", fits.origin_pre))
    plain_log_axes(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"$D_K^*$")


def _bracket_panel(bx, cells: pd.DataFrame, bounds: pd.DataFrame, xlabel: str) -> None:
    b = bounds.merge(cells[["m", "d_model", "r", "D_K_star"]], on=["m", "d_model", "r"],
                     how="left").sort_values("x_law")
    lower = "lower_sampled" if "lower_sampled" in b and b["lower_sampled"].notna().any() else "lower"
    for _, row in b.iterrows():
        ys = [float(v) for v in (row.get(lower), row["D_K_star"], row.get("construction")) if pd.notna(v)]
        bx.plot([row["x_law"]] * len(ys), ys, color="0.75", lw=0.8, zorder=1)
    if "construction" in b:
        bx.plot(b["x_law"], b["construction"], "^", color="tab:green", mfc="none",
                label="one rank-one head per edge, calibrated $\\tau$ ($D_K^* \\leq m'$)")
    if "algorithm1" in b:
        tried = b[b["algorithm1_tested"]]
        miss = int(tried["algorithm1"].isna().sum())
        bx.plot(tried["x_law"], tried["algorithm1"], "s", color="tab:purple", mfc="none",
                label=f"Algorithm 1, paper's split (separates none of {miss} cells)" if miss == len(tried)
                else f"Algorithm 1, paper's split (fails in {miss} of {len(tried)} cells)")
    bx.plot(b["x_law"], b["D_K_star"].astype(float), "o", color="k", label=r"learned $D_K^*$")
    which = "derangements" if lower == "lower_sampled" else "all $m'$-edge graphs"
    bx.plot(b["x_law"], b[lower], "v", color="tab:red", label=f"bit-budget bound, float32, {which} (necessary)")
    plain_log_axes(bx, "x")
    plain_log_axes(bx, "y", subs=(1.0,))
    bx.margins(y=0.08)  # the markers at the top and bottom stay whole
    bx.set_xlabel(xlabel)
    bx.set_ylabel(r"$D_K$")
    bx.set_title("necessary, learned, sufficient", fontsize=MIN_FONT_PT)


def plot_heads_law(cells: pd.DataFrame, fit: Fit | None) -> Figure:
    """Fig. 10: h* against m / d_model with its least-squares line."""
    set_style()
    ok = cells[cells["h_star"].notna()]
    fig, ax = plt.subplots(figsize=fig_size(5.6, 4))
    if not len(ok):
        nothing_to_draw(f"no cell reached mean F1 {F1_TARGET}: no h* to plot", ax)
        return fig
    ax.scatter(ok["lam"], ok["h_star"].astype(float), c=[head_color(int(h)) for h in ok["h_star"]], s=55,
               edgecolors="k")
    if fit is not None:
        xs = np.linspace(0, ok["lam"].max() * 1.05, 20)
        ax.plot(xs, fit(xs), "k--", lw=1, label=_fit_label("fit", fit))
        ax.legend(frameon=False, fontsize=9)
    ax.set_xlabel(r"$m / d_{model}$")
    ax.set_ylabel("$h^*$")
    fig.tight_layout()
    return fig


def plot_diagonal(cells: pd.DataFrame, fit: Fit | None = None) -> Figure:
    """Fig. 4: along a fixed m / d_model, D_K* (line with its optimistic-conservative bar, left axis) and
    h* (bars, right axis) against m. With ``fit`` (a through-origin fit of D_K* on m ln m / d_model), the
    law's prediction c (m / d_model) ln m is drawn dashed: at fixed compression it grows like ln m."""
    set_style()
    c = cells.sort_values("m").reset_index(drop=True)
    fig, ax = plt.subplots(figsize=fig_size(6.4, 4))
    if not c["D_K_star"].notna().any():
        nothing_to_draw(f"no cell on this diagonal reached mean F1 {F1_TARGET}", ax)
        return fig
    x = np.arange(len(c))
    ax2 = ax.twinx()
    ax2.bar(x, c["h_star"].astype(float).fillna(0),
            color=[head_color(int(h)) if pd.notna(h) else "w" for h in c["h_star"]],
            alpha=0.45, width=0.5)
    for i, h in enumerate(c["h_star"]):
        if pd.notna(h):
            ax2.annotate(f"h*={int(h)}", (i, float(h)), ha="center", va="bottom", fontsize=MIN_FONT_PT, color="0.3")
    ax2.set_ylabel("$h^*$ (bars)")
    ax2.set_ylim(0, np.nanmax([1.0, *c["h_star"].astype(float)]) * 1.25)
    ax2.grid(False)
    y = c["D_K_star"].astype(float)
    err = np.vstack([y - c["D_K_opt"].astype(float), c["D_K_cons"].astype(float) - y])
    ax.errorbar(x, y, yerr=np.nan_to_num(np.clip(err, 0, None)), fmt="ko-", capsize=3, label=r"learned $D_K^*$")
    if fit is not None:
        law = fit.slope * c["m"] * np.log(c["m"]) / c["d_model"]
        ax.plot(x, law, "k--", lw=1, label=rf"law: {fit.slope:.2f} $(m/d_{{model}}) \ln m$")
    ax.set_ylim(0, None)
    ticks, xlabel = [f"{m}\n({d})" for m, d in zip(c["m"], c["d_model"])], r"m  ($d_{model}$)"
    kinds = c[["preset", "n_seeds"]].drop_duplicates() if {"preset", "n_seeds"} <= set(c) else c.iloc[:0]
    if len(kinds) > 1:  # cells from several presets or seed counts: say which is which, compactly (six ticks fit)
        ticks = [f"{t}\n{p}\nn={int(n)}" for t, p, n in zip(ticks, c["preset"], c["n_seeds"])]
        xlabel = r"m  ($d_{model}$), preset, seeds n"
    ax.set_xticks(x, ticks)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"$D_K^*$ (line)")
    ax.legend(fontsize=9, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)  # off the bars
    ax.set_zorder(ax2.get_zorder() + 1)
    ax.patch.set_visible(False)
    fig.tight_layout()
    return fig


# Show the option at selectedIndex, hide the rest (scoped to this picker's own images).
_ONCHANGE = (
    "var p=this.closest('.rgr-picker').querySelectorAll('img[data-rgr-pick]');"
    "for(var i=0;i<p.length;i++){p[i].hidden=(i!==this.selectedIndex);}"
)


# 1.5 PNG pixels per CSS pixel: sharp on high-DPI screens at about 70% of the bytes of 2x; a picker
# carries every one of its figures in the page (12 single-cell F1 figures: about 75 KB each as base64)
_PICKER_DPI = 1.5 * FIGURE_DPI


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_picker(figures: Mapping[str, Figure], label: str, dpi: float = _PICKER_DPI) -> HTML:
    """A drop-down of ``figures``' names (in order) above the chosen figure; the first is shown first.

    ``label``: what the names are (shown before the drop-down, e.g. ``"cell (m, d_model)"``).
    ``dpi``: pixels per inch of the PNGs; each is shown at ``FIGURE_DPI`` CSS pixels per inch of
    figure (its drawn size, as the book's other figures), so a ``dpi`` above that keeps it sharp on
    high-DPI screens.
    """
    if not isinstance(figures, Mapping) or not figures:
        raise ValueError(f"figures must be a non-empty mapping of name -> Figure, got {figures!r}")
    bad = [name for name, fig in figures.items() if not isinstance(name, str) or not isinstance(fig, Figure)]
    if bad:
        raise TypeError(f"figures must map names (str) to matplotlib Figures; not so for {bad!r}")
    if not isinstance(label, str) or not label.strip():
        raise ValueError(f"label must be a non-empty string, got {label!r}")
    uid = "rgr-picker-" + hashlib.sha256("|".join([label, *figures]).encode()).hexdigest()[:8]
    options, images = [], []
    for i, (name, fig) in enumerate(figures.items()):
        text = html.escape(name, quote=True)
        png, width, _ = shown_png(fig, dpi)  # shown at its drawn size, at most the style's widest
        options.append(f'<option value="{i}"{" selected" if i == 0 else ""}>{text}</option>')
        images.append(
            f'<img data-rgr-pick="{i}" src="{_uri(png)}" alt="{text}" width="{round(width)}"'
            f' style="max-width:100%;height:auto"{"" if i == 0 else " hidden"}>'
        )
    return HTML(
        f'<div class="rgr-picker" id="{uid}">'
        f'<label for="{uid}-select">{html.escape(label)}: </label>'
        f'<select id="{uid}-select" onchange="{_ONCHANGE}">{"".join(options)}</select>'
        f'<div class="rgr-picker-figures">{"".join(images)}</div></div>'
    )
