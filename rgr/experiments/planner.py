"""What an experiment of the protocol is and which runs its sweep needs: :class:`Experiment` (named grids, one per
preset, and :data:`SCHEMA`, its table's columns; the protocol's are listed in :mod:`rgr.experiments.registry`, the
peers' and the extensions' in their own modules), its grid (:class:`Grid`, one preset: its (m, d_model) cells,
heads, seeds and D_K ladder), the common D_K ladder, refinement rounds, shards (data/SCHEMA.md).

How D_K is chosen (recorded in data/SCHEMA.md). Every (cell, h) starts on one
common ladder of powers of two, ``D_K in {2, 4, 8, ...}`` from ``max(h, 2)``
up to ``top(cell) = 2^ceil(log2(factor * m ln m / d_model))`` (clamped to the
preset's ``dk_min``/``dk_max``), so F1-vs-D_K lines of different head counts
meet at equal budgets. Then, round by round, each (cell, h) gets at most one
new D_K, computed from the finished runs in the table:

1. *extend*: when no tested D_K reaches mean F1 >= 0.99, twice the largest
   (up to ``dk_max``); when the smallest tested one already passes, half of it
   (down to h);
2. *refine*: otherwise the midpoint (a multiple of h) between the largest
   failing and the smallest passing D_K, so D_K* is not limited by the
   ladder's spacing —

until ``refine_rounds`` extra points per (cell, h) have been added or the gap is
one multiple of h. Because each round is a function of the table, a rerun
continues exactly where an interrupted sweep stopped. "Passing" is
:func:`rgr.protocol.reaches_target`, the same test the D_K* estimator uses.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import pandas as pd

from ..protocol import MODEL_KINDS, reaches_target
from ..store import Column, RowKey, Schema, check_preset
from . import futility
from .engine.config import DTYPES, GRAPH_KINDS, RunConfig, config_keys, step_cutoff


def ladder(cell: Cell, h: int, grid: Grid) -> list[int]:
    """The common D_K ladder of one (cell, h): powers of two from max(h, 2, grid.dk_from) to the cell's top.

    ``h`` must be a power of two for its ladder to be non-empty (every grid's heads are).
    """
    law = cell.r * cell.m * math.log(cell.m) / cell.d_model
    top = 2 ** math.ceil(math.log2(max(grid.dk_factor * law, 1.0)))
    top = min(max(top, grid.dk_min), grid.dk_max)
    out, dk = [], 2
    while dk <= max(top, h):  # a head count above the top still gets its smallest budget, D_K = h
        if dk >= max(h, grid.dk_from) and dk % h == 0 and dk <= grid.dk_max:
            out.append(dk)
        dk *= 2
    return out


def run_key(cfg: RunConfig, preset: str) -> str:
    """The row key: the run's config and the preset it belongs to.

    The futility rule is left out: a run with or without it fills the same place of its sweep (the
    rule changes no answer: :mod:`rgr.results.futility_replay`), so a sweep that turns the rule on
    keeps every row it already has. The row's ``config_key`` and ``futility`` say how it trained.
    """
    return _with_preset(cfg.replace(futility=None).key(), preset)


def _with_preset(config_key: str, preset: str) -> str:
    return hashlib.sha256(f"{config_key}|{preset}".encode()).hexdigest()[:16]


_KEY_COLUMNS: tuple[str, ...] = (*(f.name for f in dataclasses.fields(RunConfig) if f.name != "futility"), "preset")


def _row_keys(df: pd.DataFrame) -> list[str]:
    """:func:`run_key` of each row of a sweep's table, from its :data:`_KEY_COLUMNS`: what the loader checks each
    row's ``run_key`` against (:class:`rgr.store.RowKey`). The rows' configs are not built (a table holds thousands):
    :func:`rgr.experiments.engine.config.config_keys` hashes the fields as :meth:`RunConfig.key` does."""
    keys = config_keys({c: df[c].tolist() for c in _KEY_COLUMNS[:-1]})
    return [_with_preset(k, p) for k, p in zip(keys, df["preset"].tolist())]


def _config(grid: Grid, cell: Cell, h: int, D_K: int, seed: int, *, model: str, graph: str,
            fixed_cutoff: int | None) -> RunConfig:
    return RunConfig(
        m=cell.m, d_model=cell.d_model, h=h, d_k=D_K // h, seed=seed, model=model, graph=graph, r=cell.r,
        max_steps=grid.steps_for(cell, base_cutoff(cell, fixed_cutoff)), futility=grid.futility_for(cell),
        **dict(grid.run_fields),
    )


def _next_dk(tested: dict[int, float], h: int, base: list[int], grid: Grid) -> int | None:
    """One extension or bisection point for a (cell, h) from mean F1 per tested D_K (None: done)."""
    extra = [d for d in tested if d not in base]
    if len(extra) >= grid.refine_rounds:
        return None
    passing = sorted(d for d, f in tested.items() if reaches_target(f))
    if not passing:
        nxt = 2 * max(tested)
        return nxt if nxt <= grid.dk_max else None
    hi = passing[0]
    failing = [d for d, f in tested.items() if d < hi and not reaches_target(f)]
    if not failing:
        nxt = (hi // 2) // h * h
        return nxt if nxt >= h and nxt not in tested else None
    lo = max(failing)
    mid = int(round((lo + hi) / 2 / h)) * h
    return mid if lo < mid < hi and mid not in tested else None


def planned_runs(grid: Grid, *, model: str, graph: str, fixed_cutoff: int | None = None, refine: bool = True,
                 done: pd.DataFrame | None = None, shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
    """Every run a sweep of ``grid`` needs, given the preset's finished rows ``done``.

    That is the ladder, every D_K already tested, and — with ``refine``, once all
    seeds of all of those have finished — the next extension or bisection point of
    each (cell, h) (see the module's docstring). ``model``, ``graph`` and
    ``fixed_cutoff`` (:func:`rgr.experiments.planner.base_cutoff`) are the experiment's.
    """
    runs: list[RunConfig] = []
    for cell in grid.cells:
        seeds = grid.seeds_for(cell)
        for h in grid.heads:
            if not in_shard(cell, h, *shard):
                continue
            base = ladder(cell, h, grid)
            f1 = _mean_f1(done, cell, h, len(seeds))
            dks = set(base) | set(f1)
            if refine and f1 and set(base) <= set(f1) and len(f1) == len(dks):
                nxt = _next_dk(f1, h, base, grid)
                if nxt is not None:
                    dks.add(nxt)
            runs += [_config(grid, cell, h, D_K, seed, model=model, graph=graph, fixed_cutoff=fixed_cutoff)
                     for D_K in sorted(dks) for seed in seeds]
    return runs


def rounds_left(grid: Grid, done: pd.DataFrame | None, pending: list[RunConfig]) -> int:
    """How many refinement rounds may still follow the runs ``pending`` (an upper bound, for a projection).

    A (cell, h) unit adds at most ``grid.refine_rounds`` points off its ladder; the unit with the fewest so far
    (counting its pending ones) among those still training bounds what is left. Nothing pending: none.
    """
    if not pending:
        return 0
    tested: dict[tuple, set[int]] = {}
    for c in pending:
        tested.setdefault((c.m, c.d_model, c.r, c.h), set()).add(c.D_K)
    if done is not None and len(done):
        for (m, d, r, h), dks in done.groupby(["m", "d_model", "r", "h"])["D_K"]:
            if (m, d, r, h) in tested:
                tested[(m, d, r, h)] |= {int(x) for x in dks}
    cells = {(c.m, c.d_model, c.r): c for c in grid.cells}
    extra = [len(dks - set(ladder(cells[m, d, r], h, grid))) for (m, d, r, h), dks in tested.items()]
    return max(0, grid.refine_rounds - min(extra))


def _mean_f1(done: pd.DataFrame | None, cell: Cell, h: int, n_seeds: int) -> dict[int, float]:
    """Mean test F1 per D_K of one (cell, h) over its finished seeds; only D_K with all seeds count."""
    if done is None or not len(done):
        return {}
    sel = done[(done.m == cell.m) & (done.d_model == cell.d_model) & (done.r == cell.r) & (done.h == h)]
    g = sel.groupby("D_K")["test_f1"]
    full = g.size() >= n_seeds
    return {int(d): float(v) for d, v in g.mean()[full].items()}


def in_shard(cell: Cell, h: int, i: int, n: int) -> bool:
    """(cell, h) units go to shards by a stable hash, so refinement stays inside one shard."""
    digest = hashlib.sha256(f"{cell.m},{cell.d_model},{cell.r},{h}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % n == i


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` -> (i, n); a ValueError naming the shard otherwise (its range: :func:`.runner.check_shard`)."""
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"shard must look like i/n (e.g. 0/4), got {text!r}") from None
    return i, n


def parse_cells(text: str) -> tuple[tuple[int, int], ...]:
    """``"4096x512,2048x256"`` -> ((4096, 512), (2048, 256)): the (m, d_model) cells a sweep is limited to
    (``rgr sweep --cells``); a ValueError naming ``cells`` otherwise."""
    out = []
    for part in text.split(","):
        try:
            m, d = (int(x) for x in part.strip().lower().split("x"))
        except ValueError:
            raise ValueError(f"cells must look like MxD[,MxD...] (e.g. 4096x512,2048x256), got {text!r}") from None
        if m < 1 or d < 1:
            raise ValueError(f"cells: m and d_model must be positive, got {part.strip()!r}")
        out.append((m, d))
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------ the grids: a preset's cells, heads, seeds and D_K ladder


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


# ----------------------------------------------------------------------------- an experiment: named grids


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
    return Schema("experiment", tuple(cfg + res), checks, RowKey(_KEY_COLUMNS, _row_keys))


def _is_curve(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], int)
                                       and isinstance(p[1], (int, float)) and math.isfinite(p[1]) for p in v)


SCHEMA = _schema()


@dataclass(frozen=True)
class Experiment:
    """A named experiment of the protocol with its presets; the runner's unit (:mod:`rgr.experiments.registry`)."""

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

    # --- what a table is (rgr.store.Table); how it trains: rgr.experiments.trainer

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
        return planned_runs(self.grid(preset), model=self.model, graph=self.graph, fixed_cutoff=self.fixed_cutoff,
                            refine=self.refine, done=done, shard=shard)

    def run_key(self, cfg: RunConfig, preset: str) -> str:
        return run_key(cfg, preset)


# a smoke preset's short runs (max_steps 100 besides): checks, validation and test contexts
SMOKE_FIELDS: tuple[tuple[str, object], ...] = (("check_every", 50), ("n_val", 20), ("n_test", 50))
SMOKE_RUN_FIELDS: tuple[tuple[str, object], ...] = (("max_steps", 100), *SMOKE_FIELDS)  # a design listed run by run


def smoke_grid(cells: tuple[Cell, ...], heads: tuple[int, ...] = (1, 4)) -> Grid:
    return Grid(cells=cells, heads=heads, seeds=(0, 1), dk_factor=1.0, dk_min=8, dk_max=32, refine_rounds=1,
                max_steps=100, run_fields=SMOKE_FIELDS)


def listing_grid(cells: Iterable[Cell], heads: Iterable[int], seeds: Iterable[int], **kw: Any) -> Grid:
    """A declared design's cells (first-seen order), heads and seeds (sorted), no refinement: what ``sweep --list``
    and data/SCHEMA.md read; its table plans its runs from its own units."""
    return Grid(tuple(dict.fromkeys(cells)), tuple(sorted(set(heads))), tuple(sorted(set(seeds))), refine_rounds=0,
                **kw)
