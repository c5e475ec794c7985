"""Experiments as grids of runs, and the resumable runner that fills data/ (protocol E1-E6).

An :class:`Experiment` (``base``, ``lambda8``, ``lambda32``, ``regular``,
``softmax``, ``linear``, ``value``) has three presets, each a :class:`Grid`:

- ``paper``: the protocol's grid, seeds and step cutoffs — for a GPU;
- ``book``: the same protocol on a reduced grid (fewer seeds, heads and
  largest points) that a 2-core CPU finishes in about an hour;
- ``smoke``: seconds, for tests.

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
continues exactly where an interrupted sweep stopped.

The runner trains pending runs in stacks (see :func:`rgr.experiments.train.train`), writes
each finished stack's rows atomically to data/<experiment>.csv (or a shard
file), and skips every run whose ``run_key`` is already in the table.

Where the stacks train is the runner's :class:`Executor`: :class:`LocalExecutor`
(the default: one after the other, in this process) or
:class:`rgr.experiments.cluster.DaskExecutor` (a Dask cluster: a local one, or many GPU
machines, e.g. on Slurm through dask-jobqueue). Either way a stack's rows come
back to this process, which writes them as each stack finishes and plans the
refinement rounds; a stack that fails is reported with its configs
(:class:`SweepError`) after the others have been written.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Protocol, Sequence

import pandas as pd
import torch
from tqdm import tqdm

from ..paths import data_dir
from ..task.metrics import reaches_target
from ..store import Column, Schema, TableError, load_table, provenance, write_rows
from .train import RunConfig, resolve_device, stack_groups, step_cutoff, train

__all__ = [
    "Cell",
    "Grid",
    "Experiment",
    "EXPERIMENTS",
    "SCHEMA",
    "get_experiment",
    "run_key",
    "ladder",
    "planned_runs",
    "load_results",
    "table_path",
    "run_sweep",
    "merge_shards",
    "Stack",
    "train_stack",
    "Executor",
    "LocalExecutor",
    "Failure",
    "SweepError",
]

HEADS_ALL: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)


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
    refine_rounds: int = 3
    step_scale: float = 1.0  # max_steps = step_scale * protocol cutoff (rounded to check_every)
    max_steps: int | None = None  # overrides the protocol cutoff when set
    few_seeds_from_m: int | None = None  # cells with m >= this use only the first `few_seeds` seeds
    few_seeds: int = 3
    run_fields: tuple[tuple[str, object], ...] = ()  # extra RunConfig fields (e.g. n_test for smoke)

    def seeds_for(self, cell: Cell) -> tuple[int, ...]:
        if self.few_seeds_from_m is not None and cell.m >= self.few_seeds_from_m:
            return self.seeds[: self.few_seeds]
        return self.seeds

    def steps_for(self, cell: Cell, base: int) -> int:
        if self.max_steps is not None:
            return self.max_steps
        return max(500, int(round(self.step_scale * base / 500)) * 500)


@dataclass(frozen=True)
class Experiment:
    """A named experiment of the protocol with its presets."""

    name: str
    spec: str  # the protocol section(s) it follows
    description: str
    model: str  # "max" | "softmax" | "sum" | "value"
    graph: str  # "permutation" | "regular"
    presets: dict[str, Grid]
    cutoff: Callable[[Cell], int] = field(default=lambda c: step_cutoff(c.m, c.d_model))
    refine: bool = True  # threshold-locating rounds (off for the MSE experiment)

    def grid(self, preset: str) -> Grid:
        if preset not in self.presets:
            raise ValueError(f"preset must be one of {sorted(self.presets)}, got {preset!r}")
        return self.presets[preset]


def _smoke(cells: tuple[Cell, ...], heads: tuple[int, ...] = (1, 4)) -> Grid:
    return Grid(cells=cells, heads=heads, seeds=(0, 1), dk_factor=1.0, dk_min=8, dk_max=32, refine_rounds=1,
                max_steps=100, run_fields=(("check_every", 50), ("n_val", 20), ("n_test", 50)))


BASE_CELLS = tuple(Cell(m, d) for m in (64, 128, 256, 512) for d in (16, 32, 64))
LAMBDA8_CELLS = tuple(Cell(m, m // 8) for m in (128, 256, 512, 1024, 2048, 4096))
LAMBDA32_CELLS = (Cell(1024, 32), Cell(512, 16))
REGULAR_CELLS = tuple(Cell(128, 32, r) for r in (1, 2, 4, 8, 16, 32))
SOFTMAX_CELLS = (Cell(64, 32), Cell(64, 16), Cell(128, 32), Cell(256, 32))
VALUE_CELLS = (Cell(64, 16), Cell(64, 32))
LINEAR_CELLS = (Cell(64, 16), Cell(128, 32), Cell(256, 32))
DESIGN_CHECK_CELLS = (Cell(384, 48),)  # chapter *choosing heads*: a held-out cell, chosen before it was run

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "base", "E1, E2", "base grid: m in {64..512} x d_model in {16, 32, 64}, max over heads", "max", "permutation",
            {
                "paper": Grid(BASE_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(BASE_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=2),
                "smoke": _smoke((Cell(16, 8), Cell(32, 8))),
            },
        ),
        Experiment(
            "lambda8", "E1, E2", "fixed compression m / d_model = 8, m up to 4096", "max", "permutation",
            {
                "paper": Grid(LAMBDA8_CELLS, HEADS_ALL, tuple(range(10)), few_seeds_from_m=2048),
                # the first three diagonal cells are base-grid cells: the book runs the next one
                "book": Grid(LAMBDA8_CELLS[3:4], (1, 4, 8, 16, 32), (0, 1), dk_factor=2.0, dk_max=1024, refine_rounds=2),
                "smoke": _smoke((Cell(16, 2), Cell(32, 4))),
            },
        ),
        Experiment(
            "lambda32", "E1, E2", "extreme compression m / d_model = 32", "max", "permutation",
            {
                "paper": Grid(LAMBDA32_CELLS, HEADS_ALL, tuple(range(10))),
                # (512, 16) is a base-grid cell: the book runs (1024, 32)
                "book": Grid(LAMBDA32_CELLS[:1], (1, 4, 16, 32), (0, 1), dk_factor=2.0, dk_max=2048, refine_rounds=2),
                "smoke": _smoke((Cell(32, 1),)),
            },
        ),
        Experiment(
            "regular", "E4", "directed r-regular graphs, m = 128, d_model = 32, r in {1..32}", "max", "regular",
            {
                "paper": Grid(REGULAR_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(REGULAR_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=4096, refine_rounds=2),
                "smoke": _smoke((Cell(16, 8, 1), Cell(16, 8, 2))),
            },
        ),
        Experiment(
            "softmax", "E5", "softmax per head, summed over heads", "softmax", "permutation",
            {
                "paper": Grid(SOFTMAX_CELLS, HEADS_ALL, (0, 1, 2), dk_factor=8.0),
                "book": Grid(SOFTMAX_CELLS[:3], (1, 2, 4, 8, 16), (0, 1), dk_factor=4.0, dk_max=1024, refine_rounds=1),
                "smoke": _smoke((Cell(16, 8),)),
            },
            cutoff=lambda c: 80_000,
        ),
        Experiment(
            "linear", "ablation", "heads summed without a nonlinearity (not in the paper): one head of width D_K?", "sum",
            "permutation",
            {
                "paper": Grid(LINEAR_CELLS, (1, 4, 16, 64), tuple(range(10))),
                "book": Grid(LINEAR_CELLS, (1, 4, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=1),
                "smoke": _smoke((Cell(16, 8),)),
            },
        ),
        Experiment(
            "value", "E6", "value channel: S_max V_C against the target's message, MSE", "value", "permutation",
            {
                # the ladder reaches 8x the permutation law: at 2x the error was still falling at the top rung
                "paper": Grid(VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "book": Grid(VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "smoke": _smoke((Cell(16, 8),)),
            },
            refine=False,
        ),
        Experiment(
            "design_check", "E1, E2", "held-out cell (384, 48) for the design rule (chapter choosing heads)", "max",
            "permutation",
            {
                "paper": Grid(DESIGN_CHECK_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(DESIGN_CHECK_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=2),
                "smoke": _smoke((Cell(24, 6),)),
            },
        ),
    )
}


def get_experiment(name: str) -> Experiment:
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]


# ---------------------------------------------------------------------------------------
# the grid


def ladder(cell: Cell, h: int, grid: Grid) -> list[int]:
    """The common D_K ladder of one (cell, h): powers of two from max(h, 2) to the cell's top.

    ``h`` must be a power of two for its ladder to be non-empty (every grid's heads are).
    """
    law = cell.r * cell.m * math.log(cell.m) / cell.d_model
    top = 2 ** math.ceil(math.log2(max(grid.dk_factor * law, 1.0)))
    top = min(max(top, grid.dk_min), grid.dk_max)
    out, dk = [], 2
    while dk <= max(top, h):  # a head count above the top still gets its smallest budget, D_K = h
        if dk >= h and dk % h == 0 and dk <= grid.dk_max:
            out.append(dk)
        dk *= 2
    return out


def run_key(cfg: RunConfig, preset: str) -> str:
    """The row key: the run's config and the preset it belongs to."""
    return hashlib.sha256(f"{cfg.key()}|{preset}".encode()).hexdigest()[:16]


def _config(exp: Experiment, grid: Grid, cell: Cell, h: int, D_K: int, seed: int) -> RunConfig:
    return RunConfig(
        m=cell.m, d_model=cell.d_model, h=h, d_k=D_K // h, seed=seed, model=exp.model, graph=exp.graph, r=cell.r,
        max_steps=grid.steps_for(cell, exp.cutoff(cell)), **dict(grid.run_fields),
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


def planned_runs(exp: Experiment, preset: str, done: pd.DataFrame | None = None, shard: tuple[int, int] = (0, 1)) -> list[RunConfig]:
    """Every run the sweep needs, given this preset's finished rows ``done``.

    That is the ladder, every D_K already tested, and — once all seeds of all
    of those have finished — the next extension or bisection point of each
    (cell, h) (see the module's docstring).
    """
    grid = exp.grid(preset)
    runs: list[RunConfig] = []
    for cell in grid.cells:
        seeds = grid.seeds_for(cell)
        for h in grid.heads:
            if not _in_shard(cell, h, *shard):
                continue
            base = ladder(cell, h, grid)
            f1 = _mean_f1(done, cell, h, len(seeds))
            dks = set(base) | set(f1)
            if exp.refine and f1 and set(base) <= set(f1) and len(f1) == len(dks):
                nxt = _next_dk(f1, h, base, grid)
                if nxt is not None:
                    dks.add(nxt)
            runs += [_config(exp, grid, cell, h, D_K, seed) for D_K in sorted(dks) for seed in seeds]
    return runs


def _mean_f1(done: pd.DataFrame | None, cell: Cell, h: int, n_seeds: int) -> dict[int, float]:
    """Mean test F1 per D_K of one (cell, h) over its finished seeds; only D_K with all seeds count."""
    if done is None or not len(done):
        return {}
    sel = done[(done.m == cell.m) & (done.d_model == cell.d_model) & (done.r == cell.r) & (done.h == h)]
    g = sel.groupby("D_K")["test_f1"]
    full = g.size() >= n_seeds
    return {int(d): float(v) for d, v in g.mean()[full].items()}


def _in_shard(cell: Cell, h: int, i: int, n: int) -> bool:
    """(cell, h) units go to shards by a stable hash, so refinement stays inside one shard."""
    digest = hashlib.sha256(f"{cell.m},{cell.d_model},{cell.r},{h}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % n == i


# ---------------------------------------------------------------------------------------
# the table


def _schema() -> Schema:
    cfg = [
        Column("m", "int", "items (vertices)"),
        Column("d_model", "int", "embedding width"),
        Column("h", "int", "heads"),
        Column("d_k", "int", "per-head key/query width"),
        Column("D_K", "int", "total key budget h * d_k"),
        Column("seed", "int", "run seed: graph, embeddings, init and contexts derive from it"),
        Column("model", "str", "max | softmax | sum | value"),
        Column("graph", "str", "permutation | regular"),
        Column("r", "int", "out-degree of the graph (1 for permutations)"),
        Column("ell", "int", "context length"),
        Column("rho", "float", "target-in-context rate of the sampler"),
        Column("max_steps", "int", "the run's step cutoff"),
        Column("alpha", "float", "logit scale of the loss"),
        Column("lr", "float", "AdamW learning rate (weight decay 0)"),
        Column("check_every", "int", "steps between validation checks"),
        Column("patience", "int", "consecutive checks that stop a run"),
        Column("f1_stop", "float", "validation micro-F1 a check must exceed"),
        Column("mse_tol", "float", "value channel: relative MSE improvement a check must beat"),
        Column("n_val", "int", "fixed validation contexts"),
        Column("n_test", "int", "fixed test contexts"),
        Column("init_std", "float", "std of the W_Q, W_K init entries"),
        Column("d_msg", "int", "value channel: message width"),
        Column("dtype", "str", "float32 | float64"),
    ]
    res = [
        Column("experiment", "str", "experiment name (python -m rgr sweep --list)"),
        Column("config_key", "str", "hash of the run config alone (equal across presets)"),
        Column("steps", "int", "optimisation steps taken"),
        Column("stop_reason", "str", "converged (early stop) | cutoff (max_steps reached)"),
        Column("test_f1", "float", "micro-F1 over all ordered pairs of the test contexts, learned tau", nullable=True),
        Column("test_precision", "float", "micro precision on the test contexts", nullable=True),
        Column("test_recall", "float", "micro recall on the test contexts", nullable=True),
        Column("test_mse", "float", "value channel: test MSE over valid positions", nullable=True),
        Column("tau", "float", "the learned threshold at the stop", nullable=True),
        Column("val_curve", "json", "[[step, validation metric], ...] at every check"),
        Column("stack_size", "int", "runs trained together in the stack that held this run"),
        Column("wall_time_s", "float", "wall time of the stack divided by its size"),
    ]
    return Schema("experiment", tuple(cfg + res))


SCHEMA = _schema()


def table_path(exp: Experiment | str, shard: tuple[int, int] | None = None, root: Path | None = None) -> Path:
    name = exp if isinstance(exp, str) else exp.name
    base = root or data_dir()
    if shard is None or shard[1] == 1:
        return base / f"{name}.csv"
    return base / f"{name}.shard-{shard[0]}-of-{shard[1]}.csv"


def _schema_for(name: str) -> Schema:
    return replace(SCHEMA, name=name)


def load_results(exp: Experiment | str, preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """The experiment's table (with any shard files merged), optionally one preset's rows."""
    name = exp if isinstance(exp, str) else exp.name
    base = root or data_dir()
    paths = [p for p in [base / f"{name}.csv", *sorted(base.glob(f"{name}.shard-*-of-*.csv"))] if p.is_file()]
    if not paths:
        raise TableError(f"{base / f'{name}.csv'}: no such table; produce it with `python -m rgr sweep {name} --preset book`")
    df = pd.concat([load_table(p, _schema_for(name)) for p in paths], ignore_index=True)
    df = df.drop_duplicates("run_key", keep="last").reset_index(drop=True)
    if preset is not None:
        df = df[df["preset"] == preset].reset_index(drop=True)
    return df


def _rows(results, keys: list[str], exp: Experiment, preset: str, prov: dict, wall: float) -> list[dict]:
    rows = []
    for res, key in zip(results, keys):
        r = res.row()
        r["config_key"] = r.pop("key")
        r.update(run_key=key, experiment=exp.name, stack_size=len(results), wall_time_s=wall / len(results), **prov)
        rows.append(r)
    return rows


def merge_shards(exp: Experiment | str, root: Path | None = None) -> int:
    """Fold shard files into the main table (then delete them); returns the row count."""
    name = exp if isinstance(exp, str) else exp.name
    base = root or data_dir()
    df = load_results(name, root=base)
    shards = sorted(base.glob(f"{name}.shard-*-of-*.csv"))
    n = write_rows(base / f"{name}.csv", _schema_for(name), df.to_dict("records"))
    for p in shards:
        p.unlink()
    return n


@dataclass(frozen=True)
class Stack:
    """The unit of work an executor trains: runs of one experiment's preset with one stack key."""

    experiment: str
    preset: str
    configs: tuple[RunConfig, ...]

    @property
    def keys(self) -> list[str]:
        """The run_key of each config (the table's row keys)."""
        return [run_key(c, self.preset) for c in self.configs]


def train_stack(stack: Stack, device: str | torch.device = "auto") -> list[dict]:
    """Train one stack where this is called (this process, or a Dask worker) and return its table rows.

    The device is resolved here (``"auto"``: this machine's GPU when it has one),
    and the rows' provenance names it.
    """
    exp = get_experiment(stack.experiment)
    dev = resolve_device(device)
    t0 = time.perf_counter()
    results = train(list(stack.configs), device=dev, progress=False)
    wall = time.perf_counter() - t0
    return _rows(results, stack.keys, exp, stack.preset, provenance(stack.preset, dev), wall)


class Executor(Protocol):
    """Where a sweep's stacks train. :func:`run_sweep` writes the rows it yields."""

    def describe(self) -> str:
        """Where the runs train, for the log (e.g. ``cpu``, ``a Dask cluster at tcp://...``)."""
        ...

    def map_stacks(self, stacks: Sequence[Stack]) -> Iterator[tuple[Stack, list[dict] | BaseException]]:
        """Train ``stacks``; yield each with its rows (or the error that stopped it) as it finishes."""
        ...


class LocalExecutor:
    """Train the stacks one after the other in this process, on ``device``."""

    def __init__(self, device: str | torch.device = "auto") -> None:
        self.device = resolve_device(device)

    def describe(self) -> str:
        return str(self.device)

    def map_stacks(self, stacks: Sequence[Stack]) -> Iterator[tuple[Stack, list[dict] | BaseException]]:
        for stack in stacks:
            try:
                rows = train_stack(stack, self.device)
            except Exception as e:  # reported with the stack's configs; the sweep goes on
                yield stack, e
            else:
                yield stack, rows


@dataclass(frozen=True)
class Failure:
    """A run that could not be trained, and why."""

    config: RunConfig
    run_key: str
    error: str


class SweepError(RuntimeError):
    """Some runs failed; every other finished run is in the table. ``failures`` lists them."""

    def __init__(self, name: str, preset: str, failures: Sequence[Failure]) -> None:
        self.failures = list(failures)
        lines = [f"{name}/{preset}: {len(self.failures)} run(s) failed (the others are written; "
                 "rerunning the sweep retries only what is missing):"]
        by_error: dict[str, list[Failure]] = {}
        for f in self.failures:
            by_error.setdefault(f.error, []).append(f)
        for err, fs in by_error.items():
            lines.append(f"  {err}")
            lines += [f"    run_key {f.run_key}: {f.config!r}" for f in fs]
        super().__init__("\n".join(lines))


def _error_text(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}".strip()
    return text if len(text) <= 500 else text[:497] + "..."


def run_sweep(
    name: str,
    preset: str,
    device: str | torch.device = "auto",
    shard: tuple[int, int] = (0, 1),
    root: Path | None = None,
    progress: bool = True,
    max_stack: int | None = None,
    max_rounds: int = 32,
    log: Callable[[str], None] = print,
    executor: Executor | None = None,
) -> pd.DataFrame:
    """Train every pending run of an experiment's preset; rows go to data/ as stacks finish.

    ``executor`` trains the stacks (default: a :class:`LocalExecutor` on
    ``device``; ``device`` is not used otherwise). Refinement rounds are
    planned here, each from the table once the previous round has finished.
    A run that fails is not tried again in later rounds; once nothing else is
    left, :class:`SweepError` lists the failures (the table holds the rest).
    """
    exp = get_experiment(name)
    exp.grid(preset)
    i, n = shard
    if not (isinstance(n, int) and n >= 1 and isinstance(i, int) and 0 <= i < n):
        raise ValueError(f"shard must be i/n with 0 <= i < n, got {i}/{n}")
    ex = executor if executor is not None else LocalExecutor(device)
    out = table_path(exp, shard, root)
    schema = _schema_for(name)
    failed: dict[str, Failure] = {}
    for rnd in range(max_rounds):
        done = load_table(out, schema) if out.is_file() else None
        done_p = None if done is None else done[done["preset"] == preset]
        skip = set(failed) | (set() if done is None else set(done["run_key"]))
        todo = [c for c in planned_runs(exp, preset, done_p, shard) if run_key(c, preset) not in skip]
        if not todo:
            n_done = 0 if done_p is None else len(done_p)
            log(f"{name}/{preset}: {'complete' if not failed else f'{len(failed)} failed'} ({n_done} runs in {out.name})")
            break
        log(f"{name}/{preset} round {rnd}: {len(todo)} runs to train on {ex.describe()}")
        for f in _train_and_write(exp, preset, todo, ex, out, schema, progress, max_stack):
            failed[f.run_key] = f
    if failed:
        raise SweepError(name, preset, list(failed.values()))
    return load_table(out, schema) if out.is_file() else pd.DataFrame()


def _train_and_write(exp, preset, todo, executor, out, schema, progress, max_stack) -> list[Failure]:
    """Hand one round's stacks to the executor; write each stack's rows as it comes back."""
    stacks = [Stack(exp.name, preset, tuple(todo[j] for j in g)) for g in stack_groups(todo, max_stack)]
    failures: list[Failure] = []
    bar = tqdm(total=len(todo), desc=f"{exp.name}/{preset}", unit="run", disable=not progress)
    finished = executor.map_stacks(stacks)
    try:
        for stack, res in finished:
            if isinstance(res, BaseException):
                err = _error_text(res)
                failures += [Failure(c, k, err) for c, k in zip(stack.configs, stack.keys)]
                bar.set_postfix(failed=len(failures))
            else:
                write_rows(out, schema, res)
            bar.update(len(stack.configs))
    finally:
        close = getattr(finished, "close", None)
        if close is not None:
            close()  # an executor stops (or cancels) what it still had under way
        bar.close()
    return failures


def parse_shard(text: str) -> tuple[int, int]:
    try:
        i, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise ValueError(f"shard must look like i/n (e.g. 0/4), got {text!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise ValueError(f"shard must be i/n with 0 <= i < n, got {text!r}")
    return i, n


def main(argv: Sequence[str]) -> int:
    """``python -m rgr sweep <experiment> --preset <p> [--device] [--shard i/n] [--executor dask ...]``."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m rgr sweep", description="Run an experiment's grid, resumably, into data/.")
    ap.add_argument("experiment", nargs="?", help="experiment name (see --list)")
    ap.add_argument("--preset", default="book", choices=("smoke", "book", "paper"))
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda[:i] (with --executor dask: resolved on each worker)")
    ap.add_argument("--shard", default="0/1", help="i/n: run the i-th of n disjoint parts (files merge with --merge)")
    ap.add_argument("--max-stack", type=int, default=None, help="most runs per tensor program")
    ap.add_argument("--list", action="store_true", help="list the experiments and their presets")
    ap.add_argument("--merge", action="store_true", help="fold shard files into data/<experiment>.csv")
    ap.add_argument("--dry-run", action="store_true", help="print the first round's runs and exit")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads of this process (default 1: the stacked tiny matmuls gain nothing from more; "
                         "use --executor dask --workers N to use N cores)")
    ap.add_argument("--data", default=None, help="folder of the tables (default: the repository's data/)")
    dk = ap.add_argument_group("Dask (--executor dask)")
    dk.add_argument("--executor", default="local", choices=("local", "dask"),
                    help="local: train in this process (default); dask: send the stacks to a Dask cluster")
    dk.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="connect to this scheduler (e.g. tcp://host:8786); without it a LocalCluster starts here")
    dk.add_argument("--workers", type=int, default=None, help="worker processes of the LocalCluster (default: one per core)")
    dk.add_argument("--gpu-per-stack", action=argparse.BooleanOptionalAction, default=None,
                    help="give each stack one GPU (Dask resource GPU=1); default: when the cluster's workers declare GPU")
    dk.add_argument("--retries", type=int, default=2, help="times a stack that raised on a worker is tried again (default 2)")
    a = ap.parse_args(list(argv))
    root = Path(a.data) if a.data else None
    if a.threads < 1:
        print(f"rgr sweep: --threads must be >= 1, got {a.threads}")
        return 2
    torch.set_num_threads(a.threads)
    if a.list or not a.experiment:
        for e in EXPERIMENTS.values():
            sizes = ", ".join(f"{p}: {len(planned_runs(e, p))}" for p in ("smoke", "book", "paper"))
            print(f"{e.name:<9} {e.spec:<7} {e.description}  [first-round runs: {sizes}]")
        print(f"{'gpt2':<9} {'E7':<7} one pre-LN Transformer block on frozen GPT-2 embeddings (rgr.gpt2.experiment)")
        return 0
    try:
        if a.merge:
            print(f"{a.experiment}: {merge_shards(a.experiment, root)} rows in {table_path(a.experiment, root=root)}")
            return 0
        if a.dry_run:
            runs = planned_runs(get_experiment(a.experiment), a.preset, None, parse_shard(a.shard))
            print(f"{len(runs)} runs in the first round; step cutoffs {sorted({r.max_steps for r in runs})}")
            return 0
        if a.experiment == "gpt2":  # E7 trains its own model family, through the same store
            if a.executor != "local" or a.shard != "0/1":
                raise ValueError("the gpt2 experiment runs with the local executor and no shards")
            from ..gpt2.experiment import run_gpt2_sweep

            run_gpt2_sweep(a.preset, resolve_device(a.device), root, not a.no_progress)
            return 0
        args = (a.experiment, a.preset, a.device, parse_shard(a.shard), root, not a.no_progress, a.max_stack)
        if a.executor == "local":
            if a.scheduler is not None or a.workers is not None or a.gpu_per_stack is not None:
                raise ValueError("--scheduler, --workers and --gpu-per-stack need --executor dask")
            run_sweep(*args)
        else:
            get_experiment(a.experiment).grid(a.preset)  # fail before starting a cluster
            from .cluster import dask_executor

            with dask_executor(a.scheduler, a.workers, a.device, a.gpu_per_stack, a.retries) as ex:
                run_sweep(*args, executor=ex)
    except (ValueError, TableError) as e:
        print(f"rgr sweep: {e}")
        return 2
    except SweepError as e:
        print(f"rgr sweep: {e}")
        return 1
    return 0
