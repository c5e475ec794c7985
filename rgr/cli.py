"""Every command's arguments and errors: ``python -m rgr <command>`` (the top of the package).

One convention for all of them: bad input -> one line on stderr naming the
parameter, exit 2, checked before any work and before anything is written
(output folders must be writable before training starts); ``--help`` only
prints; a sweep interrupted with Ctrl-C says what was saved and how to resume
(exit 130); a sweep whose runs failed lists them on stderr (exit 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, NoReturn, Sequence

import torch

__all__ = ["COMMANDS", "UsageError", "main"]


class UsageError(ValueError):
    """Bad input to a command; the message names the parameter."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + error
        self.exit(2, f"{self.prog}: {message}\n")


def _fail(prog: str, message: str, code: int = 2) -> int:
    print(f"{prog}: {' '.join(str(message).split())}" if code == 2 else f"{prog}: {message}", file=sys.stderr)
    return code


def _writable_dir(path: Path, param: str) -> Path:
    """``path`` (a folder, possibly not there yet) can be written: checked without writing anything."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{param}: {path} is a file, not a folder")
    probe = path
    while not probe.exists():
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise OSError(f"{probe} is not a folder")
        with tempfile.TemporaryFile(dir=probe):  # gone when closed; os.access would say yes to root everywhere
            pass
    except OSError as e:
        raise UsageError(f"{param}: cannot write to {path} ({e})") from None
    return path


def _writable_file(path: Path, param: str) -> Path:
    if path.is_dir() or str(path).endswith(os.sep):
        raise UsageError(f"{param}: {path} is a folder; give a file path")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{param}: cannot write {path}")
    _writable_dir(path.parent, param)
    return path


def _at_least(value: int | None, low: int, param: str) -> None:
    if value is not None and value < low:
        raise UsageError(f"{param} must be >= {low}, got {value}")


def _device(text: str, param: str = "--device") -> torch.device:
    from .experiments.train import resolve_device

    try:
        return resolve_device(text)
    except ValueError as e:
        raise UsageError(f"{param}: {e}") from None


# ---------------------------------------------------------------------------------------
# sweep


def _sweep_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="rgr sweep", description="Run an experiment's grid, resumably, into data/.")
    ap.add_argument("experiment", nargs="?", help="experiment name (see --list)")
    ap.add_argument("--preset", default="book", help="smoke | book | paper (constructions: smoke | book)")
    ap.add_argument("--device", default="auto", help="auto | cpu | cuda[:i] (with --executor dask: resolved on each worker)")
    ap.add_argument("--shard", default="0/1", help="i/n: run the i-th of n disjoint parts (files merge with --merge)")
    ap.add_argument("--max-stack", type=int, default=None, help="most runs per tensor program")
    ap.add_argument("--list", action="store_true", help="list the experiments and their presets")
    ap.add_argument("--merge", action="store_true", help="fold shard files into data/<experiment>.csv")
    ap.add_argument("--dry-run", action="store_true", help="print the first round's runs and exit")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="torch CPU threads of this process (default 1: the stacked tiny matmuls gain nothing from "
                         "more; use --executor dask --workers N to use N cores)")
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
    return ap


def _list_sweeps() -> int:
    from .catalog import SWEEPS

    for s in SWEEPS.values():
        sizes = ", ".join(f"{p}: {len(s.planned_runs(p, None, (0, 1)))}" for p in s.presets)
        print(f"{s.name:<13} {s.spec:<14} {s.description}  [first-round runs: {sizes}]")
    return 0


def _sweep(argv: Sequence[str]) -> int:
    from .catalog import get
    from .experiments.planner import parse_shard
    from .experiments.runner import SweepError, check_shard, run_sweep
    from .experiments.tables import merge_shards, table_path
    from .paths import data_dir
    from .store import TableBusy, TableError

    a = _sweep_parser().parse_args(list(argv))
    prog = "rgr sweep"
    try:
        _at_least(a.threads, 1, "--threads")
        _at_least(a.max_stack, 1, "--max-stack")
        _at_least(a.workers, 1, "--workers")
        _at_least(a.retries, 0, "--retries")
        if a.list or not a.experiment:
            return _list_sweeps()
        try:
            sweep = get(a.experiment)
        except ValueError as e:
            raise UsageError(str(e)) from None
        root = _writable_dir(Path(a.data) if a.data else data_dir(), "--data")
        if a.merge:
            print(f"{sweep.name}: {merge_shards(sweep.schema, root)} rows in {table_path(sweep.name, root=root)}")
            return 0
        if a.preset not in sweep.presets:
            raise UsageError(f"--preset must be one of {sorted(sweep.presets)} for {sweep.name}, got {a.preset!r}")
        try:
            shard = parse_shard(a.shard)
            check_shard(sweep, shard)
        except ValueError as e:
            raise UsageError(f"--{e}") from None
        if a.executor == "local":
            if a.scheduler is not None or a.workers is not None or a.gpu_per_stack is not None:
                raise UsageError("--scheduler, --workers and --gpu-per-stack need --executor dask")
            device = _device(a.device)
        else:
            from .experiments.cluster import check_device

            try:
                device = check_device(a.device)
            except ValueError as e:
                raise UsageError(f"--device: {e}") from None
        report = getattr(sweep, "dry_run_report", None)
        done = _done_rows(sweep, a.preset, table_path(sweep.name, shard, root)) if report is not None else None
        if a.dry_run:
            if report is None:
                runs = sweep.planned_runs(a.preset, None, shard)
                print(f"{sweep.name}/{a.preset}: {len(runs)} runs in the first round (no run-time projection "
                      "for this experiment)")
            else:
                print("\n".join(report(a.preset, _projection_device(device), a.workers or 1, shard, done=done)))
            return 0
        if a.preset == "paper" and report is not None and _projection_device(device) == "cpu":
            print("\n".join(["the paper preset on a CPU; projection (interrupt and rerun at any time: finished "
                             "runs are kept):", *report(a.preset, "cpu", a.workers or 1, shard, done=done)]), flush=True)
    except (UsageError, TableError) as e:
        return _fail(prog, str(e))
    except TableBusy as e:
        return _fail(prog, str(e), 1)
    torch.set_num_threads(a.threads)
    out = table_path(sweep.name, shard, root)
    try:
        args = dict(preset=a.preset, device=device, shard=shard, root=root, progress=not a.no_progress,
                    max_stack=a.max_stack)
        if a.executor == "local":
            run_sweep(sweep, **args)
        else:
            from .experiments.cluster import dask_executor

            with dask_executor(a.scheduler, a.workers, device, a.gpu_per_stack, a.retries) as ex:
                run_sweep(sweep, **args, executor=ex)
    except KeyboardInterrupt:
        return _interrupted(prog, sweep, a.preset, out, " ".join(["python -m rgr sweep", *argv]))
    except TableBusy as e:
        return _fail(prog, str(e), 1)
    except (ValueError, TableError) as e:
        return _fail(prog, str(e))
    except SweepError as e:
        return _fail(prog, str(e), 1)
    return 0


def _done_rows(sweep, preset: str, path: Path):
    """The preset's rows already in the sweep's table (None when there is no table yet), for the projection."""
    from .store import load_table

    if not path.is_file():
        return None
    t = load_table(path, sweep.schema)
    return t[t["preset"] == preset]


def _projection_device(device) -> str:
    """The device a projection calibrates on: this machine's ("auto" resolved here)."""
    from .experiments.stacking import resolve_device

    return resolve_device(device).type


def _interrupted(prog: str, sweep, preset: str, out: Path, command: str) -> int:
    from .store import load_table

    try:
        df = load_table(out, sweep.schema) if out.is_file() else None
        n = 0 if df is None else int((df["preset"] == preset).sum())
        saved = f"{n} finished runs of {sweep.name}/{preset} are saved in {out}"
    except Exception:  # the interrupt itself must not end in a traceback
        saved = f"finished runs are in {out}"
    print(f"{prog}: interrupted; {saved}; resume with: {command}", file=sys.stderr)
    return 130


# ---------------------------------------------------------------------------------------
# constructions


def _constructions(argv: Sequence[str]) -> int:
    from .experiments.construction_table import PRESETS, ConstructionSweep
    from .experiments.runner import run_sweep
    from .paths import data_dir
    from .store import TableBusy, TableError

    ap = _Parser(prog="rgr constructions", description="Smallest D_K of the explicit constructions -> CSV")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="book")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--out", type=Path, default=None, help="default: data/constructions.csv")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the checks use many small tensors)")
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(list(argv))
    try:
        _at_least(a.seed, 0, "--seed")
        _at_least(a.threads, 1, "--threads")
        out = _writable_file(a.out or data_dir() / "constructions.csv", "--out")
    except UsageError as e:
        return _fail(ap.prog, str(e))
    torch.set_num_threads(a.threads)
    sweep = ConstructionSweep(a.seed)
    try:
        df = run_sweep(sweep, a.preset, "cpu", path=out, progress=not a.no_progress)
    except KeyboardInterrupt:
        return _interrupted(ap.prog, sweep, a.preset, out, " ".join(["python -m rgr constructions", *argv]))
    except TableBusy as e:
        return _fail(ap.prog, str(e), 1)
    except TableError as e:
        return _fail(ap.prog, str(e))
    print(f"{int((df['preset'] == a.preset).sum())} rows of preset {a.preset} in {out}")
    return 0


# ---------------------------------------------------------------------------------------
# bench, gpt2 build, schema, repair


_BENCH_FLAGS = {"m": "--m", "d_model": "--d-model", "h": "--heads", "d_k": "--dk-total", "seed": "--seed",
                "check_every": "--check-every", "dtype": "--dtype", "model": "--model"}


def _bench(argv: Sequence[str]) -> int:
    from .experiments import bench
    from .experiments.train import RunConfig

    ap = bench._parser()
    ap.error = _Parser.error.__get__(ap)  # one-line errors here too
    a = ap.parse_args(list(argv))
    try:
        for flag in ("heads", "dk_total", "runs", "steps", "naive_runs", "naive_steps", "threads", "check_every"):
            _at_least(getattr(a, flag), 1, "--" + flag.replace("_", "-"))
        if a.dk_total % a.heads:
            raise UsageError(f"--dk-total must be a multiple of --heads ({a.heads}), got {a.dk_total}")
        try:
            RunConfig(m=a.m, d_model=a.d_model, h=a.heads, d_k=a.dk_total // a.heads, seed=a.seed, model=a.model,
                      check_every=a.check_every, dtype=a.dtype)
        except ValueError as e:
            field = str(e).split()[0]
            raise UsageError(f"{_BENCH_FLAGS.get(field, field)}: {e}") from None
        _device(a.device)
    except UsageError as e:
        return _fail("rgr bench", str(e))
    return bench.main(list(argv))


def _gpt2(argv: Sequence[str]) -> int:
    from .gpt2.items import build_items, save_items
    from .gpt2.table import N_TOKENS, default_path

    ap = _Parser(prog="rgr gpt2", description="Build data/gpt2_items.npz (protocol E7)")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=_Parser)
    b = sub.add_parser("build", help="count WikiText-103 tokens and save GPT-2's embeddings of the top m")
    b.add_argument("--m", type=int, default=6144)
    b.add_argument("--dir", default=None, help="local copy (else RGR_GPT2_DIR)")
    b.add_argument("--hub", action="store_true", help="download from the Hugging Face hub")
    b.add_argument("--text", default=None, help="text file to count (local copy only)")
    b.add_argument("--n-tokens", type=int, default=N_TOKENS)
    b.add_argument("--out", default=None, help="output .npz (default data/gpt2_items.npz)")
    b.add_argument("--dtype", default="float16", choices=["float16", "float32"])
    a = ap.parse_args(list(argv))
    try:
        _at_least(a.m, 1, "--m")
        _at_least(a.n_tokens, 1, "--n-tokens")
        local = a.dir or os.environ.get("RGR_GPT2_DIR")
        if not a.hub and not local:
            raise UsageError("--dir: no GPT-2 source; pass --dir (or set RGR_GPT2_DIR) to a local copy, or --hub")
        if local and not a.hub and not Path(local).is_dir():
            raise UsageError(f"--dir: {local} is not a folder")
        if a.text is not None and not Path(a.text).is_file():
            raise UsageError(f"--text: no such file {a.text}")
        _writable_file(Path(a.out) if a.out else default_path(), "--out")
    except UsageError as e:
        return _fail("rgr gpt2 build", str(e))
    table = build_items(m=a.m, local_dir=a.dir, hub=a.hub, n_tokens=a.n_tokens, text=a.text)
    out = save_items(table, a.out, dtype=a.dtype)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): m={table.m}, d_model={table.d_model}, "
          f"source={table.source}, top tokens {list(table.tokens[:10])}")
    return 0


def _schema(argv: Sequence[str]) -> int:
    from . import schema_doc

    ap = _Parser(prog="rgr schema", description="Write data/SCHEMA.md from the tables' schemas.")
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when data/SCHEMA.md is stale")
    a = ap.parse_args(list(argv))
    if a.check:
        ok = schema_doc.is_current()
        print("data/SCHEMA.md is current" if ok else "data/SCHEMA.md is stale: run python -m rgr schema")
        return 0 if ok else 1
    print(f"wrote {schema_doc.write()}")
    return 0


def _repair(argv: Sequence[str]) -> int:
    from .catalog import schema_for_file
    from .store import repair_table

    ap = _Parser(prog="rgr repair", description="Cut a truncated table in data/ back to the rows before the damage.")
    ap.add_argument("table", type=Path, help="e.g. data/base.csv")
    a = ap.parse_args(list(argv))
    try:
        if not a.table.is_file():
            raise UsageError(f"table: no such file {a.table}")
        _writable_dir(a.table.parent, "table")
        schema = schema_for_file(a.table)
        done = repair_table(a.table, schema)
    except (UsageError, ValueError) as e:  # TableError is a ValueError: damage repair cannot undo
        return _fail("rgr repair", str(e))
    if not done.dropped:
        print(f"{a.table}: intact ({done.kept} rows); nothing to repair")
    else:
        which = ", ".join(map(str, done.lines[:10])) + (" ..." if done.dropped > 10 else "")
        print(f"{a.table}: kept {done.kept} intact rows; dropped {done.dropped} damaged line(s) ({which}), saved in "
              f"{a.table}.damaged; rerun the sweep to train what is missing")
    return 0


def _replay_stopping(argv: Sequence[str]) -> int:
    from .experiments.futility import RULES
    from .results.futility_replay import replay_table

    ap = _Parser(prog="rgr replay-stopping",
                 description="Replay a futility-stopping rule on a finished table's validation curves: model-steps "
                             "saved, passing runs it would stop, and every cell whose answer would change.")
    ap.add_argument("table", help="a table of data/ by name (base) or path (data/base.csv)")
    ap.add_argument("--preset", required=True, help="whose rows to replay: smoke, book or paper")
    ap.add_argument("--rule", default="trend-v1", help=f"the rule (one of {sorted(RULES)}; default trend-v1)")
    a = ap.parse_args(list(argv))
    try:
        lines = replay_table(a.table, a.preset, a.rule)
    except ValueError as e:
        return _fail("rgr replay-stopping", str(e))
    print("\n".join(lines))
    return 0


COMMANDS: dict[str, tuple[Callable[[Sequence[str]], int], str]] = {
    "bench": (_bench, "time the paper's one-run loop against the stacked training engine"),
    "sweep": (_sweep, "run an experiment's grid, resumably, into data/ (--list to see them)"),
    "schema": (_schema, "write data/SCHEMA.md from the tables' schemas (--check to compare)"),
    "constructions": (_constructions, "smallest D_K of the explicit constructions -> data/constructions.csv"),
    "gpt2": (_gpt2, "build data/gpt2_items.npz: GPT-2 embeddings of the E7 items (needs the hub or RGR_GPT2_DIR)"),
    "repair": (_repair, "cut a truncated table back to its intact rows"),
    "replay-stopping": (_replay_stopping, "replay a futility-stopping rule on a table: steps saved, answers changed"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m rgr <command> [options]\n\ncommands:")
        for name, (_, help_) in sorted(COMMANDS.items()):
            print(f"  {name:<14} {help_}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        return _fail("rgr", f"unknown command {name!r}; choose from {sorted(COMMANDS)}")
    return int(COMMANDS[name][0](rest) or 0)
