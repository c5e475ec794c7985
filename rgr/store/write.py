"""Writing a table: locks, atomic merges with their seal, repair, sealing (ground wing; see :mod:`rgr.store`)."""

from __future__ import annotations

import csv
import fcntl
import json
import os
import re
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

import pandas as pd

from . import FIELD_LIMIT, check_header, check_integrity, load_table, read_table, read_text, rows_of
from .schema import Column, Schema, TableBusy, TableError
from .seal import BadSeal, SealCheck, compare, drop_seal, open_own, read_seal, replace_whole, seal_of, write_seal


def _lock_file(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{kind}.lock")


@contextmanager
def _write_lock(path: Path) -> Iterator[None]:
    """Exclusive lock around one read-merge-rename of ``path`` (blocks until it is free)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_own(_lock_file(path, "write"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


@contextmanager
def sweep_lock(path: str | Path, what: str = "") -> Iterator[None]:
    """Hold ``path`` for one sweep; raise :class:`TableBusy` naming the holder when another process has it.

    The lock lives in a hidden file beside the table (``.<table>.sweep.lock``); the kernel releases
    it when the holder exits, however it exits.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fh = open_own(_lock_file(path, "sweep"), "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise TableBusy(f"{path} is being written by another sweep ({holder}); wait for it to finish or stop it, "
                            "then rerun") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}{': ' + what if what else ''}, since {time.strftime('%Y-%m-%d %H:%M:%S')}")
        fh.flush()
        try:
            yield
        finally:
            fh.seek(0)
            fh.truncate()
            fcntl.flock(fh, fcntl.LOCK_UN)
    finally:
        fh.close()


def _encode(value: Any, col: Column) -> Any:
    out = json.dumps(value, separators=(",", ":")) if col.dtype == "json" else value
    if isinstance(out, str) and len(out) > FIELD_LIMIT:
        raise ValueError(f"column {col.name!r}: a value of {len(out):,} characters is over the {FIELD_LIMIT:,} a "
                         "table's reader accepts; nothing is written")
    return out


def _write_sealed(path: Path, text: str, rows: int, seal_first: bool = False) -> None:
    """Replace the table at ``path`` with ``text`` (``rows`` rows) whole, then its seal (:mod:`rgr.store.seal`).

    ``seal_first`` (a repair, which drops lines): the seal goes first, so a repair killed between the two leaves
    the damaged table, which the loader refuses and a rerun of the repair fixes, never a table shorter than its
    seal."""
    data = text.encode("utf-8")
    _clear_leftovers(path)
    if seal_first:
        write_seal(path, seal_of(data, rows))
    replace_whole(path, data)
    if not seal_first:
        try:
            write_seal(path, seal_of(data, rows))
        except TableError as e:  # the table is written: say so, or the error reads as if nothing was
            raise TableError(f"{path}: written ({rows:,} rows), but not its seal: {e}; then "
                             f"`python -m rgr repair {path} --seal` records it") from None


def _clear_leftovers(path: Path) -> None:
    """Remove the temporary files of the table and its seal that a killed writer left (``.<name>.<pid>.tmp``,
    ``.<name>.seal.<pid>.tmp``). Called under the table's write lock, which every writer of them holds, so none
    of another process is in use; this process's own names are left to :func:`rgr.paths.replace_whole`."""
    own = re.compile(rf"\.{re.escape(path.name)}(?:\.seal)?\.(\d+)\.tmp")
    for leftover in path.parent.glob(f".{path.name}*.tmp"):
        m = own.fullmatch(leftover.name)
        if m and int(m.group(1)) != os.getpid() and (leftover.is_symlink() or leftover.is_file()):
            leftover.unlink()


def write_rows(path: str | Path, schema: Schema, rows: Iterable[dict[str, Any]]) -> int:
    """Merge ``rows`` into the table at ``path`` atomically, under its lock, and seal it; returns its row count.

    Rows whose run_key is already present replace the old ones. Every row must
    carry every schema column (provenance included) and no other; nothing is written otherwise.
    A table cut at a line boundary (fewer rows than its seal) is refused, not merged into.
    """
    path = Path(path)
    rows = list(rows)
    if not rows:  # nothing to merge: never leave a header-only table behind
        return len(load_table(path, schema)) if path.is_file() else 0
    cols = schema.all_columns
    names = {c.name for c in cols}
    new = []
    for r in rows:
        missing = [c.name for c in cols if c.name not in r]
        extra = sorted(set(r) - names)
        if missing or extra:
            raise ValueError(f"row for table {schema.name!r}: " + (f"missing columns {missing}" if missing else
                                                                    f"unknown columns {extra}"))
        new.append({c.name: _encode(r[c.name], c) for c in cols})
    frame = pd.DataFrame(new, columns=[c.name for c in cols])
    for c in cols:
        if c.dtype == "int" and c.nullable:  # None would turn the column into floats ("16.0")
            frame[c.name] = frame[c.name].astype("Int64")
    rows_of(frame.to_csv(index=False), schema, path)
    with _write_lock(path):
        old = load_table(path, schema) if path.is_file() else None
        if old is not None:
            for c in cols:
                if c.dtype == "json":
                    old[c.name] = old[c.name].map(lambda v: json.dumps(v, separators=(",", ":")))
            old = old[~old["run_key"].isin(frame["run_key"])]
            out = pd.concat([old, frame], ignore_index=True) if len(old) else frame
        else:
            out = frame
        _write_sealed(path, out.to_csv(index=False, lineterminator="\n"), len(out))
    return len(out)


def replace_table(path: str | Path, schema: Schema, frame: pd.DataFrame) -> int:
    """Replace the table at ``path`` with ``frame`` whole, under its lock, and seal it; returns its row count.

    For a table recomputed whole rather than merged run by run (data/peers_refit.csv). ``frame`` must pass
    the strict loader (every schema column, valid values, at least one row); nothing is written otherwise.
    """
    path = Path(path)
    text = frame.to_csv(index=False, lineterminator="\n")
    check_integrity(path, text, schema)
    rows_of(text, schema, path)
    with _write_lock(path):
        _write_sealed(path, text, len(frame))
    return len(frame)


class _Repaired(NamedTuple):
    """What :func:`repair_table` did: rows kept, lines dropped, the dropped lines' numbers (header = line 1), the
    table against its seal before (:class:`rgr.store.seal.SealCheck`), and whether a new seal was written."""

    kept: int
    dropped: int
    lines: tuple[int, ...]
    before: SealCheck
    sealed: bool


def repair_table(path: str | Path, schema: Schema, seal: bool = False) -> _Repaired:
    """Drop a table's damaged lines and keep every intact row, before and after them; ``seal``: also record it as it is.

    A line is damaged when it does not parse as one record of the header's width (a truncated or
    garbage line, a blank line) or its values fail the schema's types and ranges. The dropped lines
    are saved beside the table as ``<table>.damaged`` (``line N: text``), and the table is rewritten
    and sealed. The kept rows must pass the strict loader; otherwise nothing is changed.

    An intact table is only checked: one cut at a line boundary (fewer rows than its seal records) is refused
    with :class:`TableError`, unless ``seal``; with ``seal``, an intact table whose seal does not match (none,
    rows appended by a writer that does not seal, other bytes, a cut) gets a seal of its bytes as they are.
    """
    path = Path(path)
    if not path.is_file():
        raise TableError(f"{path}: no such table")
    with _write_lock(path):
        text = read_text(path)
        if not text.strip():
            raise TableError(f"{path}: empty file; delete it and rerun the command that writes it")
        head, *body = text.split("\n")
        header = next(csv.reader([head]))
        check_header(path, header, schema)  # a renamed column fails every line: say so, not "no rows"
        complete = text.endswith("\n")
        numbered = [(n, line) for n, line in enumerate(body, start=2) if complete is False or n <= len(body)]
        good, bad = [], []
        for n, line in numbered:  # the structure of each line: cheap
            (good if _parses(line, header) else bad).append((n, line))
        failing = set(_failing(head, good, schema, path))  # only then the values
        if failing:
            good = [item for item in good if item not in failing]
            bad = sorted(bad + list(failing))
        if not bad:  # intact: check it against its seal, or seal it
            df, data = read_table(path, schema)
            before = _against_seal(path, data, len(df), seal)
            if before.state == "cut" and not seal:
                raise TableError(before.message)
            if seal and before.state != "sealed":
                write_seal(path, seal_of(data, len(df)))
            return _Repaired(len(df), 0, (), before, seal and before.state != "sealed")
        before = _against_seal(path, path.read_bytes(), len(numbered), seal)
        kept = "\n".join([head, *(line for _, line in good)]) + "\n"
        check_integrity(path, kept, schema)
        rows_of(kept, schema, path)
        with open_own(path.with_name(path.name + ".damaged"), "w") as fh:
            fh.write("".join(f"line {n}: {line}\n" for n, line in bad))
        _write_sealed(path, kept, len(good), seal_first=True)
    return _Repaired(len(good), len(bad), tuple(n for n, _ in bad), before, True)


def _against_seal(path: Path, data: bytes, rows: int, resealing: bool) -> SealCheck:
    """:func:`rgr.store.seal.compare` (under the write lock); a seal that is not one rgr writes is an error, unless it
    is to be rewritten."""
    try:
        return compare(path, data, rows, read_seal(path))
    except BadSeal as e:
        if not resealing:
            raise
        return SealCheck("unreadable", str(e), None)


def drop_table(path: str | Path) -> None:
    """Delete a table and its seal (a shard folded into its main table)."""
    path = Path(path)
    path.unlink()
    drop_seal(path)


def _parses(line: str, header: list[str]) -> bool:
    """Whether ``line`` parses as one CSV record of the header's width."""
    try:
        fields = next(csv.reader([line], strict=True), [])
    except csv.Error:
        return False
    return len(fields) == len(header)


def _failing(head: str, lines: list[tuple[int, str]], schema: Schema, path: Path) -> list[tuple[int, str]]:
    """The records of ``lines`` that fail the schema's types, ranges and checks on their own, found by halving: a
    few damaged lines among thousands (a row edited in place) cost a few dozen checks, not one per line."""
    if not lines or _types_hold(head, lines, schema, path):
        return []
    if len(lines) == 1:
        return list(lines)
    mid = len(lines) // 2
    return _failing(head, lines[:mid], schema, path) + _failing(head, lines[mid:], schema, path)


def _types_hold(head: str, lines: list[tuple[int, str]], schema: Schema, path: Path) -> bool:
    """Whether the records ``lines`` (under the header line ``head``) pass the schema's types, ranges and checks."""
    try:
        rows_of("\n".join([head, *(line for _, line in lines)]) + "\n", schema, path)
    except TableError:
        return False
    return True
