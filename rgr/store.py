"""Result tables in data/: typed columns, provenance, locked atomic writes, strict loading (ground wing).

A table is a CSV file, one row per run, keyed by ``run_key`` (a hash of the
run's config and preset). Writes merge new rows into the table under an
exclusive lock (``fcntl``) through a temporary file and a rename, so a table on
disk is always complete and two writers never lose each other's rows: an
interrupted sweep loses at most the stack it was training. A sweep holds
:func:`sweep_lock` on its table for its whole run, so a second sweep of the
same table refuses to start and names the holder.

The loader checks every column's presence, type and range, refuses columns the
schema does not know, and checks the file's integrity (every line complete);
it stops with a message that names the file and the problem rather than return
half a table. A truncated table is recovered by ``python -m rgr repair <file>``
(:func:`repair_table`): the rows before the damage are kept.
"""

from __future__ import annotations

import csv
import fcntl
import functools
import io
import json
import math
import os
import platform
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

import pandas as pd
import torch

from . import __version__
from .paths import repo_root

__all__ = ["Column", "Schema", "TableError", "TableBusy", "PROVENANCE", "code_version", "provenance", "write_rows",
           "load_table", "finished_keys", "sweep_lock", "repair_table"]

_DTYPES = {"int": "int64", "float": "float64", "str": "object", "bool": "bool", "json": "object"}


class TableError(ValueError):
    """A table in data/ is missing, truncated or malformed."""


class TableBusy(RuntimeError):
    """Another process is running a sweep into the same table."""


@dataclass(frozen=True)
class Column:
    """One column: its type, what it means, where it may be empty and which values are valid.

    ``nullable``: empty values allowed; ``null_when=(column, values)`` narrows that to the rows
    whose ``column`` is one of ``values``. ``low``/``high``: the closed range of valid values.
    ``since``: when the column was added (a date); a table written before it may lack the
    column, which then reads as empty (so it must be nullable) and is written on the next merge.
    """

    name: str
    dtype: str  # int | float | str | bool | json
    doc: str
    nullable: bool = False
    low: float | None = None
    high: float | None = None
    null_when: tuple[str, tuple[str, ...]] | None = None
    since: str | None = None

    def __post_init__(self) -> None:
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")
        if self.null_when is not None and not self.nullable:
            raise ValueError(f"column {self.name!r}: null_when needs nullable=True")
        if self.since is not None and not self.nullable:
            raise ValueError(f"column {self.name!r}: since needs nullable=True (older tables read it as empty)")

    def describe(self) -> str:
        """Type and constraints in words, for the schema doc."""
        parts = [self.dtype]
        if self.low is not None or self.high is not None:
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            parts.append(f"in [{lo}, {hi}]")
        if self.nullable:
            parts.append("(may be empty" + (f" where {self.null_when[0]} is {'/'.join(self.null_when[1])})"
                                             if self.null_when else ")"))
        if self.since is not None:
            parts.append(f"(added {self.since}; empty in rows written before)")
        return " ".join(parts)


PROVENANCE: tuple[Column, ...] = (
    Column("rgr_version", "str", "version of the rgr package that produced the row"),
    Column("git_commit", "str", "git commit of the repository (suffix +dirty if rgr/ had uncommitted changes)"),
    Column("torch_version", "str", "torch version"),
    Column("device_name", "str", "the device the run trained on (GPU name, or the CPU)"),
    Column("preset", "str", "preset of the experiment: smoke, book or paper"),
    Column("date", "str", "UTC date and time the row was written (ISO 8601)"),
)


@dataclass(frozen=True)
class Schema:
    """The columns of one experiment's table (the run key first, the provenance columns appended)."""

    name: str
    columns: tuple[Column, ...]

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return (Column("run_key", "str", "hash of the run's config and preset; unique per row"), *self.columns, *PROVENANCE)

    def markdown(self) -> str:
        """The schema as a markdown table, for data/'s schema doc."""
        lines = [f"### `{self.name}.csv`", "", "| column | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{c.name}` | {c.describe()} | {c.doc} |" for c in self.all_columns]
        return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The commit (``+dirty`` when rgr/ had uncommitted changes) of the code this process loaded.

    Read once, when rgr.store is imported: a long sweep's rows keep naming the code that trains them
    even if the checkout changes under the running process.
    """
    try:
        root = repo_root()
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "rgr"], cwd=root, capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError, FileNotFoundError):
        return "unknown"


code_version()  # pin the version at import time (see the docstring)


def _device_name(device: torch.device | str) -> str:
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.machine()}, {os.cpu_count()} cores)"


def provenance(preset: str, device: torch.device | str) -> dict[str, str]:
    """The provenance fields of rows written now, by this code, on ``device``."""
    return {
        "rgr_version": __version__,
        "git_commit": code_version(),
        "torch_version": torch.__version__,
        "device_name": _device_name(device),
        "preset": preset,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# ---------------------------------------------------------------------------------------
# locks


def _lock_file(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{kind}.lock")


@contextmanager
def _write_lock(path: Path) -> Iterator[None]:
    """Exclusive lock around one read-merge-rename of ``path`` (blocks until it is free)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(_lock_file(path, "write"), "a") as fh:
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
    fh = open(_lock_file(path, "sweep"), "a+")
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


# ---------------------------------------------------------------------------------------
# reading


def _encode(value: Any, col: Column) -> Any:
    if col.dtype == "json":
        return json.dumps(value, separators=(",", ":"))
    return value


def _records(text: str) -> tuple[list[str], list[list[str]], int | None]:
    """Header, the complete records, and the line number of the first damaged one (None: intact)."""
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None) or []
    rows: list[list[str]] = []
    for row in reader:
        if len(row) != len(header):
            return header, rows, reader.line_num
        rows.append(row)
    if not text.endswith("\n"):
        return header, rows[:-1], reader.line_num
    return header, rows, None


def _check_integrity(path: Path, text: str, schema: Schema) -> None:
    if not text.strip():
        raise TableError(f"{path}: empty file; delete it and rerun the command that writes it")
    header, rows, bad = _records(text)
    if bad is not None:
        raise TableError(f"{path}: line {bad} is incomplete or corrupt (truncated file?); "
                         f"`python -m rgr repair {path}` keeps the {len(rows)} rows before it, then rerun the sweep")
    want = [c.name for c in schema.all_columns]
    missing = [c.name for c in schema.all_columns if c.name not in header and c.since is None]
    if missing:
        raise TableError(f"{path}: columns missing: {missing} (schema {schema.name!r})")
    unknown = [c for c in header if c not in want]
    if unknown:
        raise TableError(f"{path}: unknown columns {unknown} (schema {schema.name!r} has none of them; written by "
                         "another version of rgr?); nothing is dropped silently — use the rgr that wrote it")


def _empty_rows(df: pd.DataFrame, c: Column) -> pd.Series:
    """Rows where ``c`` is empty but must not be."""
    empty = df[c.name].isna()
    if c.null_when is not None:
        col, values = c.null_when
        return empty & ~df[col].isin(values)
    return empty & (not c.nullable)


def _out_of_range(s: pd.Series, c: Column) -> pd.Series:
    v = s.astype("float64")
    lo = -math.inf if c.low is None else c.low
    hi = math.inf if c.high is None else c.high
    return v.notna() & ((v < lo) | (v > hi))


def _typed(df: pd.DataFrame, schema: Schema, path: Path) -> pd.DataFrame:
    for c in schema.all_columns:
        bad = _empty_rows(df, c)
        if bad.any():
            raise TableError(f"{path}: column {c.name!r} has empty values in rows {list(df.index[bad][:5])}")
    for c in schema.all_columns:
        s = df[c.name]
        try:
            if c.dtype == "int":
                df[c.name] = s.astype("Int64" if c.nullable else "int64")
            elif c.dtype == "float":
                df[c.name] = s.astype("float64")
            elif c.dtype == "bool":
                if not s.isin([True, False, "True", "False"]).all():
                    raise ValueError("not a boolean")
                df[c.name] = s.map({True: True, False: False, "True": True, "False": False}).astype(bool)
            elif c.dtype == "json":
                df[c.name] = s.map(lambda v: json.loads(v) if isinstance(v, str) else v)
            else:
                df[c.name] = s.astype("object").where(s.notna(), None)
        except (ValueError, TypeError, json.JSONDecodeError) as e:
            raise TableError(f"{path}: column {c.name!r} is not of type {c.dtype} ({e})") from e
        if c.low is not None or c.high is not None:
            bad = _out_of_range(df[c.name], c)
            if bad.any():
                raise TableError(f"{path}: column {c.name!r} out of range (must be {c.describe()}) in rows {list(df.index[bad][:5])} (values {df[c.name][bad].tolist()[:3]})")
    if df["run_key"].duplicated().any():
        raise TableError(f"{path}: duplicated run_key values {df['run_key'][df['run_key'].duplicated()].tolist()[:3]}")
    return df[[c.name for c in schema.all_columns]]


def load_table(path: str | Path, schema: Schema) -> pd.DataFrame:
    """Read and validate one table; raise :class:`TableError` naming the problem."""
    path = Path(path)
    if not path.is_file():
        raise TableError(f"{path}: no such table; produce it with `python -m rgr sweep {schema.name} --preset book`")
    text = path.read_text()
    _check_integrity(path, text, schema)
    return _typed(_frame(text, schema), schema, path)


def _frame(text: str, schema: Schema) -> pd.DataFrame:
    """The CSV text as strings; a column added later (:attr:`Column.since`) and absent from it reads as empty."""
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=True)
    for c in schema.all_columns:
        if c.name not in df.columns:
            df[c.name] = pd.Series([None] * len(df), index=df.index, dtype=object)
    return df


def finished_keys(path: str | Path, schema: Schema) -> set[str]:
    """run_keys already in the table (empty when the table does not exist yet)."""
    path = Path(path)
    return set(load_table(path, schema)["run_key"]) if path.is_file() else set()


# ---------------------------------------------------------------------------------------
# writing


def _replace(path: Path, write) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_rows(path: str | Path, schema: Schema, rows: Iterable[dict[str, Any]]) -> int:
    """Merge ``rows`` into the table at ``path`` atomically, under its lock; returns the table's row count.

    Rows whose run_key is already present replace the old ones. Every row must
    carry every schema column (provenance included) and no other; nothing is written otherwise.
    """
    path = Path(path)
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
    _typed(pd.read_csv(io.StringIO(frame.to_csv(index=False)), dtype=str, keep_default_na=True), schema, path)
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
        _replace(path, lambda tmp: out.to_csv(tmp, index=False, lineterminator="\n"))
    return len(out)


def repair_table(path: str | Path, schema: Schema) -> tuple[int, int]:
    """Cut a damaged table back to its rows before the damage; returns (rows kept, lines dropped).

    The dropped tail is saved beside the table as ``<table>.damaged`` for inspection. The kept rows
    must pass the strict loader; otherwise nothing is changed.
    """
    path = Path(path)
    if not path.is_file():
        raise TableError(f"{path}: no such table")
    with _write_lock(path):
        text = path.read_text()
        header, rows, bad = _records(text)
        if bad is None:
            load_table(path, schema)  # intact: only check it
            return len(rows), 0
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
        kept = buf.getvalue()
        dropped = text[len(kept):] if text.startswith(kept) else "\n".join(text.splitlines()[len(rows) + 1:])
        _check_integrity(path, kept, schema)
        _typed(_frame(kept, schema), schema, path)
        path.with_name(path.name + ".damaged").write_text(dropped)
        _replace(path, lambda tmp: tmp.write_text(kept))
    return len(rows), len(dropped.splitlines()) or 1
