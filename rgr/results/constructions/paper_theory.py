"""The book's own findings about the paper's theory, as one frozen finding (chapter *constructions*; reused by the
intro and *Does it replicate?*).

Two findings, each computed, each with the conditions it was measured under:

1. **A gap in Theorem 8.1's proof.** Inside every bound the proof makes explicit (:mod:`rgr.theory.theorem81`:
   ``d_k >= 64 (ln m)^2``, ``ell > 8 max(h, ln m)``, ``h = m / d_model``), Algorithm 2's false positives on rows
   whose target is present *grow* with the head width, which the theorem excludes; removing the leakage mean
   (:mod:`rgr.theory.softmax_width`) leaves a count that does not grow. The book's repair is a *sufficient
   condition*, sketched and not proved, checked numerically only on its leakage half (``kappa <= 1``) at widths
   below the proof's floor; at the proof's own constants its window opens only at ``m`` =
   :func:`rgr.theory.theorem81.repair_smallest_m`.
2. **Where Algorithm 1 starts to separate.** The ``d_k -> infinity`` limit of Algorithm 1 separates every pair on
   at least half the seeds only from ``d_model / ln m`` of about 32-37 (the measured onset; Theorem 4.1's ``c_0``,
   which asks for separation with high probability, is at least that).

:func:`paper_theory_tables` computes the three tables, :func:`paper_theory_finding` reads them,
:func:`paper_theory_check` does both; :func:`paper_theory_lines` words the finding in plain sentences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..theory.softmax_width import width_sweep
from ..theory.theorem81 import (
    PROOF_C,
    REPAIR_C,
    inside_theorem81,
    repair_smallest_m,
    theorem81_bounds,
    theorem81_widths,
)
from .findings import glued
from .theory_checks import algorithm1_onset, onset_crossover
from .theory_presets import THEORY_PRESETS, TheoryPreset

__all__ = ["PaperTheoryTables", "PaperTheoryFinding", "paper_theory_tables", "paper_theory_finding",
           "paper_theory_check", "paper_theory_lines", "paper_theory_glue", "REPAIR_STATUS"]

REPAIR_STATUS = "a sufficient condition, sketched in the book and not proved"


@dataclass(frozen=True)
class PaperTheoryTables:
    """``gap``: Algorithm 2 at the theory cell on widths and contexts inside Theorem 8.1's explicit bounds;
    ``repair``: the repair cell's rows (the sufficient condition's leakage half, ``kappa <= 1``, at small widths);
    ``onset``: Algorithm 1's limit separation per (m, d_model / ln m, seed)."""

    gap: pd.DataFrame
    repair: pd.DataFrame
    onset: pd.DataFrame


@dataclass(frozen=True)
class PaperTheoryFinding:
    """The book's findings about the paper's theory (see the module docstring).

    Theorem 8.1 (``gap_*``): the cell, its heads, the two context lengths and the widths used (all inside the
    proof's explicit bounds, ``gap_inside``), the target-present non-edge false positives at the smallest and
    largest width (and per 1,000 such non-edges) at each length, the most left once the leakage mean is removed,
    and whether the count rises at every doubling of the width at both lengths. The repair (``repair_*``): its condition and status, how many rows
    checked it numerically and on which cell, the most failures the leakage added there, and the smallest
    ``m = 2^k`` at which its window is non-empty at the proof's constants (C = 64, c = 1/2, h = 2).
    Algorithm 1 (``onset_*``): the range over the tested m of the smallest ``d_model / ln m`` at which at least
    half the seeds separate, the same for every seed, the m tried and the seeds per point.
    """

    gap_cell: tuple[int, int]
    gap_h: int
    gap_ell: int  # the longer context (m / 4): far inside the bound; the quoted counts are at this length
    gap_ell_short: int  # the shortest context the bound allows
    gap_ell_min: int  # the theorem's explicit bound: ell > 8 max(h, ln m)
    gap_d_k_min: int  # the theorem's explicit bound: d_k >= 64 (ln m)^2
    gap_d_k_lo: int
    gap_d_k_hi: int
    gap_present_lo: int
    gap_present_hi: int
    gap_rate_lo: float  # per 1,000 target-present non-edges
    gap_rate_hi: float
    gap_short_present_lo: int  # the same counts at the shortest context
    gap_short_present_hi: int
    gap_no_leak_max: int
    gap_grows: bool
    gap_inside: bool
    gap_contexts: int  # sampled contexts per width
    repair_condition: str
    repair_status: str
    repair_cell: tuple[int, int]
    repair_rows: int
    repair_d_k_max: int
    repair_excess_max: int  # present failures the leakage adds, rows with kappa <= 1
    repair_below_proof_floor: bool  # every checked width is below the proof's 64 (ln m)^2
    repair_rows_inside: int  # checked rows that also meet Theorem 8.1's explicit bounds on d_k and ell
    repair_smallest_m: int
    onset_lo: float
    onset_hi: float
    onset_all_lo: float
    onset_all_hi: float
    onset_ms: tuple[int, ...]
    onset_seeds: int


def paper_theory_tables(tp: TheoryPreset, seed: int = 0, n_widths: int = 3) -> PaperTheoryTables:
    """Compute the three tables at a theory preset's sizes (the theory cell is ``tp.width_cells[0]``).

    The gap table holds two context lengths: the shortest the proof allows (``tp.width_n`` contexts) and
    ``m / 4``, far inside it (a fifth as many contexts: each is 16 times the work).
    """
    m, d_model = tp.width_cells[0]
    b = theorem81_bounds(m, d_model)
    widths = theorem81_widths(m, d_model, n_widths)
    long_ell = max(b.ell_min + 1, m // 4)
    gap = pd.concat([width_sweep([(m, d_model)], widths, [b.ell_min], [seed], n=tp.width_n),
                     width_sweep([(m, d_model)], widths, [long_ell], [seed], n=max(10, tp.width_n // 5))],
                    ignore_index=True)
    repair = width_sweep([tp.repair_cell], list(tp.repair_d_ks), list(tp.width_ells), [seed], n=tp.width_n)
    onset = algorithm1_onset(list(tp.onset_ms), list(tp.onset_ratios), list(range(seed, seed + tp.onset_seeds)))
    return PaperTheoryTables(gap=gap, repair=repair, onset=onset)


def paper_theory_finding(t: PaperTheoryTables) -> PaperTheoryFinding:
    """Read :class:`PaperTheoryTables` (see :class:`PaperTheoryFinding`)."""
    if t.gap.empty or t.repair.empty or t.onset.empty:
        raise ValueError("paper_theory_finding needs non-empty gap, repair and onset tables")
    if t.gap[["m", "d_model"]].drop_duplicates().shape[0] != 1:
        raise ValueError("the gap table must hold one cell (m, d_model); widths and context lengths vary")
    m, d_model = int(t.gap.m.iloc[0]), int(t.gap.d_model.iloc[0])
    b = theorem81_bounds(m, d_model)
    by_ell = {int(e): g.sort_values("d_k") for e, g in t.gap.groupby("ell")}
    short, long = by_ell[min(by_ell)], by_ell[max(by_ell)]
    rate = 1000 * long.present / long.n_present.clip(lower=1)
    r = t.repair
    rep = r[r.kappa <= 1.0]
    rm, rd = int(r.m.iloc[0]), int(r.d_model.iloc[0])
    cross, every = onset_crossover(t.onset), onset_crossover(t.onset, level=1.0)

    def span(c: pd.DataFrame, f) -> float:
        return float(f(c.ratio_cross)) if c.ratio_cross.notna().any() else math.nan

    return PaperTheoryFinding(
        gap_cell=(m, d_model), gap_h=int(t.gap.h.iloc[0]), gap_ell=max(by_ell), gap_ell_short=min(by_ell),
        gap_ell_min=b.ell_min, gap_d_k_min=b.d_k_min, gap_d_k_lo=int(long.d_k.iloc[0]), gap_d_k_hi=int(long.d_k.iloc[-1]),
        gap_present_lo=int(long.present.iloc[0]), gap_present_hi=int(long.present.iloc[-1]),
        gap_rate_lo=float(rate.iloc[0]), gap_rate_hi=float(rate.iloc[-1]),
        gap_short_present_lo=int(short.present.iloc[0]), gap_short_present_hi=int(short.present.iloc[-1]),
        gap_no_leak_max=int(t.gap.present_no_leak.max()),
        gap_grows=all(len(g) > 1 and bool(np.all(np.diff(g.present.to_numpy()) > 0)) for g in by_ell.values()),
        gap_inside=all(inside_theorem81(m, d_model, int(k), int(e)) for k, e in zip(t.gap.d_k, t.gap.ell)),
        gap_contexts=int(long.n.iloc[0]),
        repair_condition=f"d_k ln m / d_model <= c, so d_model >= (C/c)(ln m)^3 (C = {PROOF_C:g}, c = {REPAIR_C:g} "
                         "at the proof's constants)",
        repair_status=REPAIR_STATUS, repair_cell=(rm, rd), repair_rows=len(rep),
        repair_d_k_max=int(rep.d_k.max()) if len(rep) else -1,
        repair_excess_max=max(0, int((rep.present - rep.present_no_leak).max())) if len(rep) else -1,
        repair_below_proof_floor=bool((rep.d_k < theorem81_bounds(rm, rd).d_k_min).all()) if len(rep) else False,
        repair_rows_inside=sum(inside_theorem81(rm, rd, int(k), int(e)) for k, e in zip(rep.d_k, rep.ell)),
        repair_smallest_m=repair_smallest_m(),
        onset_lo=span(cross, pd.Series.min), onset_hi=span(cross, pd.Series.max),
        onset_all_lo=span(every, pd.Series.min), onset_all_hi=span(every, pd.Series.max),
        onset_ms=tuple(int(v) for v in cross.m), onset_seeds=int(cross.n_seeds.max()),
    )


def paper_theory_check(preset: str = "book", seed: int = 0) -> PaperTheoryFinding:
    """Compute and read the tables at ``THEORY_PRESETS[preset]`` (book: about two CPU-minutes)."""
    if preset not in THEORY_PRESETS:
        raise ValueError(f"preset must be one of {sorted(THEORY_PRESETS)}, got {preset!r}")
    return paper_theory_finding(paper_theory_tables(THEORY_PRESETS[preset], seed))


def paper_theory_lines(f: PaperTheoryFinding) -> list[str]:
    """The finding in two plain sentences (numbers from ``f``), for a summary page."""
    m, d = f.gap_cell
    grow = "rise" if f.gap_grows else "do not rise steadily"
    where = "inside" if f.gap_inside else "NOT inside"
    return [
        f"Theorem 8.1's proof has a gap: {where} the bounds its proof makes explicit (m = {m}, d_model = {d}, "
        f"h = {f.gap_h}, d_k >= {f.gap_d_k_min}, ell >= {f.gap_ell_min}), Algorithm 2's false positives on rows "
        f"holding the target {grow} with the head width, from {f.gap_present_lo} to {f.gap_present_hi} as d_k goes "
        f"from {f.gap_d_k_lo} to {f.gap_d_k_hi} at ell = {f.gap_ell} (at most {f.gap_no_leak_max} once the leakage "
        f"mean is removed); the book's repair is {f.repair_status}, and at the proof's constants it applies only "
        f"from m = {f.repair_smallest_m:,}.",
        f"Algorithm 1's infinitely wide limit separates every pair on at least half the seeds only from "
        f"d_model / ln m = {f.onset_lo:.1f} to {f.onset_hi:.1f} over m = {', '.join(map(str, f.onset_ms))} "
        f"(on every seed: from {f.onset_all_lo:.1f} to {f.onset_all_hi:.1f}); Theorem 4.1's c_0 is at least that.",
    ]


def paper_theory_glue(f: PaperTheoryFinding) -> dict[str, object]:
    """The finding's numbers by the names the chapters glue (``pt_*``), floats rounded as :func:`glued` does."""
    v = dict(pt_cell=str(f.gap_cell), pt_h=f.gap_h, pt_ell=f.gap_ell, pt_ells=f.gap_ell_short, pt_lmin=f.gap_ell_min,
             pt_dkmin=f.gap_d_k_min, pt_dk0=f.gap_d_k_lo, pt_dk1=f.gap_d_k_hi, pt_p0=f.gap_present_lo,
             pt_p1=f.gap_present_hi, pt_r0=f.gap_rate_lo, pt_r1=f.gap_rate_hi, pt_sp0=f.gap_short_present_lo,
             pt_sp1=f.gap_short_present_hi, pt_nl=f.gap_no_leak_max, pt_n=f.gap_contexts,
             pt_grows="rise" if f.gap_grows else "do not rise steadily",
             pt_inside="inside" if f.gap_inside else "not inside", pt_rcell=str(f.repair_cell), pt_nrep=f.repair_rows,
             pt_rdk=f.repair_d_k_max, pt_rex=f.repair_excess_max, pt_rin=f.repair_rows_inside,
             pt_rm=f"{f.repair_smallest_m:,}", on_lo=f.onset_lo, on_hi=f.onset_hi, on_all_lo=f.onset_all_lo,
             on_all_hi=f.onset_all_hi, on_ms=", ".join(map(str, f.onset_ms)), on_seeds=f.onset_seeds)
    return {k: glued(x) for k, x in v.items()}
