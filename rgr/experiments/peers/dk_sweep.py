"""Does one head's capacity saturate in d_k at the context length ell? (chapter *the law beside other capacity
results*; table ``dk_saturation``.)

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
below d_k; the law's form predicts neither. No refinement rounds: the points are the design.

- ``smoke``: (16, 8), ell in {2, 4}, d_k in {2, 4}, 100 steps: seconds, for tests;
- ``book``: the two series above, seeds 0-2 (about 1.5 CPU hours on one worker);
- ``paper``: the same points, seeds 0-9 (for a GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import pandas as pd

from ..engine.config import RunConfig, step_cutoff
from ..planner import Cell, Grid, in_shard
from ..registry import Experiment

__all__ = ["DK_SATURATION"]


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
_SMOKE_FIELDS = dict(max_steps=100, check_every=50, n_val=20, n_test=50)


def _series_of(runs: pd.DataFrame) -> pd.Series:
    """Which series each row of the table belongs to: "past_ell" (ell <= 16, the d_k ladders) or "ell" (ell swept
    at d_k 8 and 16); a row at d_k in {8, 16} and ell <= 16 is in both, and is labelled "past_ell" here."""
    return pd.Series(["past_ell" if e <= 16 else "ell" for e in runs["ell"]], index=runs.index)


def _grid(points: tuple[_DkPoint, ...], seeds: tuple[int, ...]) -> Grid:
    """A Grid of the design's cells (what the runner's dry run and the catalog read; the runs come from points)."""
    cells = tuple(dict.fromkeys(Cell(p.m, p.d_model) for p in points))
    return Grid(cells, (1,), seeds, refine_rounds=0)


@dataclass(frozen=True)
class _DkSweep(Experiment):
    """The ``dk_saturation`` table for :func:`rgr.experiments.runner.run_sweep` (module doc)."""

    points: Mapping[str, tuple[_DkPoint, ...]] = field(default_factory=lambda: _DK_POINTS)

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        """Every run of the design (``done`` is not needed: there are no refinement rounds)."""
        self.grid(preset)  # names the presets on a bad one
        extra = _SMOKE_FIELDS if preset == "smoke" else {}
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
