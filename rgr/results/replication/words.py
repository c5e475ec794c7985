"""What the chapter *Does it replicate?* says beside its verdict rows: the counts (:func:`headline`), the law's
rows as prose (:func:`law_words`), the sentences that belong to no one row (:func:`chapter_words`), and where the
comparison is limited (:func:`chapter_limits`):

- :func:`basis_of` — from the chapter's loaded rows: per experiment read on a preset other than `paper`, its
  seeds, largest h and largest m, and how far its `paper` sweep is;
- :func:`few_seeds_of` — the experiments read on `paper` whose own seed counts are small somewhere (the paper's 3);
- :func:`limits` — those and the GPT-2 block's basis in words (:class:`Limits`); the cost of the block's `paper`
  preset comes from :func:`rgr.gpt2.experiment.preset_cost`.

Nothing here is typed from the data: every name and number comes from the rows, the presets or the FLOP count.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...catalog import load, preset_completeness
from ...gpt2.experiment import PresetCost, latest_lease_bench, preset_cost
from ...paths import data_dir
from ...store import TableError
from ..findings import listed
from ..gpt2_block import COMPRESSIVE, is_stand_in
from ..stats import seeds_per_cell
from . import reported as rep
from .paper_arithmetic import ArithmeticCheck, arithmetic_summary
from .rows import ClaimRow
from .verdicts import CONVENTION, LAW_BASE, STATUSES, table1_basis_words

__all__ = ["CHAPTER_TITLES", "verdict_counts", "near_misses", "row_value", "fit_words", "base_words", "Headline",
           "headline", "LawWords", "law_words", "ChapterWords", "chapter_words", "FEW_SEEDS", "FewSeeds", "Reduced",
           "Limits", "basis_of", "few_seeds_of", "limits", "chapter_limits"]

CHAPTER_TITLES = {"permutation_sweeps": "Permutation sweeps", "denser_graphs": "Denser graphs", "softmax": "Softmax",
                  "value_channel": "Value channel", "gpt2_block": "GPT-2 block"}


def verdict_counts(rows: list[ClaimRow]) -> dict[str, int]:
    """How many rows of the verdict table have each status (every status present, 0 when none)."""
    return {s: sum(r.verdict.status == s for r in rows) for s in STATUSES}


def near_misses(rows: list[ClaimRow]) -> int:
    """How many deviations are near misses (the paper's value inside the book's 99% noise interval)."""
    return sum(r.verdict.near_miss for r in rows)


def row_value(rows: list[ClaimRow], key: str, digits: int = 2, reading: str | None = None) -> str:
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


def fit_words(rows: list[ClaimRow], key: str = "law_r2_pre") -> str:
    """How the book's R² of a fit reads against the paper's, for the start of a sentence:
    "The line itself replicates" (the paper's value in the book's interval), "The line is looser than the
    paper's" / "... tighter ..." (outside it), or "The line's R² cannot be compared here"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable" or not math.isfinite(found[0].value):
        return "The line's R² cannot be compared here"
    if found[0].verdict.status == "agrees":
        return "The line itself replicates"
    return f"The line is {'looser' if found[0].value < rep.claim(key).value else 'tighter'} than the paper's"


def base_words(rows: list[ClaimRow], key: str) -> str:
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
        said += f", {'inside' if other[0].holds else 'outside'} it {other[0].name}"
    return said


@dataclass(frozen=True)
class Headline:
    """The verdict table in numbers, as the chapter and the introduction paste them (see :func:`headline`)."""

    n_rows: int
    n_agrees: int
    n_deviates: int
    n_not_testable: int
    n_near_miss: int  # deviations whose paper value lies in the book's 99% noise interval


def headline(rows: list[ClaimRow]) -> Headline:
    """How many rows there are, per status (:func:`verdict_counts`), and how many deviations are near misses."""
    n = verdict_counts(rows)
    return Headline(n_rows=len(rows), n_agrees=n["agrees"], n_deviates=n["deviates"],
                    n_not_testable=n["not testable"], n_near_miss=near_misses(rows))


@dataclass(frozen=True)
class ChapterWords:
    """The chapter's sentences that belong to no one row (see :func:`chapter_words`): the interval convention, the
    law's log base, what the base rows behind Table 1 are, and what the paper's fits' arithmetic shows."""

    convention: str
    law_base: str
    t1_basis: str
    arith_summary: str


def chapter_words(base_runs: pd.DataFrame, checks: tuple[ArithmeticCheck, ...]) -> ChapterWords:
    """The sentences of :class:`ChapterWords` from the base rows ``base_runs`` (columns h, seed; may be empty) and the
    paper-arithmetic ``checks`` (:func:`arithmetic`); chapter ``replication.ipynb``."""
    t1_basis = table1_basis_words(base_runs) if len(base_runs) else "No base rows are read here."
    return ChapterWords(convention=CONVENTION, law_base=LAW_BASE, t1_basis=t1_basis,
                        arith_summary=arithmetic_summary(list(checks)))


@dataclass(frozen=True)
class LawWords:
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


def law_words(rows: list[ClaimRow]) -> LawWords:
    """:func:`row_value`, :func:`fit_words` and :func:`base_words` of the law's rows, beside the paper's values."""
    paper = {f"paper_{k}": rep.claim(k).paper
             for k in ("law_slope_all", "law_slope_pre", "law_r2_pre", "heads_slope", "regular_slope")}
    return LawWords(
        slope_all_ln=row_value(rows, "law_slope_all"),
        slope_all_log2=row_value(rows, "law_slope_all", reading="with log2"),
        slope_pre_ln=row_value(rows, "law_slope_pre"),
        slope_pre_log2=row_value(rows, "law_slope_pre", reading="with log2"),
        r2_pre=row_value(rows, "law_r2_pre"), r2_pre_words=fit_words(rows), base_all=base_words(rows, "law_slope_all"),
        base_pre=base_words(rows, "law_slope_pre"), heads_slope=row_value(rows, "heads_slope"),
        regular_slope=row_value(rows, "regular_slope"), **paper,
    )


FEW_SEEDS = 3  # at most this many seeds a cell: a seed bootstrap there has few distinct resamples


@dataclass(frozen=True)
class Reduced:
    """One experiment the chapter reads on a preset other than `paper`."""

    name: str
    preset: str
    seeds: int
    h_max: int
    m_max: int
    paper_done: float | None  # the share of the `paper` preset's planned runs in data/ (None: no such rows)

    def words(self) -> str:
        done = "no rows yet" if self.paper_done is None else f"{math.floor(100 * self.paper_done)}% done"
        return (f"{self.name} ({self.preset} preset: {self.seeds} seeds, h up to {self.h_max}, m up to {self.m_max}; "
                f"its paper sweep {done})")


@dataclass(frozen=True)
class FewSeeds:
    """One experiment read on `paper` with at most :data:`FEW_SEEDS` seeds in some (m, d_model) cells."""

    name: str
    seeds: int  # the fewest seeds of a cell
    where: tuple[int, ...]  # the m of those cells; () when every cell has that few

    def words(self) -> str:
        at = f" at m = {listed([str(m) for m in self.where])}" if self.where else ""
        return f"{self.name} ({self.seeds} seed{'s' if self.seeds != 1 else ''}{at})"


@dataclass(frozen=True)
class Limits:
    """The chapter's *Where this comparison is limited*, in sentences."""

    presets: str  # which experiments are read on a preset other than `paper`, and what that costs in noise
    gpt2: str  # the GPT-2 block's basis and, unless it is `paper`, why its `paper` preset was not run


def basis_of(loaded: Mapping[str, Mapping[str, object]],
             paper_done: Callable[[str], float | None]) -> tuple[Reduced, ...]:
    """Every experiment other than ``gpt2`` that the chapter's loaded groups (objects with ``name``, ``preset`` and
    ``runs``, e.g. :class:`rgr.chapters.loading.ExperimentData`) read on a preset other than `paper`, once, in order:
    its seeds, largest ``h`` and ``m`` as read, and ``paper_done(name)``."""
    out: dict[str, Reduced] = {}
    for group in loaded.values():
        for name, d in group.items():
            if name == "gpt2" or name in out or d.preset == "paper":
                continue
            df = d.runs
            out[name] = Reduced(name, d.preset, int(df["seed"].nunique()), int(df["h"].max()), int(df["m"].max()),
                                paper_done(name))
    return tuple(out.values())


def few_seeds_of(loaded: Mapping[str, Mapping[str, object]], most: int = FEW_SEEDS) -> tuple[FewSeeds, ...]:
    """Every experiment other than ``gpt2`` that the loaded groups read on `paper` with at most ``most`` seeds in some
    (m, d_model) cell (the paper's own counts: 3 for softmax, the value channel and the lambda = 8 diagonal's largest
    points), once, in order."""
    out: dict[str, FewSeeds] = {}
    for group in loaded.values():
        for name, d in group.items():
            if name == "gpt2" or name in out or d.preset != "paper" or not len(d.runs):
                continue
            per = seeds_per_cell(d.runs)
            if per.min() > most:
                continue
            few = per[per <= most]
            ms = () if len(few) == len(per) else tuple(sorted({int(m) for m in few.index.get_level_values("m")}))
            out[name] = FewSeeds(name, int(per.min()), ms)
    return tuple(out.values())


def _few_words(few: tuple[FewSeeds, ...]) -> str:
    if not few:
        return ""
    n = min(f.seeds for f in few)
    return (f" The paper's own seed counts are small in places: {listed([f.words() for f in few])}. With {n} seeds a "
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
    few = " or ".join(str(s) for s in seeds) if len(seeds) <= 2 else f"{seeds[0]} to {seeds[-1]}"
    said = f"Read on a reduced preset, with fewer runs than the paper's: {'; '.join(r.words() for r in own)}." if own \
        else ""
    if along:
        said += (f" {' and '.join(along)} {'is' if len(along) == 1 else 'are'} complete at the paper preset but read "
                 "on the reduced one where a comparison puts them beside an experiment that is not (one preset per "
                 "comparison).")
    return (f"{said.strip()} With {few} seeds a seed bootstrap has few distinct resamples, and the optimistic and "
            "conservative ends of D_K* carry most of a noise interval. When a paper sweep is complete, this chapter "
            "reads its rows by itself and every verdict is recomputed.")


def _gpt2_words(preset: str, gpt2_rows: pd.DataFrame, cost: PresetCost, lease_minutes: int, paper_done: int = 0,
                bench=None) -> str:
    if preset == "paper":
        return "The GPT-2 block is read on its paper preset."
    m, d = int(gpt2_rows["m"].max()), int(gpt2_rows["d_model"].max())
    table = "a seeded stand-in table" if is_stand_in(gpt2_rows["embedding_source"]) else "GPT-2's table"
    reach = ("not compressive, so it tests the pipeline and the block, not the paper's claims"
             if m < COMPRESSIVE * d else "compressive, but smaller than the paper's")
    return (f"The GPT-2 block is read on its {preset} preset: {table}, m = {m} items against d_model = {d} "
            f"(m / d_model = {m / d:.2f}, {reach}). Its paper preset ({cost.runs} runs of {cost.steps:,} steps at "
            f"m = {cost.m}) is "
            f"{cost.flops / 1e18:.2f} EFLOP of matmuls by their count; "
            + (f"measured on a lent {bench.device}, the whole preset is {bench.minutes:.0f} minutes of one process in "
               f"bf16 ({bench.path}), while the GPU time this project gets comes in leases of {lease_minutes} "
               f"minutes, so it runs in shards of whole stacks: {paper_done} of its {cost.runs} runs are done "
               f"({paper_done / cost.runs:.0%}), and the chapter reads it when it is complete."
               if bench is not None else
               f"{cost.hours(0.5):.1f} h of one H100 at half its float32 peak and {cost.hours(0.1):.0f} h at a tenth "
               f"(estimates, not measurements); {paper_done} of its {cost.runs} runs are done, because the GPU time "
               f"this project had came in leases of {lease_minutes} minutes."))


def limits(reduced: tuple[Reduced, ...], gpt2_preset: str, gpt2_rows: pd.DataFrame, cost: PresetCost,
           lease_minutes: int = 15, few: tuple[FewSeeds, ...] = (), paper_done: int = 0, bench=None) -> Limits:
    """The chapter's limits in words: the experiments read on `book` (``reduced``, from :func:`basis_of`), those read
    on `paper` with few seeds somewhere (``few``, from :func:`few_seeds_of`: said once every sweep is on `paper`) and
    the GPT-2 block's basis (read on ``gpt2_preset``, its rows ``gpt2_rows``; its paper preset's ``cost``, from
    :func:`rgr.gpt2.experiment.preset_cost`)."""
    return Limits(presets=_reduced_words(reduced, few),
                  gpt2=_gpt2_words(gpt2_preset, gpt2_rows, cost, lease_minutes, paper_done, bench))


def chapter_limits(loaded: Mapping[str, Mapping[str, object]]) -> Limits:
    """:func:`limits` of the chapter's loaded groups (:data:`rgr.results.replication.registry.GROUPS`, which hold
    ``gpt2``): the `paper` sweeps' completeness from data/ (:func:`rgr.catalog.preset_completeness`)."""
    gpt2 = loaded["gpt2"]["gpt2"]
    reduced = basis_of(loaded, lambda name: preset_completeness(name, "paper"))
    done = paper_runs_done()
    return limits(reduced, gpt2.preset, gpt2.runs, preset_cost("paper"), few=few_seeds_of(loaded), paper_done=done,
                  bench=latest_lease_bench(data_dir()))


def paper_runs_done(root: Path | None = None) -> int:
    """Runs of the GPT-2 block's paper preset in data/gpt2.csv (0 without a table)."""
    try:
        return len(load("gpt2", "paper", root))
    except TableError:
        return 0
