"""Result tables in data/: typed columns, provenance, locked atomic writes, strict loading (ground wing).

What a table is on disk, how it is keyed, written (locked, atomic), loaded strictly and sealed: data/SCHEMA.md's
opening (written by :mod:`rgr.schema_doc`) and :mod:`rgr.store.seal`. The package reads; writing is
:mod:`rgr.store.write` (:func:`~rgr.store.write.write_rows`, :func:`~rgr.store.write.sweep_lock`, repair, ...),
imported by the writers alone, so a chapter that reads tables does not load it.

What a table of data/ is (:class:`Table`: name, schema, presets, planned runs keyed), where it lives
(:func:`table_path`, :func:`shard_paths`) and reading it with its shards merged (:func:`load_results`; folding them
into the main table is the writers' :func:`rgr.experiments.runner.merge_shards`) are here too: every table of data/
is read so, the protocol sweeps, E7 (``gpt2.csv``) and the constructions (``constructions.csv``) alike, each with
the schema its own module declares. Chapters reach it through :func:`rgr.catalog.load` (by name).
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import io
import json
import math
from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from ..paths import data_dir
from .schema import PROVENANCE, Column, RowKey, Schema, TableBusy, TableError, code_version, provenance
from .seal import UnsealedTable, enforce, read_seal, seal_path

__all__ = ["Column", "RowKey", "Schema", "TableError", "TableBusy", "UnsealedTable", "PROVENANCE", "code_version",
           "provenance", "load_table", "seal_path", "FIELD_LIMIT", "read_table", "read_text",
           "check_integrity", "check_header", "rows_of", "Table", "field_key", "check_preset", "table_path",
           "shard_paths", "load_results"]

FIELD_LIMIT = 1 << 24  # characters a field may hold: the reader's limit; the writer refuses longer fields
csv.field_size_limit(max(csv.field_size_limit(), FIELD_LIMIT))


def read_text(path: Path) -> str:
    """The table's text (a UTF-8 byte-order mark dropped); a :class:`TableError` naming the file if it is not UTF-8."""
    return _decoded(path, _file_bytes(path))


def _file_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise TableError(f"{path}: is a folder, not a table") from None


def _decoded(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TableError(f"{path}: not UTF-8 text (byte {e.start} is {e.object[e.start:e.start + 1]!r}); a table of "
                         "data/ is written by rgr as UTF-8 CSV — restore it from git or rerun the sweep") from None


def _lines(index: pd.Index) -> list[int]:
    """File line numbers of data-frame rows (line 1 is the header; one record per line)."""
    return [int(i) + 2 for i in index[:5]]


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


def check_integrity(path: Path, text: str, schema: Schema) -> None:
    """Refuse (:class:`TableError`) a table text with an incomplete or corrupt line, no rows, or columns the schema
    lacks or does not know."""
    if not text.strip():
        raise TableError(f"{path}: empty file; delete it and rerun the command that writes it")
    header, rows, bad = _records(text)
    if bad is not None:
        raise TableError(f"{path}: line {bad} is incomplete or corrupt (truncated file?); "
                         f"`python -m rgr repair {path}` drops the damaged lines and keeps every intact row "
                         f"({len(rows)} before it), then rerun the sweep")
    if not rows:
        raise TableError(f"{path}: a header and no rows (no command of rgr writes that); delete it and rerun the "
                         "command that writes it")
    check_header(path, header, schema)


def check_header(path: Path, header: list[str], schema: Schema) -> None:
    """Refuse (:class:`TableError`) a header that lacks a column of the schema or has one it does not know."""
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


def rows_of(text: str, schema: Schema, path: Path) -> pd.DataFrame:
    """The records of a table's CSV ``text``, typed and checked against ``schema`` (errors name ``path``)."""
    return _typed(_frame(text, schema), schema, path)


def _typed(df: pd.DataFrame, schema: Schema, path: Path) -> pd.DataFrame:
    for c in schema.all_columns:  # first the choices: other columns' empty values are allowed by them
        if c.choices is not None:
            bad = df[c.name].notna() & ~df[c.name].isin(c.choices)
            if bad.any():
                raise TableError(f"{path}: column {c.name!r} out of range (must be {c.describe()}) on lines "
                                 f"{_lines(df.index[bad])} (values {df[c.name][bad].tolist()[:3]})")
    for c in schema.all_columns:
        bad = _empty_rows(df, c)
        if bad.any():
            raise TableError(f"{path}: column {c.name!r} has empty values on lines {_lines(df.index[bad])}")
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
        bad = _invalid(df[c.name], c)
        if bad.any():
            raise TableError(f"{path}: column {c.name!r} out of range (must be {c.describe()}) on lines "
                             f"{_lines(df.index[bad])} (values {df[c.name][bad].tolist()[:3]})")
    if df["run_key"].duplicated().any():
        raise TableError(f"{path}: duplicated run_key values {df['run_key'][df['run_key'].duplicated()].tolist()[:3]}")
    for what, broken in schema.checks:
        bad = broken(df)
        if bad.any():
            raise TableError(f"{path}: {what} fails on lines {_lines(df.index[bad])}")
    _check_keys(df, schema, path)
    return df[[c.name for c in schema.all_columns]]


def _check_keys(df: pd.DataFrame, schema: Schema, path: Path) -> None:
    """Refuse rows whose ``run_key`` is not the one their columns give (:class:`rgr.store.schema.RowKey`): a row
    edited in place under its old key would otherwise be read as the run it no longer describes."""
    if schema.key is None:
        return
    bad = df["run_key"].to_numpy() != pd.Series(schema.key.of(df), index=df.index, dtype=object).to_numpy()
    if bad.any():
        lines = _lines(df.index[bad])
        where = f"line {lines[0]}" if bad.sum() == 1 else f"lines {lines}{' ...' if bad.sum() > 5 else ''}"
        raise TableError(f"{path}: {where} ({int(bad.sum())} of {len(df)} rows): run_key is not the hash of the row's "
                         f"{', '.join(schema.key.columns)}, so the row was edited after it was written; restore the "
                         f"table from git, or set the row aside with `python -m rgr repair {path}` and rerun the "
                         "command that writes the table")


def _invalid(s: pd.Series, c: Column) -> pd.Series:
    """Values outside the column's range, or not finite (floats)."""
    bad = pd.Series(False, index=s.index)
    if c.low is not None or c.high is not None:
        bad |= _out_of_range(s, c)
    if c.dtype == "float":
        bad |= s.notna() & s.isin([math.inf, -math.inf])
    return bad


def load_table(path: str | Path, schema: Schema) -> pd.DataFrame:
    """Read and validate one table, and check it against its seal; raise :class:`TableError` naming the problem.

    A table cut at a line boundary (fewer rows than its seal records) is refused; one without a matching seal is
    read with an :class:`rgr.store.UnsealedTable` warning that says why (:mod:`rgr.store.seal`).
    """
    seal = read_seal(path)  # before the table: a write between the two reads cannot look like a cut
    df, data = read_table(path, schema)
    enforce(path, data, len(df), seal)
    return df


def read_table(path: str | Path, schema: Schema) -> tuple[pd.DataFrame, bytes]:
    """One table's rows, read and validated as :func:`load_table` does, and its bytes; its seal is not consulted."""
    path = Path(path)
    if not path.is_file():
        raise TableError(f"{path}: no such table; produce it with `python -m rgr sweep {schema.name} --preset book`")
    data = _file_bytes(path)
    text = _decoded(path, data)
    check_integrity(path, text, schema)
    return rows_of(text, schema, path), data


def _frame(text: str, schema: Schema) -> pd.DataFrame:
    """The CSV text as strings; a column added later (:attr:`Column.since`) and absent from it reads as empty."""
    df = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=True)
    for c in schema.all_columns:
        if c.name not in df.columns:
            df[c.name] = pd.Series([None] * len(df), index=df.index, dtype=object)
    return df


# ----------------------------------------------------------------------------- the tables of data/


class Table(Protocol):
    """What a table of data/ is, apart from how its runs train (:class:`rgr.experiments.runner.Sweepable`): its
    name, schema and presets, and the runs a preset plans, keyed, so a reader can tell a complete table from a
    partial one (:func:`rgr.catalog.preset_completeness`)."""

    name: str
    presets: Any  # a mapping (or collection) of preset names
    shardable: bool
    book_scope: str  # what the book preset leaves out, in words (rgr.chapters.loading.provenance_note)

    @property
    def schema(self) -> Schema: ...

    def planned_runs(self, preset: str, done: pd.DataFrame | None, shard: tuple[int, int]) -> list:
        """Every run the preset needs given its finished rows ``done`` (called again after each round)."""
        ...

    def run_key(self, cfg: Any, preset: str) -> str: ...


def field_key(run: Any, preset: str) -> str:
    """The run key of a table whose runs are flat frozen dataclasses (constructions, softmax_cells, gpt2): the first
    16 hex digits of the sha256 of the run's fields and the preset as sorted JSON."""
    text = json.dumps({**dataclasses.asdict(run), "preset": preset}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_preset(table: Table, preset: object, alternative: str = "") -> str:
    """``preset`` when it is one of ``table``'s presets; else a ValueError naming them (the one preset check of every
    table: the runner's, the catalog's, each table's own planner). ``alternative``: what else the caller takes."""
    if not isinstance(preset, str) or preset not in table.presets:
        raise ValueError(f"preset must be one of {sorted(table.presets)} {alternative}for {table.name}, got {preset!r}")
    return preset


def table_path(name: str, shard: tuple[int, int] | None = None, root: Path | None = None) -> Path:
    """data/<name>.csv, or a shard's file data/<name>.shard-<i>-of-<n>.csv."""
    base = root or data_dir()
    if shard is None or shard[1] == 1:
        return base / f"{name}.csv"
    return base / f"{name}.shard-{shard[0]}-of-{shard[1]}.csv"


def shard_paths(name: str, root: Path | None = None) -> list[Path]:
    return sorted((root or data_dir()).glob(f"{name}.shard-*-of-*.csv"))


def load_results(schema: Schema, preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """The table of ``schema.name`` (with any shard files merged), optionally one preset's rows."""
    main = table_path(schema.name, root=root)
    paths = [p for p in [main, *shard_paths(schema.name, root)] if p.is_file()]
    if not paths:
        command = "constructions" if schema.name == "constructions" else f"sweep {schema.name}"
        raise TableError(f"{main}: no such table; produce it with `python -m rgr {command} --preset book`")
    df = pd.concat([load_table(p, schema) for p in paths], ignore_index=True)
    df = df.drop_duplicates("run_key", keep="last").reset_index(drop=True)
    if preset is not None:
        df = df[df["preset"] == preset].reset_index(drop=True)
    return df
