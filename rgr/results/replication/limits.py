"""Where the chapter *Does it replicate?* is limited: which experiments it reads on a reduced (`book`) preset, and
why the GPT-2 block's `paper` preset was not run.

- :func:`basis_of` — from the chapter's loaded rows: per experiment read on a preset other than `paper`, its
  seeds, largest h and largest m, and how far its `paper` sweep is;
- :func:`few_seeds_of` — the experiments read on `paper` whose own seed counts are small somewhere (the paper's 3);
- :func:`limits` — those and the GPT-2 block's basis in words (:class:`Limits`), the sentences the chapter pastes;
  the cost of the block's `paper` preset comes from :func:`rgr.gpt2.experiment.preset_cost`;
- :func:`chapter_limits` — :func:`limits` of the chapter's loaded groups, with the catalog's completeness.

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

__all__ = ["FEW_SEEDS", "FewSeeds", "Reduced", "Limits", "basis_of", "few_seeds_of", "limits", "chapter_limits"]

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
    """:func:`limits` of the chapter's loaded groups (:data:`rgr.results.replication.sources.GROUPS`, which hold
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
