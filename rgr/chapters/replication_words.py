"""What the chapter *Does it replicate?* says in sentences that choose on its numbers (its Markdown holds the rest).

Each function words a finding of :mod:`rgr.results.replication` whose sentence depends on a verdict or a count, so
that the chapter's Markdown pastes it as one glued name.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..results import reported as rep
from ..results.findings import listed
from ..results.gpt2_block import COMPRESSIVE
from ..results.replication.paper_arithmetic import ArithmeticCheck, all_reproduced
from ..results.replication.registry import Basis, FewSeeds, Reduced
from ..results.replication.rows import EDGE, ClaimRow
from ..results.replication.verdicts import LAW_BASE

_LEASE_MINUTES = 15  # the GPU leases this project gets (the limits' sentence on the GPT-2 block's paper preset)


def _row_value(rows: list[ClaimRow], key: str, digits: int = 2, reading: str | None = None) -> str:
    """The book's number of one row as prose: "1.21 (95% noise interval 1.01–1.26)", or "not testable here";
    ``reading``: the row's :class:`~rgr.results.replication.rows.Reading` whose name starts with it instead."""
    found = [r for r in rows if r.key == key]
    if not found or not math.isfinite(found[0].value):
        return "not testable here"
    r = found[0]
    if reading is not None:
        got = [x for x in r.readings if x.name.startswith(reading)]
        if not got:
            return "not testable here"
        value, lo, hi = got[0].value, got[0].lo, got[0].hi
    else:
        value, lo, hi = r.value, r.lo, r.hi
    if math.isfinite(lo) and math.isfinite(hi):
        return f"{value:.{digits}f} (95% noise interval {lo:.{digits}f}–{hi:.{digits}f})"
    return f"{value:.{digits}f}"


def _fit_words(rows: list[ClaimRow], key: str = "law_r2_pre") -> str:
    """How the book's R² of a fit reads against the paper's, for the start of a sentence:
    "The line itself replicates" (the paper's value in the book's interval), "The line is looser than the
    paper's" / "... tighter ..." (outside it), or "The line's R² cannot be compared here"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable" or not math.isfinite(found[0].value):
        return "The line's R² cannot be compared here"
    if found[0].verdict.status == "agrees":
        return "The line itself replicates"
    return f"The line is {'looser' if found[0].value < rep.claim(key).value else 'tighter'} than the paper's"


def _base_words(rows: list[ClaimRow], key: str) -> str:
    """For a law slope row: where the paper's constant lies under the law's base (the verdict's) and under the other
    (a reading), e.g. "outside the book's noise interval with ln (the verdict's base), inside it with log2"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable":
        return "not testable here"
    r = found[0]
    side = {"agrees": "inside", "deviates": "outside"}[r.verdict.status]
    other = [x for x in r.readings if x.name.startswith("with ")]
    said = f"{side} the book's noise interval with {LAW_BASE} (the verdict's base)"
    if other and other[0].holds is not None:
        at = EDGE if other[0].edge else "inside it" if other[0].holds else "outside it"
        said += f", {at} {other[0].name}"
    return said


@dataclass(frozen=True)
class _LawWords:
    """The law's rows in words, as the chapter's section on the scaling law pastes them (see :func:`law_words`):
    the book's value with its interval per fit and log base, how the R² reads, where the paper's constants fall,
    and the paper's values."""

    slope_all_ln: str
    slope_all_log2: str
    slope_pre_ln: str
    slope_pre_log2: str
    r2_pre: str
    r2_pre_words: str
    base_all: str
    base_pre: str
    heads_slope: str
    regular_slope: str
    paper_law_slope_all: str
    paper_law_slope_pre: str
    paper_law_r2_pre: str
    paper_heads_slope: str
    paper_regular_slope: str


def law_words(rows: list[ClaimRow]) -> _LawWords:
    """:func:`_row_value`, :func:`_fit_words` and :func:`_base_words` of the law's rows, beside the paper's values."""
    paper = {f"paper_{k}": rep.claim(k).paper
             for k in ("law_slope_all", "law_slope_pre", "law_r2_pre", "heads_slope", "regular_slope")}
    return _LawWords(
        slope_all_ln=_row_value(rows, "law_slope_all"),
        slope_all_log2=_row_value(rows, "law_slope_all", reading="with log2"),
        slope_pre_ln=_row_value(rows, "law_slope_pre"),
        slope_pre_log2=_row_value(rows, "law_slope_pre", reading="with log2"),
        r2_pre=_row_value(rows, "law_r2_pre"), r2_pre_words=_fit_words(rows),
        base_all=_base_words(rows, "law_slope_all"), base_pre=_base_words(rows, "law_slope_pre"),
        heads_slope=_row_value(rows, "heads_slope"), regular_slope=_row_value(rows, "regular_slope"), **paper,
    )


def _table1_basis_words(runs: pd.DataFrame) -> str:
    """What the base rows behind Table 1 are, against the paper's head counts and seeds, as one or two sentences.

    Says whether the rows reach the paper's largest head count and seed count; only where they fall short does
    it say what that costs (a less sharply determined h*)."""
    h_max, seeds = int(runs["h"].max()), int(runs["seed"].nunique())
    paper_h, paper_seeds = rep.PAPER_MAX_HEADS, rep.PAPER_SEEDS["base"]
    said = (f"The base rows read here reach h = {h_max} with {seeds} seeds per point "
            f"(the paper: {paper_h} and {paper_seeds})")
    step = (
        "a cell whose noise interval is a single value can still miss the paper's d_k* by one refinement step of D_K."
    )
    if h_max >= paper_h and seeds >= paper_seeds:
        return f"{said}: the same head counts and seeds. Both sides still read D_K* on a refined ladder, so {step}"
    return f"{said}. Fewer seeds or head counts leave h* less sharply determined, and {step}"


_NAMES = {"law_all": "the law fit over all twelve cells", "law_pre": "the law fit over the nine precondition cells",
          "heads": "the head-count line"}


def _arithmetic_summary(checks: list[ArithmeticCheck]) -> str:
    """Two sentences for the chapter: which of the paper's fits some head assignment of Table 1 reproduces (centred R²,
    per base), and what follows for all of them together."""
    parts = []
    for fit, name in _NAMES.items():
        found = [c for c in checks if c.fit == fit and c.r2_kind == "centred"]
        if not found:
            continue
        said = []
        for c in found:
            where = "" if c.base == "—" else f" with {c.base}"
            near = (
                ""
                if c.reproduced or c.nearest is None
                else f" (the nearest R² with its {'line' if fit == 'heads' else 'slope'}: {c.nearest[2]:.3f})"
            )
            said.append(f"{f'{c.matches:,} assignments' if c.reproduced else 'none'}{where}{near}")
        parts.append(f"{name} is reproduced by " + listed(said))
    lead = "Of every power-of-two head assignment at the paper's own Table 1 d_k, " + "; ".join(parts) + "."
    if all_reproduced(checks):
        return lead + " Each fit can come from the twelve base cells at their Table 1 values."
    return (
        lead + " So the paper's fits cannot all come from its twelve base cells at their Table 1 values: they may span "
        "other configurations, or Table 1, the fits or their transcription differ."
    )


@dataclass(frozen=True)
class _ChapterWords:
    """The chapter's sentences that belong to no one row (see :func:`chapter_words`): the law's log base, what the
    base rows behind Table 1 are, and what the paper's fits' arithmetic shows."""

    law_base: str
    t1_basis: str
    arith_summary: str


def chapter_words(base_runs: pd.DataFrame, checks: tuple[ArithmeticCheck, ...]) -> _ChapterWords:
    """The sentences of :class:`_ChapterWords` from the base rows ``base_runs`` (columns h, seed; may be empty) and the
    paper-arithmetic ``checks`` (:func:`rgr.results.replication.registry.arithmetic`)."""
    t1_basis = _table1_basis_words(base_runs) if len(base_runs) else "No base rows are read here."
    return _ChapterWords(law_base=LAW_BASE, t1_basis=t1_basis, arith_summary=_arithmetic_summary(list(checks)))


@dataclass(frozen=True)
class _Limits:
    """The chapter's *Where this comparison is limited*, in sentences."""

    presets: str  # which experiments are read on a preset other than `paper`, and what that costs in noise
    gpt2: str  # the GPT-2 block's basis and, unless it is `paper`, why its `paper` preset was not run


def _reduced(r: Reduced) -> str:
    done = "no rows yet" if r.paper_done is None else f"{math.floor(100 * r.paper_done)}% done"
    return (f"{r.name} ({r.preset} preset: {r.seeds} seeds, h up to {r.h_max}, m up to {r.m_max}; "
            f"its paper sweep {done})")


def _few(f: FewSeeds) -> str:
    at = f" at m = {listed([str(m) for m in f.where])}" if f.where else ""
    return f"{f.name} ({f.seeds} seed{'s' if f.seeds != 1 else ''}{at})"


def _few_words(few: tuple[FewSeeds, ...]) -> str:
    if not few:
        return ""
    n = min(f.seeds for f in few)
    return (f" The paper's own seed counts are small in places: {listed([_few(f) for f in few])}. With {n} seeds a "
            f"cell's seed bootstrap has {math.comb(2 * n - 1, n)} distinct resamples, so a row resting on such cells "
            "has a coarse noise interval (its 95% and 99% intervals can coincide), and the optimistic and "
            "conservative ends of D_K* carry most of it.")


def _reduced_words(reduced: tuple[Reduced, ...], few: tuple[FewSeeds, ...] = ()) -> str:
    if not reduced:
        return ("Every experiment but the GPT-2 block is read on its paper preset, its sweep complete, with the "
                "paper's seeds and head counts." + _few_words(few))
    own = [r for r in reduced if r.paper_done != 1.0]
    along = [r.name for r in reduced if r.paper_done == 1.0]  # complete, read on book beside one that is not
    seeds = sorted({r.seeds for r in reduced})
    counts = " or ".join(str(s) for s in seeds) if len(seeds) <= 2 else f"{seeds[0]} to {seeds[-1]}"
    said = f"Read on a reduced preset, with fewer runs than the paper's: {'; '.join(map(_reduced, own))}." if own\
        else ""
    if along:
        said += (f" {' and '.join(along)} {'is' if len(along) == 1 else 'are'} complete at the paper preset but read "
                 "on the reduced one where a comparison puts them beside an experiment that is not (one preset per "
                 "comparison).")
    return (f"{said.strip()} With {counts} seeds a seed bootstrap has few distinct resamples, and the optimistic and "
            "conservative ends of D_K* carry most of a noise interval. When a paper sweep is complete, this chapter "
            "reads its rows by itself and every verdict is recomputed.")


def _gpt2_words(b: Basis) -> str:
    if b.gpt2_preset == "paper":
        return "The GPT-2 block is read on its paper preset."
    m, d, cost, bench, done = b.gpt2_m, b.gpt2_d_model, b.cost, b.bench, b.paper_done
    table = "a seeded stand-in table" if b.gpt2_stand_in else "GPT-2's table"
    reach = ("not compressive, so it tests the pipeline and the block, not the paper's claims"
             if m < COMPRESSIVE * d else "compressive, but smaller than the paper's")
    return (f"The GPT-2 block is read on its {b.gpt2_preset} preset: {table}, m = {m} items against d_model = {d} "
            f"(m / d_model = {m / d:.2f}, {reach}). Its paper preset ({cost.runs} runs of {cost.steps:,} steps at "
            f"m = {cost.m}) is {cost.flops / 1e18:.2f} EFLOP of matmuls by their count; "
            + (f"measured on a lent {bench.device}, the whole preset is {bench.minutes:.0f} minutes of one process in "
               f"bf16 ({bench.path}), while the GPU time this project gets comes in leases of {_LEASE_MINUTES} "
               f"minutes, so it runs in shards of whole stacks: {done} of its {cost.runs} runs are done "
               f"({done / cost.runs:.0%}), and the chapter reads it when it is complete."
               if bench is not None else
               f"{cost.hours(0.5):.1f} h of one H100 at half its float32 peak and {cost.hours(0.1):.0f} h at a tenth "
               f"(estimates, not measurements); {done} of its {cost.runs} runs are done, because the GPU time "
               f"this project had came in leases of {_LEASE_MINUTES} minutes."))


def limits_words(b: Basis) -> _Limits:
    """The chapter's limits in words: the experiments read on a reduced preset, those read on `paper` with few seeds
    somewhere (said once every sweep is on `paper`), and the GPT-2 block's basis against its `paper` preset's cost."""
    return _Limits(presets=_reduced_words(b.reduced, b.few), gpt2=_gpt2_words(b))
