"""Reuse, not rerun: a planned run whose exact config already trained, in another table or preset, is copied
(chapter *permutation sweeps*).

The lambda = 8 diagonal's first three cells and lambda = 32's (512, 16) are base-grid
cells, and a book preset often shares runs with its paper preset (same cell, h,
D_K, seed and cutoff). Such a run is read from where it trained, not trained again:
its row is copied whole (config, results, curve, provenance) under the new sweep's
run key and preset, with ``reused_from = "<table>:<run_key>"`` naming the row it
came from (the first row, when that row was itself a copy).

A source row stands in for a planned run when its ``config_key`` equals the run's
config key, or the key of the run's config with futility stopping off (a run that
trained to its end answers at least what a futility-stopped twin would; the
converse does not hold, so a futility-stopped row never stands in for a run
without the rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

from ..store import Schema, TableError, load_results
from .engine.config import RunConfig


def _twin_keys(cfg: RunConfig) -> tuple[str, ...]:
    """The config keys of the rows that may stand in for ``cfg``: its own, and its twin's without futility stopping."""
    return (cfg.key(),) if cfg.futility is None else (cfg.key(), cfg.replace(futility=None).key())


def source_rows(own: Schema, others: Sequence[Schema], preset: str, root: Path | None = None) -> pd.DataFrame:
    """Rows that may stand in, best first: the table's other presets, then the other tables (a missing table is
    skipped).

    Each row is tagged with ``_table``, the table it is in.
    """
    frames = []
    for schema in (own, *others):
        try:
            df = load_results(schema, root=root)
        except TableError:
            continue
        if schema is own:
            df = df[df["preset"] != preset]
        frames.append(df.assign(_table=schema.name))
    if not frames:
        return pd.DataFrame()
    rank = {"paper": 0, "book": 1, "smoke": 2}
    out = pd.concat(frames, ignore_index=True)
    out = out.assign(_rank=out["preset"].map(rank).fillna(3))
    return out.sort_values(["_rank"], kind="stable").drop_duplicates("config_key").drop(columns="_rank")


def reused_rows(todo: Sequence[RunConfig], keys: Sequence[str], name: str, preset: str,
                sources: pd.DataFrame) -> list[dict]:
    """Rows for the planned runs ``todo`` (with run keys ``keys``) that ``sources`` already holds."""
    if sources.empty:
        return []
    by_key = sources.set_index("config_key", drop=False)
    rows = []
    for cfg, key in zip(todo, keys):
        hit = next((k for k in _twin_keys(cfg) if k in by_key.index), None)
        if hit is None:
            continue
        src = {k: (None if _missing(v) else v) for k, v in by_key.loc[hit].to_dict().items()}
        table = src.pop("_table")
        origin = src["reused_from"] or f"{table}:{src['run_key']}"
        src.update(run_key=key, preset=preset, experiment=name, reused_from=origin)
        rows.append(src)
    return rows


def _missing(v: object) -> bool:
    return not isinstance(v, (list, dict)) and pd.isna(v)
