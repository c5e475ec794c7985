"""The one resumable runner that fills data/: stacks, executors, failures (every sweep, E1-E7 and constructions).

:func:`run_sweep` takes any :class:`Sweepable`: a table (:class:`rgr.store.Table` — a protocol
experiment, :class:`rgr.experiments.planner.Experiment`, E7, :data:`rgr.gpt2.experiment.GPT2`, or the constructions,
:data:`rgr.experiments.construction_table.CONSTRUCTIONS`: something that plans its runs, keys them and has a schema)
with how it trains (groups runs into stacks, trains a stack into table rows; :func:`rgr.trainers.trainer`).
The runner trains pending runs stack by stack, writes each finished stack's rows atomically to data/<name>.csv (or a
shard file) and skips every run whose key is already in the table; refinement
rounds are planned from the table, so a rerun continues where an interrupted
sweep stopped. The table is held (:func:`rgr.store.write.sweep_lock`) for the whole
sweep: a second sweep of the same table refuses and names the first.

Where the stacks train is the runner's executor: :class:`_LocalExecutor`
(the default: one after the other, in this process) or
:class:`rgr.experiments.cluster.DaskExecutor` (a Dask cluster). Either way a
:class:`Job`'s rows come back to this process, which writes them as each job
finishes; a job that fails is reported with its configs (:class:`SweepError`)
after the others have been written.
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Hashable, Iterator, Sequence

import pandas as pd
import torch
from tqdm import tqdm

from ..store import (
    Schema,
    Table,
    TableError,
    check_preset,
    load_results,
    load_table,
    provenance,
    shard_paths,
    table_path,
)
from ..store.write import drop_table, sweep_lock, write_rows
from .engine.config import resolve_device


@dataclass(frozen=True)
class Sweepable:
    """What the runner trains: a :class:`rgr.store.Table` (what the table is: :mod:`rgr.catalog` holds
    them) and how its runs train, which a subclass adds (:func:`rgr.trainers.trainer` gives each table's).

    A subclass says how one stack's runs train (``train_rows``: one row of results per config) and, when runs
    share a stack, which (``stack_key``, or ``stack_groups`` itself); this base times the stack and adds what every
    row carries (run_key, stack_size, wall_time_s, provenance). Optionally ``steps_bound`` (model-steps of some
    configs: the progress bar's total), ``reusable_rows`` (runs copied from other tables), ``dry_run_report``
    (``sweep --dry-run``) and ``honours_deadline``.
    """

    table: Table

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def presets(self) -> Any:
        return self.table.presets

    @property
    def shardable(self) -> bool:
        return self.table.shardable

    @property
    def schema(self) -> Schema:
        return self.table.schema

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None, shard: tuple[int, int] = (0, 1)) -> list:
        return self.table.planned_runs(preset, done, shard)

    def run_key(self, cfg: Any, preset: str) -> str:
        return self.table.run_key(cfg, preset)

    def stack_key(self, cfg: Any) -> Hashable | None:
        """Configs with equal keys train as one stack; None (the default): each run alone."""
        return None

    def stack_groups(self, configs: Sequence, max_stack: int | None) -> list[list[int]]:
        """Which configs train together: equal :meth:`stack_key` (first-seen order), at most ``max_stack`` a stack."""
        groups: dict[tuple, list[int]] = {}
        for i, c in enumerate(configs):
            key = self.stack_key(c)
            groups.setdefault(("alone", i) if key is None else ("key", key), []).append(i)
        size = max_stack or max(1, len(configs))
        return [g[j : j + size] for g in groups.values() for j in range(0, len(g), size)]

    def train_stack(self, configs: Sequence, preset: str, device: torch.device, **options: Any) -> list[dict]:
        """Train ``configs`` as one stack here; their table rows (run_key, stack size, wall time and provenance
        added to what :meth:`train_rows` gives). ``options``: a subclass's own (``on_steps``, ``deadline``)."""
        t0 = time.perf_counter()
        rows = self.train_rows(list(configs), preset, device, **options)
        wall = time.perf_counter() - t0
        prov = provenance(preset, device)
        for cfg, row in zip(configs, rows, strict=True):
            row.update(run_key=self.run_key(cfg, preset), stack_size=len(rows), wall_time_s=wall / len(rows), **prov)
        return rows

    def train_rows(self, configs: list, preset: str, device: torch.device, **options: Any) -> list[dict]:
        """One row of results per config, trained here as one stack (the columns of the table's own)."""
        raise NotImplementedError(f"{type(self).__name__} does not say how {self.name}'s runs train")


def check_shard(sweep: Sweepable, shard: tuple[int, int]) -> None:
    i, n = shard
    if not (isinstance(n, int) and n >= 1 and isinstance(i, int) and 0 <= i < n):
        raise ValueError(f"shard must be i/n with 0 <= i < n, got {i}/{n}")
    if n > 1 and not sweep.shardable:
        raise ValueError(f"shard: the {sweep.name} sweep is not split into shards, got {i}/{n}")


@dataclass(frozen=True)
class Job:
    """The unit of work an executor trains: configs of one sweep's preset that train as one stack."""

    sweep: Sweepable
    preset: str
    configs: tuple

    @property
    def keys(self) -> list[str]:
        """The run_key of each config (the table's row keys)."""
        return [self.sweep.run_key(c, self.preset) for c in self.configs]

    @property
    def label(self) -> str:
        return f"{self.sweep.name}-{self.preset}-{len(self.configs)}runs"


class DeadlineExceeded(RuntimeError):
    """A sweep's deadline (``rgr sweep --deadline-min``) came, or a stack projected itself past it: the sweep stops
    there, keeping every finished stack's rows; rerunning it trains what is left (a short GPU call's unit)."""


def run_job(job: Job, device: str | torch.device = "auto", on_steps: Callable[[int], None] | None = None,
            deadline: float | None = None) -> list[dict]:
    """Train one job where this is called (this process, or a Dask worker) and return its table rows.

    The device is resolved here (``"auto"``: this machine's GPU when it has one); the rows' provenance names it.
    ``on_steps`` (only where the experiment reports steps: its ``steps_bound``, E1-E6) is called with the model-steps
    just taken, so a progress bar moves while a stack trains. ``deadline`` (``time.monotonic()`` seconds) goes to
    an experiment that projects its stacks (``honours_deadline``): one that would end past it stops early with
    :class:`DeadlineExceeded`.
    """
    kw: dict[str, Any] = {}
    if on_steps is not None and getattr(job.sweep, "steps_bound", None) is not None:
        kw["on_steps"] = on_steps
    if deadline is not None and getattr(job.sweep, "honours_deadline", False):
        kw["deadline"] = deadline
    return job.sweep.train_stack(job.configs, job.preset, resolve_device(device), **kw)


class _LocalExecutor:
    """Train the jobs one after the other in this process, on ``device``."""

    def __init__(self, device: str | torch.device = "auto") -> None:
        self.device = resolve_device(device)

    def describe(self) -> str:
        return str(self.device)

    def map_jobs(self, jobs: Sequence[Job], on_steps: Callable[[int], None] | None = None,
                 deadline: float | None = None) -> Iterator[tuple[Job, list[dict] | BaseException]]:
        for job in jobs:
            if deadline is not None and time.monotonic() >= deadline:
                yield job, DeadlineExceeded("the deadline has passed: not started")
                return
            try:
                rows = run_job(job, self.device, on_steps, deadline)
            except Exception as e:  # reported with the job's configs; the sweep goes on
                yield job, e
            else:
                yield job, rows


@dataclass(frozen=True)
class _Failure:
    """A run that could not be trained, and why."""

    config: Any
    run_key: str
    error: str


class SweepError(RuntimeError):
    """Some runs failed; every other finished run is in the table. ``failures`` lists them."""

    def __init__(self, name: str, preset: str, failures: Sequence[_Failure]) -> None:
        self.failures = list(failures)
        lines = [f"{name}/{preset}: {len(self.failures)} run(s) failed (the others are written; "
                 "rerunning the sweep retries only what is missing):"]
        by_error: dict[str, list[_Failure]] = {}
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
    sweep: Sweepable,
    preset: str,
    device: str | torch.device = "auto",
    shard: tuple[int, int] = (0, 1),
    root: Path | None = None,
    progress: bool = True,
    max_stack: int | None = None,
    max_rounds: int = 32,
    log: Callable[[str], None] = print,
    executor: Any = None,
    path: Path | None = None,
    cells: Collection[tuple[int, int]] | None = None,
    deadline: float | None = None,
) -> pd.DataFrame:
    """Train every pending run of a sweep's preset; rows go to data/ as jobs finish.

    ``executor`` trains the jobs: ``describe()`` (where, for the log) and ``map_jobs(jobs)``, which yields each job
    with its rows or the error that stopped it as it finishes (default: a :class:`_LocalExecutor` on ``device``;
    ``device`` is not used otherwise). Refinement rounds are
    planned here, each from the table once the previous round has finished.
    A run that fails is not tried again in later rounds; once nothing else is
    left, :class:`SweepError` lists the failures (the table holds the rest).
    ``path`` overrides the table's file (default: data/<name>.csv, or the shard's file under ``root``).
    ``cells``, when given, limits the sweep to the runs of those (m, d_model) cells (the same runs, keys and
    rounds as the whole sweep's there: a GPU can take the widest cells while a CPU runs the rest elsewhere);
    a ValueError names a cell the preset does not have.
    ``deadline`` (``time.monotonic()`` seconds; the local executor only): no stack starts after it, and an
    experiment that projects its stacks stops one that would end past it; the sweep then returns what is in the
    table, and a rerun trains the rest (:class:`DeadlineExceeded` is logged, not raised).
    Raises :class:`rgr.store.TableBusy` when another sweep holds the table.
    """
    if deadline is not None and executor is not None and not isinstance(executor, _LocalExecutor):
        raise ValueError("deadline: only the local executor stops at a deadline")
    check_preset(sweep, preset)
    check_shard(sweep, shard)
    ex = executor if executor is not None else _LocalExecutor(device)
    out = Path(path) if path is not None else table_path(sweep.name, shard, root)
    if out.exists() and not out.is_file():
        raise TableError(f"{out}: is not a file (a folder?); move it away, then rerun")
    schema = sweep.schema
    failed: dict[str, _Failure] = {}
    wanted = cell_filter(sweep, preset, cells)
    with sweep_lock(out, f"{sweep.name}/{preset}"):
        for rnd in range(max_rounds):
            done = finished_rows(out, schema, shard, path is None)
            done_p = None if done is None else done[done["preset"] == preset]
            skip = set(failed) | (set() if done is None else set(done["run_key"]))
            todo = [c for c in sweep.planned_runs(preset, done_p, shard)
                    if sweep.run_key(c, preset) not in skip and wanted(c)]
            if not todo:
                n_done = 0 if done_p is None else len(done_p)
                state = "complete" if not failed else f"{len(failed)} failed"
                state += "" if cells is None else f" in cells {', '.join(f'{m}x{d}' for m, d in cells)}"
                own = n_done if shard[1] == 1 or path is not None else (
                    int((load_table(out, schema)["preset"] == preset).sum()) if out.is_file() else 0)
                where = f"{n_done} runs in {out.name}" if own == n_done else (
                    f"{n_done} runs done, {own} of them in {out.name}")
                log(f"{sweep.name}/{preset}: {state} ({where})")
                break
            todo = _reuse(sweep, preset, todo, out, schema, log)
            if not todo:  # every pending run was copied: plan the next round from the table
                continue
            log(f"{sweep.name}/{preset} round {rnd}: {len(todo)} runs to train on {ex.describe()}")
            try:
                for f in _train_and_write(sweep, preset, todo, ex, out, progress, max_stack, deadline):
                    failed[f.run_key] = f
            except DeadlineExceeded as e:
                log(f"{sweep.name}/{preset}: stopped at the deadline ({e}); finished stacks are in {out.name}, "
                    "rerun the same command to train the rest")
                break
    if failed:
        raise SweepError(sweep.name, preset, list(failed.values()))
    return load_table(out, schema) if out.is_file() else pd.DataFrame()


def cell_filter(sweep: Sweepable, preset: str, cells: Collection[tuple[int, int]] | None) -> Callable[[Any], bool]:
    """A predicate on configs: in one of ``cells`` (every config when None), each cell checked against the preset."""
    if cells is None:
        return lambda c: True
    wanted = {(int(m), int(d)) for m, d in cells}
    have = {(getattr(c, "m", None), getattr(c, "d_model", None)) for c in sweep.planned_runs(preset, None, (0, 1))}
    missing = sorted(wanted - have)
    if missing:
        raise ValueError(f"cells: {sweep.name}/{preset} has no cell {', '.join(f'{m}x{d}' for m, d in missing)}; "
                         f"its cells: {', '.join(f'{m}x{d}' for m, d in sorted(c for c in have if None not in c))}")
    return lambda c: (getattr(c, "m", None), getattr(c, "d_model", None)) in wanted


def finished_rows(out: Path, schema: Schema, shard: tuple[int, int], default_path: bool,
                  strict: bool = False) -> pd.DataFrame | None:
    """The rows a sweep can skip: its own file's; for a shard, also the main table's and the other shards'
    (a shard rerun after ``--merge`` finds its runs in the main table, not in its own file). ``strict`` (the
    command line's projection): only a missing table is None, a damaged one raises."""
    if shard[1] > 1 and default_path:
        try:
            return load_results(schema, root=out.parent)
        except TableError as e:
            if strict and "no such table" not in str(e):
                raise
            return None
    return load_table(out, schema) if out.is_file() else None


def _reuse(sweep: Sweepable, preset: str, todo: list, out: Path, schema: Schema, log: Callable[[str], None]) -> list:
    """Copy the rows of the runs of ``todo`` that trained elsewhere (a sweep's optional ``reusable_rows``); the rest."""
    find = getattr(sweep, "reusable_rows", None)
    if find is None or not todo:
        return todo
    rows = find(todo, preset, out.parent)
    if not rows:
        return todo
    write_rows(out, schema, rows)
    origins = sorted({r["reused_from"].split(":")[0] for r in rows})
    log(f"{sweep.name}/{preset}: {len(rows)} runs reused from {', '.join(origins)} (identical configs), not retrained")
    copied = {r["run_key"] for r in rows}
    return [c for c in todo if sweep.run_key(c, preset) not in copied]


def _train_and_write(sweep, preset, todo, executor, out, progress, max_stack, deadline=None) -> list[_Failure]:
    """Hand one round's jobs to the executor; write each job's rows as it comes back. A job stopped by the
    deadline ends the round: :class:`DeadlineExceeded` is raised after the rows before it are written."""
    jobs = [Job(sweep, preset, tuple(todo[j] for j in g)) for g in sweep.stack_groups(todo, max_stack)]
    failures: list[_Failure] = []
    bound = getattr(sweep, "steps_bound", None)  # model-steps of some configs, where the experiment has it (E1-E6)
    size = {id(job): bound(job.configs) if bound else len(job.configs) for job in jobs}
    bar = tqdm(total=sum(size.values()), desc=f"{sweep.name}/{preset}", unit="model-step" if bound else "run",
               unit_scale=bool(bound), disable=not progress)
    moved = [0]  # model-steps the bar has moved for the job under way (a local executor reports them as it trains)

    def on_steps(n: int) -> None:
        moved[0] += n
        bar.update(n)

    local = isinstance(executor, _LocalExecutor)
    if local:
        finished = executor.map_jobs(jobs, on_steps if bound is not None else None, deadline)
    else:
        finished = executor.map_jobs(jobs)
    try:
        for job, res in finished:
            if isinstance(res, DeadlineExceeded):
                raise res
            if isinstance(res, BaseException):
                err = _error_text(res)
                failures += [_Failure(c, k, err) for c, k in zip(job.configs, job.keys)]
                bar.set_postfix(failed=len(failures))
            else:
                write_rows(out, sweep.schema, res)
            bar.update(max(0, size[id(job)] - moved[0]))  # runs that stopped early: the rest of their bound
            moved[0] = 0
    finally:
        close = getattr(finished, "close", None)
        if close is not None:
            close()  # an executor stops (or cancels) what it still had under way
        bar.close()
    return failures


def merge_shards(schema: Schema, root: Path | None = None) -> int:
    """Fold shard files into the main table (then delete them and their seals); returns the row count.

    Refuses (:class:`rgr.store.TableBusy`) while a sweep still writes one of the shards.
    """
    shards = shard_paths(schema.name, root)
    with ExitStack() as held:
        for p in shards:
            held.enter_context(sweep_lock(p, "merging shards"))
        df = load_results(schema, root=root)
        n = write_rows(table_path(schema.name, root=root), schema, df.to_dict("records"))
        for p in shards:
            drop_table(p)
    return n
