"""Result tables in data/: typed columns, provenance, atomic writes, strict loading.

A table is a CSV file, one row per run, keyed by ``run_key`` (a hash of the
run's config). Writes merge new rows into the table through a temporary file
and a rename, so a table on disk is always complete: an interrupted sweep loses
at most the group it was training. The loader checks every column's presence
and type and the file's integrity (every line complete), and stops with a
message that names the file and the problem rather than return half a table.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import torch

from . import __version__
from .paths import repo_root

__all__ = ["Column", "Schema", "TableError", "PROVENANCE", "code_version", "provenance", "write_rows", "load_table", "finished_keys"]

_DTYPES = {"int": "int64", "float": "float64", "str": "object", "bool": "bool", "json": "object"}


class TableError(ValueError):
    """A table in data/ is missing, truncated or malformed."""


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str  # int | float | str | bool | json
    doc: str
    nullable: bool = False

    def __post_init__(self) -> None:
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")


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
    """The columns of one experiment's table (the provenance columns are appended)."""

    name: str
    columns: tuple[Column, ...]

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return (Column("run_key", "str", "hash of the run's config; unique per row"), *self.columns, *PROVENANCE)

    def markdown(self) -> str:
        """The schema as a markdown table, for data/'s schema doc."""
        lines = [f"### `{self.name}.csv`", "", "| column | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{c.name}` | {c.dtype}{' (may be empty)' if c.nullable else ''} | {c.doc} |" for c in self.all_columns]
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


def _encode(value: Any, col: Column) -> Any:
    if col.dtype == "json":
        return json.dumps(value, separators=(",", ":"))
    return value


def _check_integrity(path: Path, text: str, schema: Schema) -> None:
    if not text.endswith("\n"):
        raise TableError(f"{path}: the last line is incomplete (truncated file?); rerun the sweep to rewrite it")
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        raise TableError(f"{path}: empty file")
    want = [c.name for c in schema.all_columns]
    missing = [c for c in want if c not in header]
    if missing:
        raise TableError(f"{path}: columns missing: {missing} (schema {schema.name!r})")
    for i, row in enumerate(reader, start=2):
        if len(row) != len(header):
            raise TableError(f"{path}: line {i} has {len(row)} fields, the header has {len(header)} (truncated or corrupt)")


def _typed(df: pd.DataFrame, schema: Schema, path: Path) -> pd.DataFrame:
    for c in schema.all_columns:
        s = df[c.name]
        if not c.nullable and s.isna().any():
            raise TableError(f"{path}: column {c.name!r} has empty values in rows {list(df.index[s.isna()][:5])}")
        try:
            if c.dtype == "int":
                df[c.name] = s.astype("int64") if not c.nullable else s.astype("Int64")
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
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=True)
    return _typed(df, schema, path)


def finished_keys(path: str | Path, schema: Schema) -> set[str]:
    """run_keys already in the table (empty when the table does not exist yet)."""
    path = Path(path)
    return set(load_table(path, schema)["run_key"]) if path.is_file() else set()


def write_rows(path: str | Path, schema: Schema, rows: Iterable[dict[str, Any]]) -> int:
    """Merge ``rows`` into the table at ``path`` atomically; returns the table's row count.

    Rows whose run_key is already present replace the old ones. Every row must
    carry every schema column (provenance included); nothing is written otherwise.
    """
    path = Path(path)
    cols = schema.all_columns
    new = []
    for r in rows:
        missing = [c.name for c in cols if c.name not in r]
        if missing:
            raise ValueError(f"row is missing columns {missing} for table {schema.name!r}")
        new.append({c.name: _encode(r[c.name], c) for c in cols})
    old = load_table(path, schema) if path.is_file() else None
    frame = pd.DataFrame(new, columns=[c.name for c in cols])
    if old is not None:
        for c in cols:
            if c.dtype == "json":
                old[c.name] = old[c.name].map(lambda v: json.dumps(v, separators=(",", ":")))
        old = old[~old["run_key"].isin(frame["run_key"])]
        frame = pd.concat([old, frame], ignore_index=True) if len(old) else frame
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.to_csv(tmp, index=False, lineterminator="\n")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return len(frame)
