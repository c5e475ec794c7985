"""Readings of Fig. 4 (the lambda = 8 diagonal) and App. A.3 (r-regular graphs), chapter *Does it replicate?*.

Same rows and conventions as :mod:`rgr.results.replication.sec61`: every interval is the 95% noise interval of
:mod:`rgr.results.replication.seed_bootstrap` (or, for a statement about F1 curves, their 95% t-intervals across
seeds). A ratio between two cells is read only when both come from one preset; the basis names each cell's seeds
and step cutoff.

Also the regular table read again with its retrained futility stops (issue 45, item 5; chapter *denser graphs*):
the ``unstopped`` extension (:mod:`rgr.experiments.unstopped`, declared before its first row; not the protocol)
retrained, with futility stopping off, the regular table's stopped runs at its false-stop point and on the two
plateau curves. :func:`unstopped_reading` puts them in the stopped rows' place
(:func:`rgr.experiments.futility.with_retrained`), says per retrained point what changed
(:func:`rgr.experiments.futility.retrained_points`) and reads the verdict rows of the regular table
(:func:`regular_rows`: the fit, the bound's form, the plateaus, h*) on both versions. A second reading only: the
protocol table's rows stay the verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...catalog import load_if_present
from ...experiments.futility import retrained_points, with_retrained
from ...protocol import F1_TARGET, reaches_target
from ...theory.bounds import regular_x_bound, scaling_x
from ..diagonals import STOP_COLUMNS, at_threshold, cutoff_reason, on_diagonal, with_cells_of
from ..thresholds import curves
from . import reported as rep
from .rows import ClaimRow, Source, basis, cutoffs, fit_row, reached, untestable
from .seed_bootstrap import Draws, cell_noise, fit_stats, noise, seed_draws
from .verdicts import Verdict, combined, noise_verdict, side_verdict

__all__ = ["THIN_SEEDS", "diag_heads", "diag_rows", "diagonal_runs", "growth_rows", "regular_heads",
           "regular_lower_form", "regular_plateaus", "regular_rows", "UNSTOPPED", "unstopped_runs", "unstopped_reading"]

_DIAG = ("diag_growth", "diag_first_two_above", "diag_heads")


def diagonal_runs(base: Source, lam: Source) -> pd.DataFrame:
    """The lambda = 8 diagonal's runs: lambda8's, and the base grid's in cells lambda8 lacks (never pooled)."""
    on_diag = on_diagonal(base.runs, 8) if len(base.runs) else base.runs
    return (with_cells_of(lam.runs, on_diag) if len(lam.runs) else on_diag).reset_index(drop=True)


def _diagonal_basis(base: Source, lam: Source) -> str:
    """Preset, then seeds and step cutoff per diagonal cell (paper: 10 seeds, 3 at the largest points, its Table 2
    cutoffs); both presets named when they differ."""
    runs = diagonal_runs(base, lam)
    if not len(runs):
        return basis(lam)
    per = "; ".join(f"m = {m}: {int(g['seed'].nunique())} seeds, cutoff {cutoffs(g)}" for m, g in runs.groupby("m"))
    presets = (
        base.preset
        if base.preset == lam.preset or not len(lam.runs)
        else f"base cells {base.preset}, lambda8 cells {lam.preset}"
    )
    m_few, few = rep.PAPER_FEW_SEEDS["lambda8"]
    return f"{presets}: {per} (paper {rep.PAPER_SEEDS['lambda8']} seeds, {few} at m >= {m_few})"


def diag_rows(base: Source, lam: Source) -> list[ClaimRow]:
    """The lambda = 8 diagonal: growth from m >= 512 against ln m, the first two points above that trend, one h*."""
    b = _diagonal_basis(base, lam)
    if len(base.runs) and len(lam.runs) and base.preset != lam.preset:
        why = (f"not comparable yet: the diagonal's cells would come from two presets (base {base.preset}, lambda8 "
               f"{lam.preset}), whose seeds and grids differ; read both at one preset")
        return [untestable(k, why, b, "presets") for k in _DIAG]
    runs = diagonal_runs(base, lam)
    if not len(runs):
        return [untestable(k, "no diagonal cells in these data", b) for k in _DIAG]
    d = reached(seed_draws(runs))
    d = d.take(np.argsort(d.cells["m"].to_numpy(), kind="stable"))
    seeds = {int(m): int(g.groupby(["h", "D_K"])["seed"].nunique().max()) for m, g in runs.groupby("m")}
    return growth_rows(d, b, seeds, runs) + [diag_heads(d, b)]


THIN_SEEDS = 3  # a point measured with fewer seeds has at most 3 distinct seed resamples: its noise interval is thin


def growth_rows(d: Draws, b: str, seeds: dict[int, int], runs: pd.DataFrame | None = None) -> list[ClaimRow]:
    """D_K*(last) / D_K*(first) over m >= 512 against the law's ratio; the cells below 512 against the trend c m ln m /
    d_model fitted on m >= 512, both refitted on every seed replicate. The ratio rests on its two cells: a deviation
    where one has fewer than :data:`THIN_SEEDS` seeds (``seeds``: per m) has the cause "thin"; with their ``runs``,
    a deviation names the step cutoffs as a likely reason where they apply
    (:func:`rgr.results.diagonals.cutoff_reason`)."""
    start = rep.claim("diag_growth").value
    late = np.flatnonzero(d.cells["m"].to_numpy() >= start)
    if len(late) < 2:
        why = f"{len(late)} diagonal cell(s) with m >= {start} and a D_K* in these data; the trend needs 2"
        return [untestable(k, why, b) for k in _DIAG[:2]]
    a, z = d.cells.iloc[late[0]], d.cells.iloc[late[-1]]
    law = float(scaling_x(z.m, z.d_model) / scaling_x(a.m, a.d_model))
    n = noise(d, lambda dk, h: dk[late[-1]] / dk[late[0]])
    thin = [f"m = {int(c.m)}: {seeds.get(int(c.m), 0)} seeds" for c in (a, z) if seeds.get(int(c.m), 0) < THIN_SEEDS]
    short = z.m < rep.PAPER_DIAG_M_MAX
    cave = [f"the book's diagonal stops at m = {int(z.m)} (paper: {rep.PAPER_DIAG_M_MAX})"] if short else []
    cave += [f"the ratio rests on a cell with fewer than {THIN_SEEDS} seeds ({', '.join(thin)})"] if thin else []
    stops = runs is not None and set(STOP_COLUMNS) <= set(runs)
    why = cutoff_reason(at_threshold(runs, d.cells.iloc[[late[0], late[-1]]])) if stops else ""
    cave += [f"a likely reason, not measured here: {why}; the paper's cutoffs (its Table 2) are the same, so this "
             f"does not say why its ratio differs"] if why else []
    cave = "; ".join(cave)
    cave = cave[:1].upper() + cave[1:]
    v = noise_verdict(law, n.value, n.lo, n.hi, n.lo99, n.hi99, caveat=cave)
    if thin and v.status == "deviates" and not v.near_miss:
        v = Verdict(v.status, v.detail, cause="thin")
    rows = [
        ClaimRow(key="diag_growth", book=f"D_K*({int(z.m)}) / D_K*({int(a.m)}) = {n.value:.2f} (law: {law:.2f})",
                 interval=n.words(), basis=b, verdict=v, value=n.value, lo=n.lo, hi=n.hi)
    ]
    x = d.cells["x_law"].to_numpy(float)
    early = np.flatnonzero(d.cells["m"].to_numpy() < start)

    def ratio(j: int):
        return lambda dk, h: dk[j] / ((x[late, None] * dk[late]).sum(0) / (x[late] ** 2).sum() * x[j])

    ns = {int(d.cells.m.iloc[j]): noise(d, ratio(j)) for j in early}
    vs = [side_verdict(q.lo, q.hi, 1.0, True, f"m = {m}'s D_K* over the trend") for m, q in ns.items()]
    why = (
        f"{sum(v.status == 'agrees' for v in vs)} of {len(vs)} early points lie above the trend c m ln m / d_model "
        f"fitted "
        f"on m >= {start} ({len(late)} points) across their 95% noise interval"
        + "".join(f"; {v.detail}" for v in vs if v.status != "agrees")
    )
    rows.append(ClaimRow("diag_first_two_above", ", ".join(f"m = {m}: {q.value:.2f}x the trend" for m, q in ns.items()),
                         ", ".join(f"[{q.lo:.2f}, {q.hi:.2f}]" for q in ns.values()), b,
                         combined(vs, why) if vs else Verdict("deviates", why),
                         float(sum(v.status == "agrees" for v in vs))))
    return rows


def diag_heads(d: Draws, b: str) -> ClaimRow:
    """One head count lies in every diagonal cell's h* noise interval (h* constant at fixed compression)."""
    if len(d.cells) < 2:
        return untestable("diag_heads", "fewer than 2 diagonal cells with h*", b)
    h = cell_noise(d, "h_star")
    lo, hi = int(h["lo"].max()), int(h["hi"].min())
    txt = ", ".join(f"m = {int(r.m)}: {int(r.value)} [{int(r.lo)}, {int(r.hi)}]" for r in h.itertuples())
    v = Verdict("agrees" if lo <= hi else "deviates",
                (f"the h* noise intervals share h = {lo}" + (f"–{hi}" if hi > lo else "")) if lo <= hi
                else "the h* noise intervals have no common head count")
    return ClaimRow("diag_heads", txt, "95% noise intervals of h*", b, v)


def regular_rows(src: Source) -> list[ClaimRow]:
    """E4 over r <= 16 (the paper's range): the fit D_K* = c x, the bound forms, the plateaus, h* against r m /
    d_model."""
    b = basis(src)
    d = reached(seed_draws(src.runs, law="regular")) if len(src.runs) else None
    ok = d.subset((d.cells["r"] <= 16).to_numpy()) if d is not None else None
    rows = []
    if ok is not None and len(ok.cells) >= 2:
        rows.append(fit_row("regular_slope", ok, ("x_law", "dk", False, "slope", 1.0), b + "; r ≤ 16", []))
        rows.append(regular_lower_form(ok, b + "; r ≤ 16"))
    else:
        n = 0 if ok is None else len(ok.cells)
        rows += [
            untestable(k, f"{n} out-degrees r <= 16 with a D_K*; a fit needs 2", b)
            for k in ("regular_slope", "regular_lower_form")
        ]
    rows.append(regular_plateaus(src, b))
    rows.append(regular_heads(ok, b, int(src.runs["h"].max()) if len(src.runs) else 0))
    c = ok.cells if ok is not None else pd.DataFrame(columns=["r"])
    construct = f"the book's D_K* at r = 16 is {int(c[c.r == 16].D_K_star.iloc[0])}; " if (c.r == 16).any() else ""
    rows.append(
        untestable(
            "regular_r16_bound",
            construct + "the paper's constructive bound carries a constant C it does not fix for "
            "this size; the book's prescribed construction fails at this cell and its only separating one is one "
            "rank-one head per edge (D_K = m'), a trivial bound (chapter constructions)",
            b,
            "no_number",
        )
    )
    return rows


def regular_lower_form(ok: Draws, b: str) -> ClaimRow:
    """The lower bound's form (m'/d_model) log2(m²/m') fits D_K* through the origin better than (r m / d_model) log2 m:
    R² of the first minus R² of the second above 0 across its 95% noise interval."""
    c = ok.cells
    xb = np.asarray(regular_x_bound(c["r"], c["m"], c["d_model"]), float)
    xl = c["x_law"].to_numpy(float)
    n = noise(ok, lambda dk, h: fit_stats(xb, dk, False)[2] - fit_stats(xl, dk, False)[2])
    r2b, r2l = (float(fit_stats(x, c["D_K_star"].to_numpy(float)[:, None], False)[2][0]) for x in (xb, xl))
    v = side_verdict(n.lo, n.hi, 0.0, True, "R²(lower-bound form) − R²(log2 m form)")
    return ClaimRow(key="regular_lower_form", book=f"R² {r2b:.3f} (lower-bound form) vs {r2l:.3f} (log2 m form)",
                    interval=f"difference {n.value:+.3f} [{n.lo:+.3f}, {n.hi:+.3f}]", basis=b, verdict=v, value=n.value,
                    lo=n.lo, hi=n.hi)


def regular_plateaus(src: Source, b: str) -> ClaimRow:
    """r = 2 with h = 1 and r = 4 with h = 2 stay below F1 0.99 at every budget (the t-interval's upper end too);
    h = 4 or 8 reach it at r = 4."""
    s = curves(src.runs) if len(src.runs) else pd.DataFrame()
    need = [(2, 1), (4, 2), (4, 4), (4, 8)]
    have = {(int(r), int(h)) for r, h in s[["r", "h"]].drop_duplicates().itertuples(index=False)} if len(s) else set()
    if not set(need) <= have:
        return untestable("regular_plateaus", f"(r, h) = {sorted(set(need) - have)} not in these data", b)
    best = {k: s[(s.r == k[0]) & (s.h == k[1])].sort_values("mean").iloc[-1] for k in need}
    flat = all(best[k]["hi"] < F1_TARGET for k in need[:2])
    jump = any(reaches_target(best[k]["mean"]) for k in need[2:])
    txt = "; ".join(f"r = {r}, h = {h}: {best[(r, h)]['mean']:.2f}" for r, h in need)
    return ClaimRow(
        "regular_plateaus",
        "best mean F1 — " + txt,
        f"plateaus' 95% upper ends below {F1_TARGET:g}: " + ("yes" if flat else "no"),
        b,
        Verdict(
            "agrees" if flat and jump else "deviates",
            (
                f"one head (r = 2) and two heads (r = 4) stay below {F1_TARGET:g} at every tested budget"
                if flat
                else f"a plateau is not below {F1_TARGET:g}"
            )
            + ("; four or eight heads reach it" if jump else "; neither 4 nor 8 heads reach it"),
        ),
    )


def regular_heads(ok: Draws | None, b: str, top_h: int) -> ClaimRow:
    """Each r's h* noise interval meets [t/2, 2t], t = r m / d_model (the paper's 'within about 2x')."""
    if ok is None or not len(ok.cells):
        return untestable("regular_heads", "no out-degree with h*", b)
    h = cell_noise(ok, "h_star")
    t = (h["r"] * h["m"] / h["d_model"]).astype(float)
    factor = rep.claim("regular_heads").value
    meets = (h["hi"] >= t / factor) & (h["lo"] <= t * factor)
    worst = (t / h["hi"]).max()
    txt = ", ".join(f"r = {int(r.r)}: {int(r.value)} vs {int(tt)}" for r, tt in zip(h.itertuples(), t))
    return ClaimRow(
        "regular_heads",
        "h* vs r m/d_model — " + txt,
        "95% noise intervals of h*",
        b,
        Verdict(
            "agrees" if meets.all() else "deviates",
            f"within {factor:g}x of r m / d_model in {int(meets.sum())} of {len(h)} out-degrees; at worst "
            f"r m / d_model is {worst:.1f}x the upper end of h*'s noise interval; "
            + (
                f"the book's largest head count {top_h} is inside some r's interval, so its cap may matter"
                if (h["hi"] >= top_h).any()
                else f"no interval reaches the book's largest head count {top_h}, so its cap does not explain this"
            ),
        ),
    )


# ------------------------------------------------- the regular rows read again with futility's stops retrained

UNSTOPPED = "unstopped"


def unstopped_runs(preset: str, root: Path | None = None) -> pd.DataFrame:
    """The extension's rows at ``preset``; none when data/ has no table or no rows of it
    (:func:`rgr.catalog.load_if_present`)."""
    return load_if_present(UNSTOPPED, preset, root)


@dataclass(frozen=True)
class _RowChange:
    """One verdict row of the regular table, read on the protocol's rows (``before``) and with the retrained runs in
    the stopped ones' place (``after``)."""

    key: str
    status_before: str
    status_after: str
    book_before: str
    book_after: str
    interval_before: str
    interval_after: str
    value_before: float
    value_after: float

    @property
    def changed(self) -> bool:
        """Whether the status, the book's reading, its interval or its value differ (values to 1e-9; NaN equals
        NaN)."""
        a, b = self.value_before, self.value_after
        same = (math.isnan(a) and math.isnan(b)) or (not math.isnan(a) and not math.isnan(b) and abs(a - b) <= 1e-9)
        words = (self.status_before, self.book_before, self.interval_before)
        return words != (self.status_after, self.book_after, self.interval_after) or not same


@dataclass(frozen=True)
class _UnstoppedReading:
    """What retraining the stopped runs changed. ``points``: :func:`rgr.experiments.futility.retrained_points`;
    ``rows``: every verdict row of the regular table on both versions; the rest: counts for the chapter's prose
    (``false_*``: the false-stop point(s); ``plateau_*``: the plateau curves' points)."""

    retrained: int
    reached: int
    still_cut: int
    false_retrained: int
    false_reached: int
    false_f1_before: float
    false_f1_after: float
    plateau_retrained: int
    plateau_reached: int
    plateau_points: int
    plateau_shift_max: float  # largest |change| of a plateau point's mean F1
    plateau_shift_where: str  # that point: "r = 4, h = 2, D_K = 4096" ("—" without plateau points)
    plateau_best_before: float  # best mean F1 over the plateau points, before and after
    plateau_best_after: float
    rows_read: int
    rows_changed: int
    statuses_changed: int
    changed_words: str  # "none", or "key (status before -> after)" / "key (values only; still status)", ...
    points: pd.DataFrame
    rows: tuple[_RowChange, ...]


def _change(a: ClaimRow, b: ClaimRow) -> _RowChange:
    return _RowChange(a.key, a.verdict.status, b.verdict.status, a.book, b.book, a.interval, b.interval,
                     float(a.value), float(b.value))


def _words(rows: tuple[_RowChange, ...]) -> str:
    moved = [r for r in rows if r.changed]
    if not moved:
        return "none"
    return ", ".join(f"{r.key} ({r.status_before} -> {r.status_after})" if r.status_before != r.status_after
                     else f"{r.key} (values only; still {r.status_before})" for r in moved)


def unstopped_reading(src: Source, retrained: pd.DataFrame, plateaus: tuple[tuple[int, int], ...]) -> _UnstoppedReading:
    """The regular table ``src`` read with ``retrained`` (the extension's rows at ``src``'s preset) in its stopped
    rows' place. ``plateaus``: the (r, h) curves read as plateaus (the other retrained points are false stops)."""
    pts = retrained_points(src.runs, retrained)
    after = Source(src.name, src.preset, with_retrained(src.runs, retrained))
    rows = tuple(_change(a, b) for a, b in zip(regular_rows(src), regular_rows(after)))
    on = pd.Series([(int(r), int(h)) in set(plateaus) for r, h in zip(pts["r"], pts["h"])], index=pts.index,
                   dtype=bool)
    fal, pla = pts[~on], pts[on]

    def mean(df: pd.DataFrame, col: str) -> float:  # a mean over the seeds of the points' runs
        return float((df[col] * df["seeds"]).sum() / df["seeds"].sum()) if len(df) else math.nan

    shift = (pla["f1_after"] - pla["f1_before"]).abs()
    top = pla.loc[shift.idxmax()] if len(pla) else None
    where = "—" if top is None else f"r = {int(top.r)}, h = {int(top.h)}, D_K = {int(top.D_K)}"
    return _UnstoppedReading(
        retrained=int(pts["retrained"].sum()), reached=int(pts["reached"].sum()), still_cut=int(pts["still_cut"].sum()),
        false_retrained=int(fal["retrained"].sum()), false_reached=int(fal["reached"].sum()),
        false_f1_before=mean(fal, "f1_before"), false_f1_after=mean(fal, "f1_after"),
        plateau_retrained=int(pla["retrained"].sum()), plateau_reached=int(pla["reached"].sum()),
        plateau_points=len(pla), plateau_shift_max=float(shift.max()) if len(pla) else math.nan,
        plateau_shift_where=where,
        plateau_best_before=float(pla["f1_before"].max()) if len(pla) else math.nan,
        plateau_best_after=float(pla["f1_after"].max()) if len(pla) else math.nan,
        rows_read=len(rows), rows_changed=sum(r.changed for r in rows),
        statuses_changed=sum(r.status_before != r.status_after for r in rows), changed_words=_words(rows),
        points=pts, rows=rows,
    )
