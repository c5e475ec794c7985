"""The peers' design on rgr's engine: d_k = d_model = d at every cell, heads swept (chapter *the law beside
other capacity results*).

Dana et al. grow capacity by adding heads of a fixed width d_head = d_model = d. Here each (m, d_model) cell
trains the max-over-heads model on a permutation graph with d_k = d_model and h from the grid's head list, up
to the budget the grid allows: h * d_k <= dk_factor * m ln m / d_model (and dk_max), i.e. the law's variable
x = h d_k d_model / (m ln m) up to dk_factor. No refinement rounds: the head list is the design.

The table ``peers`` (:data:`PEERS`, read through :func:`rgr.catalog.get`) is declared here, so a chapter that reads
another table does not load it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..engine.config import RunConfig
from ..planner import Cell, Grid, base_cutoff, in_shard
from ..registry import Experiment

__all__ = ["law_x", "planned_runs", "PEERS", "PEERS_FIXED_RATIO", "PEERS_FIXED_M"]


def law_x(h: int, d_k: int, d_model: int, m: int) -> float:
    """The law's variable x = h d_k d_model / (m ln m)."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    return h * d_k * d_model / (m * math.log(m))


def _heads_for(cell: Cell, grid: Grid) -> list[int]:
    """Head counts of one cell: those with x <= grid.dk_factor and h * d_model <= grid.dk_max (the smallest always)."""
    heads = sorted(grid.heads)
    kept = [h for h in heads if law_x(h, cell.d_model, cell.d_model, cell.m) <= grid.dk_factor
            and h * cell.d_model <= grid.dk_max]
    return kept or heads[:1]


def planned_runs(grid: Grid, *, model: str, graph: str, fixed_cutoff: int | None = None,
                 shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
    """Every run of the head sweep of ``grid`` (no finished rows needed: the design has no refinement rounds)."""
    runs = []
    for cell in grid.cells:
        for h in _heads_for(cell, grid):
            if not in_shard(cell, h, *shard):
                continue
            runs += [RunConfig(m=cell.m, d_model=cell.d_model, h=h, d_k=cell.d_model, seed=s, model=model,
                               graph=graph, max_steps=grid.steps_for(cell, base_cutoff(cell, fixed_cutoff)),
                               **dict(grid.run_fields)) for s in grid.seeds_for(cell)]
    return runs


@dataclass(frozen=True)
class _HeadSweep(Experiment):
    """An experiment of the peers' design: d_k = d_model, heads swept (see the module doc)."""

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """Every run of the head sweep (``done`` is not needed: the design has no refinement rounds)."""
        return planned_runs(self.grid(preset), model=self.model, graph=self.graph, fixed_cutoff=self.fixed_cutoff,
                            shard=shard)


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
                      refine_rounds=0, max_steps=100,
                      run_fields=(("check_every", 50), ("n_val", 20), ("n_test", 50))),
    },
    refine=False, book_scope="three seeds and the protocol's step cutoffs; cells up to m = 256",
)
