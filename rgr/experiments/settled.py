"""Settled thresholds: the runs at and below D_K* retrained with longer step budgets (issue 45; chapters
*permutation sweeps* and *does it replicate?*).

**A declared extension, not the paper's protocol**: does D_K* move when the runs at and near it are no longer cut
by the step cutoff? Its design (cells, heads, D_K, seeds, budgets; the ``wide`` preset of (4096, 512)) is README
*Choices the paper left open*, row "settled thresholds": one rule applied to the committed ``paper`` tables
(``base`` and ``lambda8``) before the first row. :data:`UNITS` and :data:`WIDE_UNITS` are that rule's output, written
out so the design cannot drift when tables change (tests/experiments/test_settled.py re-derives them); the ``wide``
rows are read with the ``paper`` preset's (:func:`rgr.results.settled.settled_runs`).

Stacks stay within one (cell, budget) and hold at most 40 runs
(:meth:`rgr.experiments.trainer.ExperimentTrainer.stack_groups`), so a stack's rows reach the table within a session
even at 16x.

The table ``settled`` (:data:`SETTLED`, read through :func:`rgr.catalog.get`) is declared here, so a chapter that
reads another table does not load it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from .engine.config import RunConfig, step_cutoff
from .planner import SMOKE_FIELDS, Cell, Experiment, in_shard, listing_grid, smoke_grid


@dataclass(frozen=True)
class Unit:
    """One cell's head count and the D_K points it retrains."""

    m: int
    d_model: int
    h: int
    D_K: tuple[int, ...]


def _units(m: int, d_model: int, heads: dict[int, tuple[int, ...]]) -> tuple[Unit, ...]:
    return tuple(Unit(m, d_model, h, dks) for h, dks in heads.items())


# the rule's output on the committed paper tables (base: 5,970 rows; lambda8: 2,624 rows; 2026-11-27)
UNITS: tuple[Unit, ...] = (
    *_units(128, 16, {4: (32, 64, 128), 8: (32, 48, 56, 64), 16: (32, 64, 80)}),
    *_units(256, 32, {2: (32, 64), 4: (32, 40, 44, 48), 8: (32, 48, 56)}),
    *_units(512, 64, {1: (32, 64), 2: (32, 48, 52, 56), 4: (32, 48, 52), 8: (32, 48, 56)}),
    *_units(1024, 128, {1: (32, 40, 44, 48), 2: (32, 36, 40), 4: (32, 36, 40)}),
    *_units(2048, 256, {1: (32, 48, 52), 2: (32, 40, 44, 48), 4: (32, 48, 52)}),
    *_units(128, 64, {1: (4, 6, 7), 2: (4, 8, 10)}),
    *_units(256, 16, {8: (128, 256), 16: (128, 160, 176), 32: (128, 160, 192)}),
    *_units(256, 64, {1: (16, 18), 2: (16, 18)}),
    *_units(512, 32, {8: (128, 144, 160), 16: (128, 144), 32: (128, 160)}),
)
# the same rule at (4096, 512): the preset "wide" (see the module doc)
WIDE_UNITS: tuple[Unit, ...] = _units(4096, 512, {1: (32, 48, 52), 2: (32, 48, 52), 4: (32, 48, 52, 56)})
_BUDGETS = (4, 16)  # multiples of the protocol's cutoff; 16 only where m <= 1024
_SEEDS = tuple(range(10))  # the paper's; the first 3 from m = 2048


def budgets_for(m: int) -> tuple[int, ...]:
    return _BUDGETS if m <= 1024 else _BUDGETS[:1]


def seeds_for(m: int) -> tuple[int, ...]:
    return _SEEDS if m < 2048 else _SEEDS[:3]


def planned_runs(units: Sequence[Unit], budgets: Sequence[int] | None = None, seeds: Sequence[int] | None = None,
                 cutoff: int | None = None, run_fields: tuple[tuple[str, object], ...] = ()) -> list[RunConfig]:
    """Every run of ``units``: each budget (4x before 16x), each cell, head count, D_K and seed; max_steps =
    budget x the cell's protocol cutoff. ``budgets``, ``seeds``, ``cutoff`` (in place of the protocol's) and
    ``run_fields`` override the design for the smoke preset."""
    runs = []
    for b in _BUDGETS:
        for u in units:
            if b not in (budgets if budgets is not None else budgets_for(u.m)):
                continue
            steps = b * (cutoff if cutoff is not None else step_cutoff(u.m, u.d_model))
            runs += [RunConfig(m=u.m, d_model=u.d_model, h=u.h, d_k=dk // u.h, seed=s, max_steps=steps,
                               **dict(run_fields)) for dk in u.D_K for s in (seeds if seeds is not None
                                                                             else seeds_for(u.m))]
    return runs


SMOKE_UNITS: tuple[Unit, ...] = (Unit(16, 2, 1, (4, 6)), Unit(16, 2, 2, (4,)))  # the smoke preset's two units


@dataclass(frozen=True)
class SettledSweep(Experiment):
    """The settled-threshold extension: explicit units at longer budgets (see the module doc)."""

    def units(self, preset: str) -> tuple[Unit, ...]:
        """The units ``preset`` retrains (the smoke preset's two, the wide cell's, or the declared design's)."""
        self.grid(preset)  # checks the preset's name
        return {"smoke": SMOKE_UNITS, "wide": WIDE_UNITS}.get(preset, UNITS)

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """The declared design's runs (``done`` is not needed: no refinement); a shard holds whole (cell, h) units."""
        units = [u for u in self.units(preset) if in_shard(Cell(u.m, u.d_model), u.h, *shard)]
        if preset == "smoke":
            return planned_runs(units, budgets=(4,), seeds=(0, 1), cutoff=25, run_fields=SMOKE_FIELDS)
        return planned_runs(units)


# its cells, for listings; its runs are UNITS
_GRID = listing_grid((Cell(u.m, u.d_model) for u in UNITS), (u.h for u in UNITS), _SEEDS)
SETTLED = SettledSweep(
    "settled", "E1, E2 extension", "settled thresholds: the runs at and below D_K* retrained at 4x and 16x "
    "the protocol's step cutoff, no futility stopping (a declared extension: README, issue 45)", "max",
    "permutation",
    {"paper": _GRID, "book": _GRID, "smoke": smoke_grid((Cell(16, 2),), (1, 2)),
     "wide": listing_grid((Cell(4096, 512),), (u.h for u in WIDE_UNITS), _SEEDS[:3])},
    refine=False, book_scope="identical to the paper preset (the declared design)",
)
