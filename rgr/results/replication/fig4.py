"""Readings of Fig. 4 (the lambda = 8 diagonal), chapter *Does it replicate?*.

Same rows and conventions as :mod:`rgr.results.replication.sec61`: every interval is the 95% noise interval of
:mod:`rgr.results.replication.seed_bootstrap`. A ratio between two cells is read only when both come from one
preset; the basis names each cell's seeds and step cutoff. App. A.3's rows (r-regular graphs) are read beside the
regular table's other readings, in :mod:`rgr.results.denser_graphs`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...theory.bounds import scaling_x
from .. import reported as rep
from ..diagonals import STOP_COLUMNS, at_threshold, cutoff_reason, on_diagonal, with_cells_of
from .rows import ClaimRow, Source, basis, cutoffs, futility_words, reached, untestable
from .seed_bootstrap import Draws, cell_noise, noise, origin_slope, seed_draws
from .verdicts import Verdict, combined, noise_verdict, side_verdict

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
    return f"{presets}: {per} (paper {rep.PAPER_SEEDS['lambda8']} seeds, {few} at m >= {m_few})" + futility_words(runs)


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
    n = noise(d, lambda dk, h: dk[late[-1]] / dk[late[0]], mixed=True)
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

    ns = {int(d.cells.m.iloc[j]): noise(d, lambda dk, h, j=j: dk[j] / (origin_slope(x[late], dk[late]) * x[j]),
                                        mixed=True)
          for j in early}
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

