"""The peers' designs as sweeps of rgr's engine (chapter *the law beside other capacity results*): tables ``peers``
(:data:`PEERS`, Dana et al.'s design) and ``dk_saturation`` (:data:`DK_SATURATION`, Mahdavi et al.'s contrast), both
read through :func:`rgr.catalog.get`, so a chapter that reads another table does not load them. No refinement
rounds: in both the points are the design.

**The head sweep** (``peers``): d_k = d_model = d at every cell, heads swept. Dana et al. grow capacity by adding
heads of a fixed width d_head = d_model = d. Here each (m, d_model) cell trains the max-over-heads model on a
permutation graph with d_k = d_model and h from the grid's head list, up to the budget the grid allows:
h * d_k <= dk_factor * m ln m / d_model (and dk_max), i.e. the law's variable x = h d_k d_model / (m ln m) up to
dk_factor.

**Does one head's capacity saturate in d_k at the context length ell?** (``dk_saturation``.)
Mahdavi, Liao and Thrampoulidis (ICLR 2024) show that a multi-head attention layer with H heads of width d_h
memorises Omega(H min(n, d_h)) examples of context length n: a capacity that stops growing in d_h once d_h passes
n. The RGR law's form, capacity growing with h d_k d_model, has no such ceiling: at a fixed cell (m, d_model) one
head keeps gaining as d_k grows, up to the rank ceiling d_k = d_model. This experiment puts the two side by side
on rgr's engine, with the max-over-heads model on permutation graphs and the protocol's step cutoffs and early
stopping (:class:`rgr.experiments.engine.config.RunConfig`), in two series of one head:

- **d_k past ell**: at fixed (m, d_model) = (128, 64) and ell in {4, 8, 16}, d_k from 2 to 48 (all below
  d_model, so the rank ceiling never binds); at (256, 64), ell = 4, d_k from 4 to 32; and two heads at (128, 64),
  ell = 4, d_k from 2 to 24;
- **ell at fixed d_k**: at (128, 64) and d_k in {8, 16}, ell from 4 to 64.

A saturation at the context length predicts that F1 stops rising once d_k passes ell, and falls as ell drops
below d_k; the law's form predicts neither.

- ``smoke``: (16, 8), ell in {2, 4}, d_k in {2, 4}, 100 steps: seconds, for tests;
- ``book``: the two series above, seeds 0-2 (about 1.5 CPU hours on one worker);
- ``paper``: the same points, seeds 0-9 (for a GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import pandas as pd

from ...protocol import law_x
from ..engine.config import RunConfig, step_cutoff
from ..planner import SMOKE_FIELDS, SMOKE_RUN_FIELDS, Cell, Experiment, Grid, base_cutoff, in_shard, listing_grid


def _heads_for(cell: Cell, grid: Grid) -> list[int]:
    """Head counts of one cell: those with x <= grid.dk_factor and h * d_model <= grid.dk_max (the smallest always)."""
    heads = sorted(grid.heads)
    kept = [h for h in heads if law_x(h, cell.d_model, cell.d_model, cell.m) <= grid.dk_factor
            and h * cell.d_model <= grid.dk_max]
    return kept or heads[:1]


@dataclass(frozen=True)
class _HeadSweep(Experiment):
    """An experiment of the peers' design: d_k = d_model, heads swept (see the module doc)."""

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """Every run of the head sweep (``done`` is not needed: the design has no refinement rounds)."""
        grid, runs = self.grid(preset), []
        for cell in grid.cells:
            steps = grid.steps_for(cell, base_cutoff(cell, self.fixed_cutoff))
            for h in _heads_for(cell, grid):
                if not in_shard(cell, h, *shard):
                    continue
                runs += [RunConfig(m=cell.m, d_model=cell.d_model, h=h, d_k=cell.d_model, seed=s, model=self.model,
                                   graph=self.graph, max_steps=steps, **dict(grid.run_fields))
                         for s in grid.seeds_for(cell)]
        return runs


# the peers' design at fixed m / d_model = 8 and at fixed m
PEERS_FIXED_RATIO = tuple(Cell(8 * d, d) for d in (4, 8, 16, 32))
PEERS_FIXED_M = tuple(Cell(128, d) for d in (4, 8, 32))  # with (128, 16) above: m = 128, d in {4, 8, 16, 32}
_PEERS_HEADS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)

PEERS = _HeadSweep(
    "peers", "Dana et al. design", "d_k = d_model = d, heads swept (chapter the law beside other capacity "
    "results): m / d_model = 8 and m = 128", "max", "permutation",
    {
        "paper": Grid(PEERS_FIXED_RATIO + (Cell(512, 64),) + PEERS_FIXED_M + (Cell(128, 64),), _PEERS_HEADS,
                      tuple(range(10)), dk_factor=12.0, dk_max=4096, refine_rounds=0),
        "book": Grid(PEERS_FIXED_RATIO + PEERS_FIXED_M, _PEERS_HEADS, (0, 1, 2), dk_factor=8.0, dk_max=1024,
                     refine_rounds=0),
        "smoke": Grid((Cell(16, 2), Cell(16, 4)), (1, 2, 4), (0, 1), dk_factor=8.0, dk_max=32,
                      refine_rounds=0, max_steps=100, run_fields=SMOKE_FIELDS),
    },
    refine=False, book_scope="three seeds and the protocol's step cutoffs; cells up to m = 256",
)


# ----------------------------------------------------------------------------- d_k past ell (dk_saturation)

@dataclass(frozen=True)
class _DkPoint:
    """One point of the design: a cell, one head count, a per-head width and a context length."""

    m: int
    d_model: int
    h: int
    d_k: int
    ell: int


def _past_ell(m: int, d_model: int, ell: int, d_ks: tuple[int, ...]) -> tuple[_DkPoint, ...]:
    return tuple(_DkPoint(m, d_model, 1, d_k, ell) for d_k in d_ks)


_DK = (2, 4, 8, 12, 16, 24, 32, 48)
_BOOK_POINTS: tuple[_DkPoint, ...] = tuple(dict.fromkeys(
    _past_ell(128, 64, 4, _DK) + _past_ell(128, 64, 8, _DK) + _past_ell(128, 64, 16, _DK)
    + _past_ell(256, 64, 4, (4, 8, 16, 24, 32))
    + tuple(_DkPoint(128, 64, 2, d_k, 4) for d_k in (2, 4, 8, 16, 24))
    + tuple(_DkPoint(128, 64, 1, d_k, ell) for d_k in (8, 16) for ell in (4, 8, 16, 32, 64))))
_SMOKE_POINTS: tuple[_DkPoint, ...] = tuple(_DkPoint(16, 8, 1, d_k, ell) for ell in (2, 4) for d_k in (2, 4))
_DK_POINTS: Mapping[str, tuple[_DkPoint, ...]] = {"smoke": _SMOKE_POINTS, "book": _BOOK_POINTS, "paper": _BOOK_POINTS}
_SEEDS: Mapping[str, tuple[int, ...]] = {"smoke": (0, 1), "book": (0, 1, 2), "paper": tuple(range(10))}
def _grid(points: tuple[_DkPoint, ...], seeds: tuple[int, ...]) -> Grid:
    """A Grid of the design's cells (what the runner's dry run and the catalog read; the runs come from points)."""
    return listing_grid((Cell(p.m, p.d_model) for p in points), (1,), seeds)


@dataclass(frozen=True)
class _DkSweep(Experiment):
    """The ``dk_saturation`` table for :func:`rgr.experiments.runner.run_sweep` (module doc)."""

    points: Mapping[str, tuple[_DkPoint, ...]] = field(default_factory=lambda: _DK_POINTS)

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """Every run of the design (``done`` is not needed: there are no refinement rounds)."""
        self.grid(preset)  # names the presets on a bad one
        extra = dict(SMOKE_RUN_FIELDS) if preset == "smoke" else {}
        runs = []
        for p in self.points[preset]:
            if not in_shard(Cell(p.m, p.d_model), p.h * 1000 + p.d_k * 10 + p.ell, *shard):
                continue
            cutoff = extra.get("max_steps", step_cutoff(p.m, p.d_model))
            fields = {k: v for k, v in extra.items() if k != "max_steps"}
            runs += [RunConfig(m=p.m, d_model=p.d_model, h=p.h, d_k=p.d_k, ell=p.ell, seed=s, model=self.model,
                               graph=self.graph, max_steps=cutoff, **fields) for s in _SEEDS[preset]]
        return runs


DK_SATURATION = _DkSweep(
    "dk_saturation", "Mahdavi et al. contrast", "one head, d_k swept past the context length ell and ell swept at "
    "fixed d_k (chapter the law beside other capacity results)", "max", "permutation",
    {name: _grid(_DK_POINTS[name], _SEEDS[name]) for name in ("paper", "book", "smoke")},
    refine=False, book_scope="three seeds and the protocol's step cutoffs; the paper preset: ten seeds",
)
