"""Every table of data/ by name, and the one way to read one (between the gpt2 and results wings).

Every table of data/ (:data:`rgr.protocol.TABLES`) is a :class:`rgr.store.Table` (what the table is: schema,
presets, planned runs) that :func:`load` reads, strictly (:func:`rgr.store.load_table`); how it trains
(``python -m rgr sweep <name>``) is :func:`rgr.trainers.trainer`, which nothing here imports. A table's declaration
is imported when the table is first asked for (:data:`_PROTOCOL`: the registry's, :data:`_ELSEWHERE`: the others),
so a chapter loads the modules of the tables it reads, and no other table's.

Which preset's rows a reader gets is decided here too, once for every chapter:
:func:`resolve_preset` turns ``"auto"`` into ``"paper"`` where that sweep is complete
(:func:`preset_completeness`: its planner has nothing left to run) and ``"book"`` otherwise.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from .protocol import CHOICES, TABLES
from .store import Schema, Table, TableError, check_preset, load_results, table_path

__all__ = ["NAMES", "get", "load", "load_if_present", "load_complete", "schema_for_file", "table_path",
           "preset_completeness", "completeness", "resolve_preset"]

# every table of data/ by name, with the module that declares it (and the name it has there), imported when the
# table is first asked for: a chapter loads the declarations of the tables it reads, not those of every table
_REGISTRY = "rgr.experiments.registry"  # the protocol's experiments (its EXPERIMENTS, in their order: a test checks)
_ELSEWHERE: dict[str, tuple[str, str]] = {
    "gpt2": ("rgr.gpt2.experiment", "GPT2"), "constructions": ("rgr.experiments.construction_table", "CONSTRUCTIONS"),
    "peers": ("rgr.experiments.peers.engine_sweeps", "PEERS"), "settled": ("rgr.experiments.settled", "SETTLED"),
    "aot": ("rgr.experiments.peers.reimplemented", "AOT"), "pal": ("rgr.experiments.peers.reimplemented", "PAL"),
    "dk_saturation": ("rgr.experiments.peers.engine_sweeps", "DK_SATURATION"),
    "unstopped": ("rgr.experiments.unstopped", "UNSTOPPED"),
    "softmax_cells": ("rgr.experiments.softmax_cells_table", "SOFTMAX_CELLS")}
NAMES: tuple[str, ...] = TABLES  # every table of data/ (one home: rgr.protocol)
_PROTOCOL: tuple[str, ...] = tuple(n for n in NAMES if n not in _ELSEWHERE)  # the registry's, in its order


def get(name: str) -> Table:
    """What the table data/<name>.csv is (its declaration; imported now if it lives outside the registry)."""
    if name not in NAMES:
        raise ValueError(f"experiment must be one of {sorted(NAMES)}, got {name!r}")
    if name in _PROTOCOL:
        return importlib.import_module(_REGISTRY).EXPERIMENTS[name]
    module, attr = _ELSEWHERE[name]
    return getattr(importlib.import_module(module), attr)


def load(name: str, preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """data/<name>.csv (shards merged) through the strict loader, optionally one preset's rows."""
    sweep = get(name)
    if preset is not None:
        check_preset(sweep, preset, "(or None: every row) ")
    return load_results(sweep.schema, preset, root)


def load_if_present(name: str, preset: str | Sequence[str], root: Path | None = None) -> pd.DataFrame:
    """:func:`load` of one preset's rows (or of several presets' together, the table read once, in its order), none
    where data/ has no such table or the table has no such preset (an extension not run yet is read as absent, never
    as a smoke fallback); a table that is there but unreadable is an error, never read as empty."""
    sweep = get(name)
    empty = pd.DataFrame(columns=[c.name for c in sweep.schema.all_columns])
    wanted = [p for p in ((preset,) if isinstance(preset, str) else preset) if p in sweep.presets]
    if not wanted:
        return empty
    try:
        if len(wanted) == 1:
            return load(name, wanted[0], root)
        df = load(name, None, root)
        return df[df["preset"].isin(wanted)].reset_index(drop=True)
    except TableError:
        if table_path(name, root=root).is_file():
            raise
        return empty


def _produce_command(name: str, preset: str) -> str:
    """The command that writes (or completes: it resumes) ``preset``'s rows of data/<name>.csv."""
    return f"python -m rgr {'constructions' if name == 'constructions' else 'sweep ' + name} --preset {preset}"


def load_complete(name: str, preset: str, root: Path | None = None) -> pd.DataFrame:
    """Every planned run of ``preset`` from data/<name>.csv, for a chapter that shows a table as it is (no fallback).

    A missing table, one without rows of ``preset`` or one that lacks some of its planned runs (a cut or an
    interrupted sweep) stops the chapter with a one-line :class:`rgr.store.TableError` naming the file, what it
    holds and the command that completes it.
    """
    sweep = get(name)
    df = load(name, preset, root)  # checks the preset
    planned = {sweep.run_key(r, preset) for r in sweep.planned_runs(preset, df)}
    have = len(planned & set(df["run_key"]))
    if have < len(planned):
        held = f"{have} of the {len(planned)} planned runs" if len(df) else "no rows"
        raise TableError(f"{table_path(name, root=root)} holds {held} of preset {preset!r}; "
                         f"complete it with `{_produce_command(name, preset)}`")
    return df


def schema_for_file(path: str | Path) -> Schema:
    """The schema of a sweep's table file from its name (``base.csv``, ``base.shard-0-of-4.csv``, ...)."""
    stem = Path(path).name.split(".")[0]
    if stem not in NAMES or not Path(path).name.endswith(".csv"):
        raise ValueError(f"path: {path} is not a table of data/ (names: {sorted(NAMES)})")
    return get(stem).schema


# ----------------------------------------------------------------------------- which preset a reader gets


def _choose_preset(completeness: Mapping[str, float], requested: str = "auto") -> str:
    """The preset to read, from each preset's completeness in [0, 1] (a preset with no rows is absent).

    ``"smoke"``, ``"book"`` and ``"paper"`` are obeyed as asked. ``"auto"`` means *the most complete
    of paper and book*: a complete paper sweep wins; otherwise the one with the larger completeness,
    paper on a tie; ``"book"`` when neither has rows (the chapter then falls back to smoke data).
    """
    if requested not in CHOICES:
        raise ValueError(f"preset = {requested!r}; choose one of {', '.join(map(repr, CHOICES))}")
    bad = {k: v for k, v in completeness.items() if not 0.0 <= float(v) <= 1.0}
    if bad:
        raise ValueError(f"completeness must lie in [0, 1], got {bad}")
    if requested != "auto":
        return requested
    paper, book = completeness.get("paper"), completeness.get("book")
    if paper is not None and (paper >= 1.0 or book is None or paper >= book):
        return "paper"
    return "book"


def preset_completeness(name: str, preset: str, root: Path | None = None,
                        done: pd.DataFrame | None = None) -> float | None:
    """Fraction of the runs the preset's planner asks for that data/<name>.csv holds; None without rows. ``done``:
    the table's rows where the caller has read them already (this preset's are used), so it is not read again.

    A sweep is complete (1.0) when its planner, given the finished rows, has nothing left to run
    (refinement rounds included: the fraction can fall when a round adds runs).
    """
    sweep = get(name)
    if preset not in sweep.presets:
        return None
    if done is not None:
        done = done[done["preset"] == preset].reset_index(drop=True)
    else:
        try:
            done = load(name, preset, root=root)
        except TableError:
            return None
    if not len(done):
        return None
    keys = [sweep.run_key(c, preset) for c in sweep.planned_runs(preset, done, (0, 1))]
    have = set(done["run_key"])
    return sum(k in have for k in keys) / len(keys) if keys else 1.0


def completeness(name: str, root: Path | None = None) -> dict[str, float]:
    """:func:`preset_completeness` of the paper and book sweeps of data/<name>.csv (a preset without rows left out)."""
    found = {p: preset_completeness(name, p, root) for p in ("paper", "book")}
    return {p: c for p, c in found.items() if c is not None}


def resolve_preset(names: Sequence[str], requested: str = "auto", root: Path | None = None,
                   found: Mapping[str, Mapping[str, float]] | None = None) -> str:
    """One preset for experiments read together: ``"auto"`` gives ``"paper"`` only when it would for each.

    Experiments compared run against run (softmax against max, the linear sum against one head)
    must come from one preset, so a paper sweep finished for one of them alone does not count.
    ``found``: each name's :func:`completeness`, when the caller already has it.
    """
    if requested != "auto":
        return _choose_preset({}, requested)
    picks = {_choose_preset(found[n] if found is not None else completeness(n, root), "auto") for n in names}
    return picks.pop() if len(picks) == 1 else "book"
