"""The peers' design on rgr's engine: d_k = d_model = d at every cell, heads swept (chapter *the law beside
other capacity results*).

Dana et al. grow capacity by adding heads of a fixed width d_head = d_model = d. Here each (m, d_model) cell
trains the max-over-heads model on a permutation graph with d_k = d_model and h from the grid's head list, up
to the budget the grid allows: h * d_k <= dk_factor * m ln m / d_model (and dk_max), i.e. the law's variable
x = h d_k d_model / (m ln m) up to dk_factor. No refinement rounds: the head list is the design.
"""

from __future__ import annotations

import math

from ..engine.config import RunConfig
from ..grid import Cell, Grid, base_cutoff
from ..planner import in_shard

__all__ = ["law_x", "heads_for", "planned_runs"]


def law_x(h: int, d_k: int, d_model: int, m: int) -> float:
    """The law's variable x = h d_k d_model / (m ln m)."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    return h * d_k * d_model / (m * math.log(m))


def heads_for(cell: Cell, grid: Grid) -> list[int]:
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
        for h in heads_for(cell, grid):
            if not in_shard(cell, h, *shard):
                continue
            runs += [RunConfig(m=cell.m, d_model=cell.d_model, h=h, d_k=cell.d_model, seed=s, model=model,
                               graph=graph, max_steps=grid.steps_for(cell, base_cutoff(cell, fixed_cutoff)),
                               **dict(grid.run_fields)) for s in grid.seeds_for(cell)]
    return runs
