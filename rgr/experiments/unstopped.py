"""Unstopped: the regular table's futility-stopped runs that matter most, retrained with the rule off (issue 45,
item 5; chapter *denser graphs*).

**A declared extension, not the paper's protocol.** Futility stopping (:mod:`rgr.experiments.futility`) is not in
the protocol; the ``regular`` paper preset (m = 128, d_model = 32, r in {1, ..., 32}, 10 seeds, 20,000 steps) used
it, and it stopped 1,528 of 3,820 runs. Two kinds of stopped run bear on a reading (README, *Choices the paper
left open*, "unstopped", declared before the first row):

- *false stops* (:func:`rgr.experiments.futility.false_stops`): a stopped run at an (r, h, D_K) point where a sibling
  seed reached the F1 target;
- the *plateau points*: every D_K of the two "few heads plateau" curves that the verdict row ``regular_plateaus``
  reads (:func:`rgr.results.denser_graphs.regular_plateaus`), r = 2 with h = 1 and r = 4 with h = 2.

Each such run is retrained from its seed with the same config (the same 20,000-step cutoff, checks and early stop
on convergence) and futility stopping off; its run key is the stopped row's (the key leaves the rule out), so a
reading can put it in that row's place (:func:`rgr.results.denser_graphs.unstopped_reading`). Nothing is
reused: a futility-stopped row never stands in for a run without the rule (:mod:`rgr.experiments.reuse`), and this
table copies no row at all (it names no ``reuse_from``, where
:meth:`rgr.experiments.trainer.ExperimentTrainer.reusable_rows` looks). The other 1,352 stopped runs are left
alone: no sibling seed passed at their points and no verdict row reads their curve as a plateau, and retraining all
1,528 (about 9x the runs) is beyond the issue's scope.

:data:`UNITS` is that rule's output on the committed ``data/regular.csv`` (paper preset, 3,820 rows;
2026-11-27), written out so the design cannot drift when the table changes (tests/experiments/test_unstopped.py
re-derives it): 3 false stops and 173 plateau runs, 176 runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from . import planner
from .engine.config import RunConfig, step_cutoff
from .planner import SMOKE_FIELDS, SMOKE_RUN_FIELDS, Cell, Experiment, Grid, listing_grid

M, _D_MODEL = 128, 32  # the regular table's one cell (E4)
PLATEAUS: tuple[tuple[int, int], ...] = ((2, 1), (4, 2))  # (r, h) of the curves regular_plateaus reads


@dataclass(frozen=True)
class Unit:
    """One (r, h, D_K) point of the regular table and the seeds of its stopped runs retrained there."""

    r: int
    h: int
    D_K: int
    seeds: tuple[int, ...]
    why: str  # "false stop" or "plateau"


_LATE = tuple(range(3, 10))  # the first round's seeds 0-2 were reused from book runs without the rule: not stopped
_ALL = tuple(range(10))

# the rule's output on the committed data/regular.csv (paper preset, 3,820 rows, 1,528 stopped; 2026-11-27)
UNITS: tuple[Unit, ...] = (
    Unit(8, 4, 4096, (4, 6, 9), "false stop"),
    *(Unit(2, 1, dk, _LATE, "plateau") for dk in (2, 4, 8, 16, 32, 64, 128, 256, 512)),
    *(Unit(2, 1, dk, _ALL, "plateau") for dk in (1024, 2048)),
    *(Unit(4, 2, dk, _LATE, "plateau") for dk in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)),
    *(Unit(4, 2, dk, _ALL, "plateau") for dk in (2048, 4096)),
)
# the smoke preset's units: a regular cell of the smoke regular grid, 100 steps
SMOKE_UNITS: tuple[Unit, ...] = (Unit(2, 1, 4, (0, 1), "plateau"), Unit(2, 2, 8, (0,), "false stop"))
_SMOKE_CELL = (16, 8)


def planned_runs(units: Sequence[Unit], m: int = M, d_model: int = _D_MODEL,
                 run_fields: tuple[tuple[str, object], ...] = ()) -> list[RunConfig]:
    """Every run of ``units``: the regular table's config at (m, d_model, r, h, D_K, seed), the protocol's cutoff
    (unless ``run_fields`` overrides it, as the smoke preset does), futility stopping off."""
    fields = {"max_steps": step_cutoff(m, d_model), **dict(run_fields)}
    return [RunConfig(m=m, d_model=d_model, h=u.h, d_k=u.D_K // u.h, seed=s, graph="regular", r=u.r, futility=None,
                      **fields) for u in units for s in u.seeds]


def _grid(units: Sequence[Unit], m: int, d_model: int, **kw) -> Grid:
    """A listing of the units (cells, heads, seeds) for ``sweep --list`` and data/SCHEMA.md; the runs are ``units``."""
    return listing_grid((Cell(m, d_model, u.r) for u in units), (u.h for u in units),
                        (s for u in units for s in u.seeds), **kw)


@dataclass(frozen=True)
class _UnstoppedSweep(Experiment):
    """The unstopped extension (see the module doc): explicit units, no refinement, nothing reused (no
    ``reuse_from``: a stopped row of regular.csv shares its run key, and must not stand in for its retraining)."""

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """The declared design's runs (``done`` is not needed: no refinement); a shard holds whole (r, h) curves."""
        self.grid(preset)  # checks the preset's name
        m, d, units, fields = ((*_SMOKE_CELL, SMOKE_UNITS, SMOKE_RUN_FIELDS) if preset == "smoke"
                               else (M, _D_MODEL, UNITS, ()))
        units = [u for u in units if planner.in_shard(Cell(m, d, u.r), u.h, *shard)]
        return planned_runs(units, m, d, fields)


UNSTOPPED = _UnstoppedSweep(
    "unstopped", "E4 extension", "the regular table's futility-stopped runs at false-stop and plateau points, "
    "retrained to the protocol's cutoff with the rule off (a declared extension: README, issue 45)", "max", "regular",
    {"paper": _grid(UNITS, M, _D_MODEL), "book": _grid(UNITS, M, _D_MODEL),
     "smoke": _grid(SMOKE_UNITS, *_SMOKE_CELL, max_steps=100, run_fields=SMOKE_FIELDS)},
    refine=False, book_scope="identical to the paper preset (the declared design)",
)
