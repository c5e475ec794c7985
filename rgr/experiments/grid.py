"""The protocol's grids: the (m, d_model) cells of an experiment's preset, its heads, seeds and D_K ladder
(chapters *permutation sweeps*, *denser graphs*, *softmax*, *value channel*).

A :class:`Grid` is one preset of an experiment (:mod:`rgr.experiments.registry`); the planner
(:mod:`rgr.experiments.planner`) turns a grid into runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .engine.config import step_cutoff

__all__ = ["FUTILITY_MIN_SEEDS", "Cell", "Grid", "base_cutoff"]

# Futility stopping (rgr.experiments.futility) only where a cell has this many seeds: its replay changed no
# answer on any 10-seed table, but moved the optimistic D_K* end of 5 cells of the 2-3-seed book tables (README).
FUTILITY_MIN_SEEDS = 10


@dataclass(frozen=True)
class Cell:
    """One (m, d_model) point of a grid; r > 1 for r-regular graphs."""

    m: int
    d_model: int
    r: int = 1


@dataclass(frozen=True)
class Grid:
    """One preset of an experiment: which runs, how long, how the D_K ladder is set."""

    cells: tuple[Cell, ...]
    heads: tuple[int, ...]
    seeds: tuple[int, ...]
    dk_factor: float = 4.0  # ladder top ~ factor * m ln m / d_model (times r)
    dk_min: int = 8  # the ladder's top is at least this
    dk_max: int = 4096  # no D_K above this
    dk_from: int = 2  # the ladder's bottom: no D_K below this (2: the whole ladder)
    refine_rounds: int = 3
    step_scale: float = 1.0  # max_steps = step_scale * protocol cutoff (rounded to check_every)
    max_steps: int | None = None  # overrides the protocol cutoff when set
    few_seeds_from_m: int | None = None  # cells with m >= this use only the first `few_seeds` seeds
    few_seeds: int = 3
    run_fields: tuple[tuple[str, object], ...] = ()  # extra RunConfig fields (e.g. n_test for smoke)
    futility: str | None = None  # futility rule of this preset's runs, at cells with FUTILITY_MIN_SEEDS seeds

    def seeds_for(self, cell: Cell) -> tuple[int, ...]:
        if self.few_seeds_from_m is not None and cell.m >= self.few_seeds_from_m:
            return self.seeds[: self.few_seeds]
        return self.seeds

    def futility_for(self, cell: Cell) -> str | None:
        """The cell's futility rule: the grid's, where the cell has at least FUTILITY_MIN_SEEDS seeds; else None."""
        return self.futility if len(self.seeds_for(cell)) >= FUTILITY_MIN_SEEDS else None

    def steps_for(self, cell: Cell, base: int) -> int:
        """The step cutoff of the cell's runs, from the experiment's cutoff ``base`` (:func:`base_cutoff`)."""
        if self.max_steps is not None:
            return self.max_steps
        return max(500, int(round(self.step_scale * base / 500)) * 500)


def base_cutoff(cell: Cell, fixed_cutoff: int | None = None) -> int:
    """An experiment's step cutoff at ``cell``: its ``fixed_cutoff``, else the protocol's (Table 2)."""
    return fixed_cutoff if fixed_cutoff is not None else step_cutoff(cell.m, cell.d_model)
