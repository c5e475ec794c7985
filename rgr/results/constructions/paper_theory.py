"""The book's own findings about the paper's theory, as one frozen finding (chapter *constructions*; reused by the
intro and *Does it replicate?*).

Two findings, each computed, each with the conditions it was measured under:

1. **A gap in Theorem 8.1's proof.** Inside every bound the proof makes explicit (:mod:`rgr.theory.theorem81`:
   ``d_k >= 64 (ln m)^2``, ``ell > 8 max(h, ln m)``, ``h = m / d_model``), Algorithm 2's false positives on rows
   whose target is present *grow* with the head width, which the theorem excludes; removing the leakage mean
   (:mod:`rgr.studies.theorem81`) leaves a count that does not grow. The book's repair is a *sufficient
   condition*, sketched and not proved, checked numerically only on its leakage half (``kappa <= 1``) at widths
   below the proof's floor; at the proof's own constants its window opens only at ``m`` =
   :func:`rgr.theory.theorem81.repair_smallest_m`.
2. **Where Algorithm 1 starts to separate.** The ``d_k -> infinity`` limit of Algorithm 1 separates every pair on
   at least half the seeds only from ``d_model / ln m`` of about 32-37 (the measured onset; Theorem 4.1's ``c_0``,
   which asks for separation with high probability, is at least that).

:func:`rgr.studies.theorem81.theorem81_tables` and :func:`rgr.studies.theory_checks.algorithm1_onset` compute the
tables, :func:`paper_theory_finding` reads them. The intro and *Does it replicate?* paste the chapter's glued
``paper_*`` numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...theory.theorem81 import PROOF_C, REPAIR_C, inside_theorem81, repair_smallest_m, theorem81_bounds
from .findings import onset_crossover

__all__ = ["PaperTheoryFinding", "paper_theory_finding"]

_REPAIR_STATUS = "a sufficient condition, sketched in the book and not proved"


@dataclass(frozen=True)
class PaperTheoryFinding:
    """The book's findings about the paper's theory (see the module docstring).

    Theorem 8.1 (``gap_*``): the cell, its heads, the two context lengths and the widths used (all inside the
    proof's explicit bounds, ``gap_inside``), the target-present non-edge false positives at the smallest and
    largest width (and per 1,000 such non-edges) at each length, the most left once the leakage mean is removed,
    and whether the count rises at every doubling of the width at both lengths (``gap_trend``: the same in
    words). The repair (``repair_*``): its condition and status, how many rows
    checked it numerically and on which cell, the most failures the leakage added there, and the smallest
    ``m = 2^k`` at which its window is non-empty at the proof's constants (C = 64, c = 1/2, h = 2).
    Algorithm 1 (``onset_*``): the range over the tested m of the smallest ``d_model / ln m`` at which at least
    half the seeds separate, the same for every seed, the m tried (as text) and the seeds per point.
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
    gap_trend: str  # "rise" | "do not rise steadily"
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
    onset_ms: str  # "64, 128, ..."
    onset_seeds: int


def paper_theory_finding(gap: pd.DataFrame, repair: pd.DataFrame, onset: pd.DataFrame) -> PaperTheoryFinding:
    """Read the gap and repair tables of :func:`rgr.studies.theorem81.theorem81_tables` and the onset table of
    :func:`rgr.studies.theory_checks.algorithm1_onset` (see :class:`PaperTheoryFinding`)."""
    if gap.empty or repair.empty or onset.empty:
        raise ValueError("paper_theory_finding needs non-empty gap, repair and onset tables")
    if gap[["m", "d_model"]].drop_duplicates().shape[0] != 1:
        raise ValueError("the gap table must hold one cell (m, d_model); widths and context lengths vary")
    m, d_model = int(gap.m.iloc[0]), int(gap.d_model.iloc[0])
    b = theorem81_bounds(m, d_model)
    by_ell = {int(e): g.sort_values("d_k") for e, g in gap.groupby("ell")}
    short, long = by_ell[min(by_ell)], by_ell[max(by_ell)]
    rate = 1000 * long.present / long.n_present.clip(lower=1)
    r = repair
    rep = r[r.kappa <= 1.0]
    rm, rd = int(r.m.iloc[0]), int(r.d_model.iloc[0])
    cross, every = onset_crossover(onset), onset_crossover(onset, level=1.0)
    grows = all(len(g) > 1 and bool(np.all(np.diff(g.present.to_numpy()) > 0)) for g in by_ell.values())

    def span(c: pd.DataFrame, f) -> float:
        return float(f(c.ratio_cross)) if c.ratio_cross.notna().any() else math.nan

    return PaperTheoryFinding(
        gap_cell=(m, d_model), gap_h=int(gap.h.iloc[0]), gap_ell=max(by_ell), gap_ell_short=min(by_ell),
        gap_ell_min=b.ell_min, gap_d_k_min=b.d_k_min,
        gap_d_k_lo=int(long.d_k.iloc[0]), gap_d_k_hi=int(long.d_k.iloc[-1]),
        gap_present_lo=int(long.present.iloc[0]), gap_present_hi=int(long.present.iloc[-1]),
        gap_rate_lo=float(rate.iloc[0]), gap_rate_hi=float(rate.iloc[-1]),
        gap_short_present_lo=int(short.present.iloc[0]), gap_short_present_hi=int(short.present.iloc[-1]),
        gap_no_leak_max=int(gap.present_no_leak.max()),
        gap_grows=grows, gap_trend="rise" if grows else "do not rise steadily",
        gap_inside=all(inside_theorem81(m, d_model, int(k), int(e)) for k, e in zip(gap.d_k, gap.ell)),
        gap_contexts=int(long.n.iloc[0]),
        repair_condition=f"d_k ln m / d_model <= c, so d_model >= (C/c)(ln m)^3 (C = {PROOF_C:g}, c = {REPAIR_C:g} "
                         "at the proof's constants)",
        repair_status=_REPAIR_STATUS, repair_cell=(rm, rd), repair_rows=len(rep),
        repair_d_k_max=int(rep.d_k.max()) if len(rep) else -1,
        repair_excess_max=max(0, int((rep.present - rep.present_no_leak).max())) if len(rep) else -1,
        repair_below_proof_floor=bool((rep.d_k < theorem81_bounds(rm, rd).d_k_min).all()) if len(rep) else False,
        repair_rows_inside=sum(inside_theorem81(rm, rd, int(k), int(e)) for k, e in zip(rep.d_k, rep.ell)),
        repair_smallest_m=repair_smallest_m(),
        onset_lo=span(cross, pd.Series.min), onset_hi=span(cross, pd.Series.max),
        onset_all_lo=span(every, pd.Series.min), onset_all_hi=span(every, pd.Series.max),
        onset_ms=", ".join(str(int(v)) for v in cross.m), onset_seeds=int(cross.n_seeds.max()),
    )
