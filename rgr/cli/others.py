"""The other commands: constructions, bench, gpt2, schema, repair, replay-stopping, peers-refit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import torch

from .common import Parser, UsageError, at_least, fail, writable_dir, writable_file
from .common import device as device_of
from .sweep import interrupted


def constructions(argv: Sequence[str]) -> int:
    from ..experiments.construction_table import PRESETS, ConstructionSweep
    from ..experiments.runner import run_sweep
    from ..paths import data_dir
    from ..store import TableBusy, TableError
    from ..studies.construction_trainer import ConstructionTrainer

    ap = Parser(prog="rgr constructions", description="Smallest D_K of the explicit constructions -> CSV")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="book")
    ap.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    ap.add_argument("--out", type=Path, default=None, help="default: data/constructions.csv")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the checks use many small tensors)")
    ap.add_argument("--no-progress", action="store_true")
    a = ap.parse_args(list(argv))
    try:
        at_least(a.seed, 0, "--seed")
        at_least(a.threads, 1, "--threads")
        out = writable_file(a.out or data_dir() / "constructions.csv", "--out")
    except UsageError as e:
        return fail(ap.prog, str(e))
    torch.set_num_threads(a.threads)
    sweep = ConstructionTrainer(ConstructionSweep(a.seed))
    try:
        df = run_sweep(sweep, a.preset, "cpu", path=out, progress=not a.no_progress)
    except KeyboardInterrupt:
        return interrupted(ap.prog, sweep, a.preset, out, " ".join(["python -m rgr constructions", *argv]))
    except TableBusy as e:
        return fail(ap.prog, str(e), 1)
    except TableError as e:
        return fail(ap.prog, str(e))
    print(f"{int((df['preset'] == a.preset).sum())} rows of preset {a.preset} in {out}")
    return 0


# ---------------------------------------------------------------------------------------
# bench, gpt2 build, schema, repair


def bench(argv: Sequence[str]) -> int:
    from ..experiments.sizing import bench

    if any(a == "--gpt2" or a.startswith("--gpt2=") for a in argv):  # the E7 block's step (rgr.gpt2.bench)
        from ..gpt2 import bench as gpt2_bench

        ap = gpt2_bench.parser()
        ap.error = Parser.error.__get__(ap)
        try:
            device_of(ap.parse_args(list(argv)).device)
        except UsageError as e:
            return fail("rgr bench", str(e))
        return gpt2_bench.main(list(argv))

    ap = bench.parser()
    ap.error = Parser.error.__get__(ap)  # one-line errors here too; every other input: bench's own check
    ap.parse_args(list(argv))
    return bench.main(list(argv))


def gpt2(argv: Sequence[str]) -> int:
    from ..gpt2.experiment import default_path
    from ..gpt2.items import build_items, save_items
    from ..gpt2.table import N_TOKENS

    ap = Parser(prog="rgr gpt2", description="Build data/gpt2_items.npz (protocol E7)")
    sub = ap.add_subparsers(dest="cmd", required=True, parser_class=Parser)
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
        at_least(a.m, 1, "--m")
        at_least(a.n_tokens, 1, "--n-tokens")
        local = a.dir or os.environ.get("RGR_GPT2_DIR")
        if not a.hub and not local:
            raise UsageError("--dir: no GPT-2 source; pass --dir (or set RGR_GPT2_DIR) to a local copy, or --hub")
        if local and not a.hub and not Path(local).is_dir():
            raise UsageError(f"--dir: {local} is not a folder")
        if a.text is not None and not Path(a.text).is_file():
            raise UsageError(f"--text: no such file {a.text}")
        writable_file(Path(a.out) if a.out else default_path(), "--out")
    except UsageError as e:
        return fail("rgr gpt2 build", str(e))
    try:
        table = build_items(m=a.m, local_dir=a.dir, hub=a.hub, n_tokens=a.n_tokens, text=a.text)
    except (ValueError, FileNotFoundError, ImportError) as e:  # a damaged or missing file, or the gpt2 extra: one line
        return fail("rgr gpt2 build", str(e))
    out = save_items(table, a.out, dtype=a.dtype)
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB): m={table.m}, d_model={table.d_model}, "
          f"source={table.source}, top tokens {list(table.tokens[:10])}")
    return 0


def schema(argv: Sequence[str]) -> int:
    from .. import schema_doc

    ap = Parser(prog="rgr schema", description="Write data/SCHEMA.md from the tables' schemas.")
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 when data/SCHEMA.md is stale")
    a = ap.parse_args(list(argv))
    if a.check:
        ok = schema_doc.is_current()
        print("data/SCHEMA.md is current" if ok else "data/SCHEMA.md is stale: run python -m rgr schema")
        return 0 if ok else 1
    print(f"wrote {schema_doc.write()}")
    return 0


def _table_schema(path: Path):
    """The schema of a table of data/ from its file name: a sweep's (rgr.catalog), or data/peers_refit.csv's."""
    from ..catalog import schema_for_file

    if path.name == "peers_refit.csv":  # not a sweep: Dana et al.'s tables reduced (rgr.results.peers.refit)
        from ..results.peers.refit import SCHEMA

        return SCHEMA
    return schema_for_file(path)


def repair(argv: Sequence[str]) -> int:
    from ..store.write import repair_table

    ap = Parser(prog="rgr repair", description="Cut a damaged table in data/ back to its intact rows (every one kept); "
                                               "check an intact one against its seal, or record its seal (--seal).")
    ap.add_argument("table", type=Path, help="e.g. data/base.csv")
    ap.add_argument("--seal", action="store_true",
                    help="record the table's seal as it is now (rows, size, sha256): for a table written or appended "
                         "to by a writer that does not seal, or to accept rows lost at its end")
    a = ap.parse_args(list(argv))
    try:
        if not a.table.is_file():
            raise UsageError(f"table: no such file {a.table}")
        writable_dir(a.table.parent, "table")
        done = repair_table(a.table, _table_schema(a.table), seal=a.seal)
    except (UsageError, ValueError) as e:  # TableError is a ValueError: damage repair cannot undo, a cut table
        return fail("rgr repair", str(e))
    print(_repair_report(a.table, done))
    return 0


def _repair_report(table: Path, done) -> str:
    """What :func:`rgr.store.write.repair_table` did to ``table``: one line, and what its seal says when it does not
    match."""
    was = done.before.sealed_rows
    if done.dropped:
        which = ", ".join(map(str, done.lines[:10])) + (" ..." if done.dropped > 10 else "")
        lost = f"; its seal recorded {was:,} rows, {was - done.kept:,} fewer now" if was and was > done.kept else ""
        return (f"{table}: kept {done.kept:,} intact rows; dropped {done.dropped} damaged line(s) ({which}), saved in "
                f"{table}.damaged; sealed at {done.kept:,} rows{lost}; rerun the sweep to train what is missing")
    if done.sealed:
        state = done.before.state
        before = ("its seal was unreadable" if state == "unreadable" else "it had no seal" if was is None
                  else f"its seal recorded the first {was:,}" if state == "appended"
                  else f"its seal recorded {was:,}: the {was - done.kept:,} lost are accepted" if state == "cut"
                  else f"its seal, of {was:,} rows, no longer matched")
        return f"{table}: intact; sealed at {done.kept:,} rows ({before})"
    if done.before.state == "sealed":
        return f"{table}: intact ({done.kept:,} rows) and sealed; nothing to repair"
    return f"{table}: intact ({done.kept:,} rows); nothing to repair\n{done.before.message}"


def replay_stopping(argv: Sequence[str]) -> int:
    from ..experiments.futility import RULES
    from ..results.futility_replay import replay_table

    ap = Parser(prog="rgr replay-stopping",
                 description="Replay a futility-stopping rule on a finished table's validation curves: model-steps "
                             "saved, passing runs it would stop, and every cell whose answer would change.")
    ap.add_argument("table", help="a table of data/ by name (base) or path (data/base.csv)")
    ap.add_argument("--preset", required=True, help="whose rows to replay: smoke, book or paper")
    ap.add_argument("--rule", default="trend-v1", help=f"the rule (one of {sorted(RULES)}; default trend-v1)")
    a = ap.parse_args(list(argv))
    try:
        lines = replay_table(a.table, a.preset, a.rule)
    except ValueError as e:
        return fail("rgr replay-stopping", str(e))
    print("\n".join(lines))
    return 0


def peers_refit(argv: Sequence[str]) -> int:
    from ..results.peers import refit as pr
    from ..store.write import replace_table

    ap = Parser(prog="rgr peers-refit",
                description="Reduce Dana et al.'s tables (fetched, not committed) to the statistics the peers chapter "
                            "re-fits -> data/peers_refit.csv (replaced whole, or not at all).")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--peers", type=Path, default=None, help="folder of their files (default: data/peers/)")
    src.add_argument("--git-dir", type=Path, default=None, help="a clone's git directory holding the pinned commit")
    ap.add_argument("--out", type=Path, default=None, help="default: data/peers_refit.csv")
    a = ap.parse_args(list(argv))
    try:
        out = writable_file(a.out or pr.refit_path(), "--out")
        rows = pr.summarise(pr.read_peer_files(a.peers, a.git_dir), " ".join([pr.COMMAND, *argv]))
    except pr.PeerDataMissing as e:
        return fail(ap.prog, f"nothing written: {e}", 1)
    except (UsageError, ValueError) as e:
        return fail(ap.prog, str(e))
    replace_table(out, pr.SCHEMA, rows)  # whole or not at all: checked by the strict loader, renamed, sealed
    print(f"wrote {out}: {len(rows)} statistics of {pr.REPO} at commit {pr.COMMIT[:12]}")
    return 0
