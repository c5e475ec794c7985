"""The protocol's experiments E1-E6 as named grids (chapters *permutation sweeps*, *denser graphs*, *softmax*,
*value channel*).

An :class:`Experiment` (``base``, ``lambda8``, ``lambda32``, ``regular``,
``softmax``, ``linear``, ``value``, ``value_long``, ...) has three presets, each a frozen
:class:`rgr.experiments.planner.Grid`:

- ``paper``: the protocol's grid, seeds and step cutoffs — for a GPU;
- ``book``: the same protocol on a reduced grid (fewer seeds, heads and
  largest points) that a 2-core CPU finishes in about an hour;
- ``smoke``: seconds, for tests.

Two tables of the same kind are declared in their own modules, so a chapter that reads neither loads neither: the
peers' head sweep (:data:`rgr.experiments.peers.engine_sweeps.PEERS`) and the settled-threshold extension
(:data:`rgr.experiments.settled.SETTLED`); :func:`rgr.catalog.get` finds every table by name.

An experiment is what its table is (:class:`rgr.experiments.tables.Table`): it plans its runs
(:mod:`rgr.experiments.planner`) and keys them, and its rows follow :data:`SCHEMA`. How its runs train (stacks of
the engine) is :class:`rgr.experiments.trainer.ExperimentTrainer`, which only the runner's callers import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ..protocol import HEADS_ALL, MODEL_KINDS
from ..store import Column, RowKey, Schema
from . import futility, planner
from .engine.config import DTYPES, GRAPH_KINDS, RunConfig
from .planner import Cell, Grid
from .tables import check_preset

__all__ = ["Experiment", "EXPERIMENTS", "SCHEMA", "get_experiment", "smoke_grid"]

_FUTILITY = "trend-v1"  # the rule of the paper sweeps still to run (README "Futility stopping", data/SCHEMA.md)


def _schema() -> Schema:
    pos = dict(low=1)
    cfg = [
        Column("m", "int", "items (vertices)", low=2),
        Column("d_model", "int", "embedding width", **pos),
        Column("h", "int", "heads", **pos),
        Column("d_k", "int", "per-head key/query width", **pos),
        Column("D_K", "int", "total key budget h * d_k", **pos),
        Column("seed", "int", "run seed: graph, embeddings, init and contexts derive from it", low=0),
        Column("model", "str", "the model kind", choices=MODEL_KINDS),
        Column("graph", "str", "the graph family", choices=GRAPH_KINDS),
        Column("r", "int", "out-degree of the graph (1 for permutations)", **pos),
        Column("ell", "int", "context length", low=2),
        Column("rho", "float", "target-in-context rate of the sampler", low=0, high=1),
        Column("max_steps", "int", "the run's step cutoff", **pos),
        Column("alpha", "float", "logit scale of the loss", low=0),
        Column("lr", "float", "AdamW learning rate (weight decay 0)", low=0),
        Column("check_every", "int", "steps between validation checks", **pos),
        Column("patience", "int", "consecutive checks that stop a run", **pos),
        Column("f1_stop", "float", "validation micro-F1 a check must exceed", low=0, high=1),
        Column("mse_tol", "float", "value channel: relative MSE improvement a check must beat", low=0, high=1),
        Column("n_val", "int", "fixed validation contexts", **pos),
        Column("n_test", "int", "fixed test contexts", **pos),
        Column("init_std", "float", "std of the W_Q, W_K init entries", low=0),
        Column("d_msg", "int", "value channel: message width", **pos),
        Column("dtype", "str", "parameter and activation dtype", choices=tuple(DTYPES)),
        Column("futility", "str", "futility-stopping rule the run trained under (rgr.experiments.futility); "
               "empty: none", nullable=True, since="2026-11-25", choices=tuple(futility.RULES)),
    ]
    f1 = dict(nullable=True, low=0, high=1, null_when=("model", ("value",)))
    res = [
        Column("experiment", "str", "experiment name (python -m rgr sweep --list)"),
        Column("config_key", "str", "hash of the run config alone (equal across presets)"),
        Column("steps", "int", "optimisation steps taken", low=0),
        Column("stop_reason", "str", "converged (early stop), cutoff (max_steps reached) or futile (stopped by the "
               "futility rule: counts as failing, keeps its F1)", choices=("converged", "cutoff", "futile")),
        Column("test_f1", "float", "micro-F1 over all ordered pairs of the test contexts, learned tau", **f1),
        Column("test_precision", "float", "micro precision on the test contexts", **f1),
        Column("test_recall", "float", "micro recall on the test contexts", **f1),
        Column("test_mse", "float", "value channel: test MSE over valid positions", nullable=True, low=0,
               null_when=("model", ("max", "softmax", "sum"))),
        Column("tau", "float", "the learned threshold at the stop", nullable=True, null_when=("model", ("value",))),
        Column("val_curve", "json", "[[step, validation metric], ...] at every check"),
        Column("stack_size", "int", "runs trained together in the stack that held this run", **pos),
        Column("wall_time_s", "float", "wall time of the stack divided by its size", low=0),
        Column("reused_from", "str", "where a reused run trained: <table>:<run_key> of the row it was copied "
               "from (its config, results and provenance); empty: trained for this row", nullable=True,
               since="2026-11-25"),
    ]
    checks = (("D_K = h * d_k", lambda df: df["D_K"] != df["h"] * df["d_k"]),
              ("val_curve is a list of [step, value] pairs", lambda df: ~df["val_curve"].map(_is_curve)))
    return Schema("experiment", tuple(cfg + res), checks, RowKey(planner.KEY_COLUMNS, planner.row_keys))


def _is_curve(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], int)
                                       and isinstance(p[1], (int, float)) and math.isfinite(p[1]) for p in v)


SCHEMA = _schema()


@dataclass(frozen=True)
class Experiment:
    """A named experiment of the protocol with its presets; the runner's unit (see the module doc)."""

    name: str
    spec: str  # the protocol section(s) it follows
    description: str
    model: str  # "max" | "softmax" | "sum" | "value"
    graph: str  # "permutation" | "regular"
    presets: Mapping[str, Grid]  # preset name -> grid
    fixed_cutoff: int | None = None  # every cell's step cutoff (None: the protocol's step_cutoff(m, d_model))
    refine: bool = True  # threshold-locating rounds (off for the MSE experiment)
    shardable: bool = True
    book_scope: str = "the protocol's step cutoffs, but fewer seeds, head counts and cells than the paper"
    reuse_from: tuple[str, ...] = ()  # other tables whose identical runs are copied, not retrained (reuse.py)

    @property
    def schema(self) -> Schema:
        return SCHEMA.renamed(self.name)

    def grid(self, preset: str) -> Grid:
        return self.presets[check_preset(self, preset)]

    # --- what a table is (rgr.experiments.tables.Table); how it trains: rgr.experiments.trainer

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        return planner.planned_runs(self.grid(preset), model=self.model, graph=self.graph,
                                    fixed_cutoff=self.fixed_cutoff, refine=self.refine, done=done, shard=shard)

    def run_key(self, cfg: RunConfig, preset: str) -> str:
        return planner.run_key(cfg, preset)


def smoke_grid(cells: tuple[Cell, ...], heads: tuple[int, ...] = (1, 4)) -> Grid:
    return Grid(cells=cells, heads=heads, seeds=(0, 1), dk_factor=1.0, dk_min=8, dk_max=32, refine_rounds=1,
                max_steps=100, run_fields=(("check_every", 50), ("n_val", 20), ("n_test", 50)))


_BASE_CELLS = tuple(Cell(m, d) for m in (64, 128, 256, 512) for d in (16, 32, 64))
_LAMBDA8_CELLS = tuple(Cell(m, m // 8) for m in (128, 256, 512, 1024, 2048, 4096))
_LAMBDA32_CELLS = (Cell(1024, 32), Cell(512, 16))
_REGULAR_CELLS = tuple(Cell(128, 32, r) for r in (1, 2, 4, 8, 16, 32))
_SOFTMAX_CELLS = (Cell(64, 32), Cell(64, 16), Cell(128, 32), Cell(256, 32))
_VALUE_CELLS = (Cell(64, 16), Cell(64, 32))
_LINEAR_CELLS = (Cell(64, 16), Cell(128, 32), Cell(256, 32))
_DESIGN_CHECK_CELLS = (Cell(384, 48),)
# patience above any step cutoff / check interval: a run stops only at its cutoff
_NO_EARLY_STOP: tuple[tuple[str, object], ...] = (("patience", 1_000_000),)
# value_long, a decision run declared before it ran (README "value_long"): E6 at (64, 32), the ladder 64..512 and a
# cutoff of 80,000 steps (the protocol's is 20,000), where value's top budget was cut still improving for h >= 4
_VALUE_LONG = Grid((Cell(64, 32),), (1, 2, 4, 8, 16), (0, 1, 2), dk_min=512, dk_max=512, dk_from=64, refine_rounds=0)

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "base", "E1, E2", "base grid: m in {64..512} x d_model in {16, 32, 64}, max over heads", "max",
            "permutation",
            {
                "paper": Grid(_BASE_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(_BASE_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 8), Cell(32, 8))),
            },
        ),
        Experiment(
            "lambda8", "E1, E2", "fixed compression m / d_model = 8, m up to 4096", "max", "permutation",
            {
                "paper": Grid(_LAMBDA8_CELLS, HEADS_ALL, tuple(range(10)), few_seeds_from_m=2048, futility=_FUTILITY),
                # the first three diagonal cells are base-grid cells: the book runs the next one
                "book": Grid(_LAMBDA8_CELLS[3:4], (1, 4, 8, 16, 32), (0, 1), dk_factor=2.0, dk_max=1024,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 2), Cell(32, 4))),
            },
            reuse_from=("base",),
        ),
        Experiment(
            "lambda32", "E1, E2", "extreme compression m / d_model = 32", "max", "permutation",
            {
                "paper": Grid(_LAMBDA32_CELLS, HEADS_ALL, tuple(range(10)), futility=_FUTILITY),
                # (512, 16) is a base-grid cell: the book runs (1024, 32)
                "book": Grid(_LAMBDA32_CELLS[:1], (1, 4, 16, 32), (0, 1), dk_factor=2.0, dk_max=2048, refine_rounds=2),
                "smoke": smoke_grid((Cell(32, 1),)),
            },
            reuse_from=("base",),
        ),
        Experiment(
            "regular", "E4", "directed r-regular graphs, m = 128, d_model = 32, r in {1..32}", "max", "regular",
            {
                "paper": Grid(_REGULAR_CELLS, HEADS_ALL, tuple(range(10)), futility=_FUTILITY),
                "book": Grid(_REGULAR_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=4096,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 8, 1), Cell(16, 8, 2))),
            },
        ),
        Experiment(
            "softmax", "E5", "softmax per head, summed over heads", "softmax", "permutation",
            {
                "paper": Grid(_SOFTMAX_CELLS, HEADS_ALL, (0, 1, 2), dk_factor=8.0),
                "book": Grid(_SOFTMAX_CELLS[:3], (1, 2, 4, 8, 16), (0, 1), dk_factor=4.0, dk_max=1024, refine_rounds=1),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
            fixed_cutoff=80_000,
        ),
        Experiment(
            "linear", "ablation", "heads summed without a nonlinearity (not in the paper): one head of width D_K?",
            "sum", "permutation",
            {
                "paper": Grid(_LINEAR_CELLS, (1, 4, 16, 64), tuple(range(10))),
                "book": Grid(_LINEAR_CELLS, (1, 4, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=1),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
        ),
        Experiment(
            "value", "E6", "value channel: S_max V_C against the target's message, MSE", "value", "permutation",
            {
                # the ladder reaches 8x the permutation law: at 2x the error was still falling at the top rung
                "paper": Grid(_VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "book": Grid(_VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
            refine=False,
        ),
        Experiment(
            "design_check", "E1, E2", "held-out cell (384, 48) for the design rule (chapter choosing heads)", "max",
            "permutation",
            {
                "paper": Grid(_DESIGN_CHECK_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(_DESIGN_CHECK_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(24, 6),)),
            },
        ),
        Experiment(
            "value_nostop", "E6 ablation", "value channel, one head, early stopping off: every run trains to the step "
            "cutoff (chapter value channel: is the one-head error's rise with D_K an early stop?)", "value",
            "permutation",
            {
                "paper": Grid(_VALUE_CELLS, (1,), (0, 1, 2), dk_factor=8.0, refine_rounds=0, run_fields=_NO_EARLY_STOP),
                "book": Grid(_VALUE_CELLS, (1,), (0, 1, 2), dk_factor=8.0, refine_rounds=0, run_fields=_NO_EARLY_STOP),
                "smoke": Grid((Cell(16, 8),), (1,), (0, 1), dk_factor=1.0, dk_min=8, dk_max=32, refine_rounds=0,
                              max_steps=100, run_fields=(("check_every", 50), ("n_val", 20), ("n_test", 50),
                                                         *_NO_EARLY_STOP)),
            },
            refine=False,
        ),
        Experiment(
            "value_long", "E6 deviation", "value channel at (64, 32), D_K 64..512, 80,000-step cutoff (the protocol's: "
            "20,000): decides value_d32_best, undecided at value's cutoff (chapter does it replicate?)", "value",
            "permutation",
            {"paper": _VALUE_LONG, "book": _VALUE_LONG, "smoke": smoke_grid((Cell(16, 8),))},
            fixed_cutoff=80_000, refine=False, book_scope="identical to the paper preset (one cell, three seeds)",
        ),
    )
}


def get_experiment(name: str) -> Experiment:
    """The protocol experiment called ``name`` (every table, E7 and constructions included: :func:`rgr.catalog.get`)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]
