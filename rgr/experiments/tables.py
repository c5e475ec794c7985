"""What a table of data/ is (:class:`Table`), where it lives, reading it (shards merged; folding them into the
main table is the writers' :func:`rgr.experiments.runner.merge_shards`).

Every table of data/ is read here, through :func:`rgr.store.load_table` and the
experiment's own :class:`rgr.store.Schema`: the protocol sweeps, E7
(``gpt2.csv``) and the constructions (``constructions.csv``) alike. Chapters
reach it through :func:`rgr.catalog.load` (by name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pandas as pd

from ..paths import data_dir
from ..store import Schema, TableError, load_table

__all__ = ["Table", "check_preset", "table_path", "shard_paths", "load_results"]


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
