"""``python -m rgr sweep``: an experiment's grid, resumably, into data/ (and ``--list``, ``--dry-run``, ``--merge``)."""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Sequence

import torch

from .common import Parser, UsageError, at_least, fail, writable_dir
from .common import device as device_of


def _sweep_parser() -> argparse.ArgumentParser:
    ap = Parser(prog="rgr sweep", description="Run an experiment's grid, resumably, into data/.")
    ap.add_argument("experiment", nargs="?", help="experiment name (see --list)")
    ap.add_argument("--preset", default="book",
                    help="smoke | book | paper (constructions: smoke | book); default: book")
    ap.add_argument("--device", default="auto",
                    help="auto (default) | cpu | cuda[:i] (with --executor dask: resolved on each worker)")
    ap.add_argument("--shard", default="0/1",
                    help="i/n: run the i-th of n disjoint parts (files merge with --merge); default: 0/1")
    ap.add_argument("--cells", default=None, metavar="MxD[,MxD...]",
                    help="train only these (m, d_model) cells of the preset (e.g. 4096x512): the same runs and "
                         "rounds as the whole sweep's there, so several machines can share one sweep by cells")
    ap.add_argument("--max-stack", type=int, default=None, help="most runs per tensor program")
    ap.add_argument("--list", action="store_true", help="list the experiments and their presets")
    ap.add_argument("--merge", action="store_true", help="fold shard files into data/<experiment>.csv")
    ap.add_argument("--dry-run", action="store_true", help="print the first round's runs and exit")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads of this process (default 1: the stacked tiny matmuls gain nothing from "
                         "more; use --executor dask --workers N to use N cores)")
    ap.add_argument("--data", default=None, help="folder of the tables (default: the repository's data/)")
    ap.add_argument("--deadline-min", type=float, default=None, metavar="MINUTES",
                    help="stop starting stacks after this many minutes (E7 also stops a stack that would end "
                         "later); finished stacks are kept, rerun to train the rest (local executor only)")
    dk = ap.add_argument_group("Dask (--executor dask)")
    dk.add_argument("--executor", default="local", choices=("local", "dask"),
                    help="local: train in this process (default); dask: send the stacks to a Dask cluster")
    dk.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="connect to this scheduler (e.g. tcp://host:8786); without it a LocalCluster starts here")
    dk.add_argument("--workers", type=int, default=None,
                    help="worker processes of the LocalCluster (default: one per core)")
    dk.add_argument("--gpu-per-stack", action=argparse.BooleanOptionalAction, default=None,
                    help="give each stack one GPU (Dask resource GPU=1); default: when the cluster's workers "
                         "declare GPU")
    dk.add_argument("--retries", type=int, default=2,
                    help="times a stack that raised on a worker is tried again (default 2)")
    return ap


def _list_sweeps() -> int:
    from ..catalog import NAMES, get

    for s in map(get, NAMES):
        sizes = ", ".join(f"{p}: {len(s.planned_runs(p, None, (0, 1)))}" for p in s.presets)
        print(f"{s.name:<13} {s.spec:<14} {s.description}  [first-round runs: {sizes}]")
    return 0


def sweep(argv: Sequence[str]) -> int:
    from ..experiments.planner import parse_cells, parse_shard
    from ..experiments.runner import SweepError, cell_filter, check_shard, merge_shards, run_sweep
    from ..paths import data_dir
    from ..store import TableBusy, TableError, check_preset, table_path
    from ..trainers import trainer

    a = _sweep_parser().parse_args(list(argv))
    prog = "rgr sweep"
    try:
        at_least(a.threads, 1, "--threads")
        at_least(a.max_stack, 1, "--max-stack")
        at_least(a.workers, 1, "--workers")
        at_least(a.retries, 0, "--retries")
        if a.deadline_min is not None and not (a.deadline_min > 0 and math.isfinite(a.deadline_min)):
            raise UsageError(f"--deadline-min must be a positive number of minutes, got {a.deadline_min}")
        if a.deadline_min is not None and a.executor != "local":
            raise UsageError("--deadline-min needs --executor local")
        if a.list or not a.experiment:
            return _list_sweeps()
        try:
            sweep = trainer(a.experiment)
        except ValueError as e:
            raise UsageError(str(e)) from None
        root = writable_dir(Path(a.data) if a.data else data_dir(), "--data")
        if a.merge:
            print(f"{sweep.name}: {merge_shards(sweep.schema, root)} rows in {table_path(sweep.name, root=root)}")
            for line in _missing_after_merge(sweep, root):
                print(line)
            return 0
        try:
            check_preset(sweep, a.preset)  # the one check: the tables' planners trust it (and run_sweep's own)
            shard = parse_shard(a.shard)
            check_shard(sweep, shard)
            cells = None if a.cells is None else parse_cells(a.cells)
            if cells is not None:
                cell_filter(sweep, a.preset, cells)
        except ValueError as e:
            raise UsageError(f"--{e}") from None
        if a.executor == "local":
            if a.scheduler is not None or a.workers is not None or a.gpu_per_stack is not None:
                raise UsageError("--scheduler, --workers and --gpu-per-stack need --executor dask")
            device = device_of(a.device)
        else:
            from ..experiments.cluster import check_device

            try:
                device = check_device(a.device)
            except ValueError as e:
                raise UsageError(f"--device: {e}") from None
        report = getattr(sweep, "dry_run_report", None)
        done = (_done_rows(sweep, a.preset, table_path(sweep.name, shard, root), shard)
                if report is not None else None)
        if a.dry_run:
            if report is None:
                runs = sweep.planned_runs(a.preset, None, shard)
                print(f"{sweep.name}/{a.preset}: {len(runs)} runs in the first round (no run-time projection "
                      "for this experiment)")
            else:
                print(f"{prog}: projecting the wall time (from the table's finished stacks, or by timing a few "
                      "stacks here: a minute or more on a busy machine) ...", file=sys.stderr, flush=True)
                print("\n".join(report(a.preset, _projection_device(device), a.workers or 1, shard, done=done,
                                        max_stack=a.max_stack, root=root)))
            return 0
        if a.preset == "paper" and report is not None and _projection_device(device) == "cpu":
            print("\n".join(["the paper preset on a CPU; projection (interrupt and rerun at any time: finished "
                             "runs are kept):", *report(a.preset, "cpu", a.workers or 1, shard, done=done,
                                                        max_stack=a.max_stack, root=root)]),
                  flush=True)
    except (UsageError, TableError) as e:
        return fail(prog, str(e))
    except TableBusy as e:
        return fail(prog, str(e), 1)
    torch.set_num_threads(a.threads)
    out = table_path(sweep.name, shard, root)
    try:
        args = dict(preset=a.preset, device=device, shard=shard, root=root, progress=not a.no_progress,
                    max_stack=a.max_stack, cells=cells)
        if a.deadline_min is not None:
            args["deadline"] = time.monotonic() + 60 * a.deadline_min
        if a.executor == "local":
            run_sweep(sweep, **args)
        else:
            from ..experiments.cluster import dask_executor

            with dask_executor(a.scheduler, a.workers, device, a.gpu_per_stack, a.retries) as ex:
                run_sweep(sweep, **args, executor=ex)
    except KeyboardInterrupt:
        return interrupted(prog, sweep, a.preset, out, " ".join(["python -m rgr sweep", *argv]))
    except TableBusy as e:
        return fail(prog, str(e), 1)
    except (ValueError, TableError) as e:
        return fail(prog, str(e))
    except SweepError as e:
        return fail(prog, str(e), 1)
    return 0


def _done_rows(sweep, preset: str, path: Path, shard: tuple[int, int]):
    """The preset's rows already in the sweep's table (None when there is no table yet), for the projection: those
    a sweep skips (:func:`rgr.experiments.runner.finished_rows`), but a damaged table raises here."""
    from ..experiments.runner import finished_rows

    t = finished_rows(path, sweep.schema, shard, True, strict=True)
    return None if t is None else t[t["preset"] == preset]


def _projection_device(device) -> str:
    """The device a projection calibrates on: this machine's ("auto" resolved here)."""
    from ..experiments.engine.config import resolve_device

    return resolve_device(device).type


def interrupted(prog: str, sweep, preset: str, out: Path, command: str) -> int:
    from ..store import load_table

    try:
        df = load_table(out, sweep.schema) if out.is_file() else None
        n = 0 if df is None else int((df["preset"] == preset).sum())
        saved = f"{n} finished runs of {sweep.name}/{preset} are saved in {out}"
    except Exception:  # the interrupt itself must not end in a traceback
        saved = f"finished runs are in {out}"
    print(f"{prog}: interrupted; {saved}; resume with: {command}", file=sys.stderr)
    return 130


def _missing_after_merge(sweep, root) -> list[str]:
    """Per preset in the merged table: how many of the runs its planner asks for are there (shards may be missing)."""
    from ..store import load_table, table_path

    table = load_table(table_path(sweep.name, root=root), sweep.schema)
    lines = []
    for preset in sorted(set(table["preset"]) & set(sweep.presets)):
        done = table[table["preset"] == preset]
        keys = [sweep.run_key(c, preset) for c in sweep.planned_runs(preset, done, (0, 1))]
        have = sum(k in set(done["run_key"]) for k in keys)
        state = "complete" if have == len(keys) else (f"{len(keys) - have} missing: run the shards that are not "
                                                      "merged yet, or the whole sweep, to train them")
        lines.append(f"  preset {preset}: {have} of {len(keys)} planned runs present ({state})")
    return lines
