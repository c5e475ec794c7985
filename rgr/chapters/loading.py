"""What every data chapter does first: load its tables and say where they came from.

:func:`load_experiment` reads one experiment's rows of a preset from data/;
:func:`load_experiments` reads several, each on its own preset or, for experiments compared
run against run, on one shared preset. A chapter's ``preset = "auto"`` (the default) becomes
``paper`` where that sweep is complete and ``book`` otherwise (:func:`rgr.catalog.resolve_preset`).
Every table goes through the one strict loader (:func:`rgr.catalog.load`),
E7 and the constructions included.
When the table (or that preset's rows) is missing it says how to produce it
and runs the ``smoke`` preset into a temporary folder instead, so the chapter
still executes end to end — clearly labelled as smoke data. A table that is
present but corrupt is an error, never a silent fallback.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd
import torch
from IPython.display import Markdown

from ..catalog import completeness, get, load, resolve_preset, table_path
from ..experiments.futility import futile_stops
from ..results.stats import seeds_per_cell
from ..store import TableError


@dataclass(frozen=True)
class ExperimentData:
    """One experiment's rows as a chapter uses them, and how they were obtained."""

    name: str
    preset: str  # the preset the rows belong to (``smoke`` after a fallback)
    runs: pd.DataFrame
    fallback_reason: str | None = None  # why the smoke preset stands in, if it does
    requested: str = ""  # the chapter's `preset` ("auto", or a preset asked for by name); "" = as `preset`
    why: str = ""  # for "auto": why this preset (each preset's completeness)

    @property
    def is_fallback(self) -> bool:
        return self.fallback_reason is not None


def load_experiments(names: Sequence[str], preset: str = "auto", device: str = "cpu", root: Path | None = None,
                     together: bool = False) -> dict[str, ExperimentData]:
    """:func:`load_experiment` for each name; ``together=True`` puts them all on one preset (:func:`load_groups`).

    Use ``together`` for experiments compared run against run: "auto" then gives "paper" only
    when every one of them has a complete paper sweep.
    """
    groups = load_groups({"": tuple(names)} if together else {n: (n,) for n in names}, preset, device, root)
    return {n: d for g in groups.values() for n, d in g.items()}


def load_groups(groups: Mapping[str, Sequence[str]], preset: str = "auto", device: str = "cpu",
                root: Path | None = None) -> dict[str, dict[str, ExperimentData]]:
    """Each group's experiments on one preset (a group of one name: that experiment on its own preset), each table
    read once per preset and each sweep's completeness once."""
    names = list(dict.fromkeys(n for g in groups.values() for n in g))
    found = {n: completeness(n, root) for n in names} if preset == "auto" else {}
    cache: dict[tuple[str, str], ExperimentData] = {}
    out: dict[str, dict[str, ExperimentData]] = {}
    for key, group in groups.items():
        chosen = resolve_preset(group, preset, root, found or None)
        said = "; ".join(f"`{n}`: " + (", ".join(f"{p} {c:.0%}" for p, c in found.get(n, {}).items()) or "no rows")
                         for n in group)
        listed = ", ".join(f"`{n}`" for n in group[:-1]) + f" and `{group[-1]}`"
        if preset != "auto":
            why = ""
        elif len(group) == 1:
            why = f"paper rows where that sweep is complete, else book. Planned runs present: {said}"
        else:
            why = (f"one preset for {listed}, which are compared run against run: paper only where all their paper "
                   f"sweeps are complete. Planned runs present: {said}")
        for n in group:
            if (n, chosen) not in cache:
                cache[(n, chosen)] = _load(n, chosen, device, root, preset, why)
        out[key] = {n: replace(cache[(n, chosen)], why=why) for n in group}
    return out


def load_experiment(name: str, preset: str = "auto", device: str = "cpu", root: Path | None = None) -> ExperimentData:
    """Rows of ``preset`` from data/<name>.csv ("auto": paper where complete, else book); smoke, run now, when
    missing."""
    return load_groups({name: (name,)}, preset, device, root)[name][name]


def _load(name: str, preset: str, device: str, root: Path | None, requested: str, why: str) -> ExperimentData:
    """Rows of the resolved ``preset``, or the smoke fallback (see the module docstring)."""
    try:
        df = load(name, preset, root)
        if len(df):
            return ExperimentData(name, preset, df, None, requested, why)
        reason = f"{table_path(name, root=root).name} has no rows of preset {preset!r}"
    except TableError as e:
        if table_path(name, root=root).is_file():
            raise  # present but unreadable: never plot half a table
        reason = str(e)
    # the one place a chapter trains: imported here, so a chapter that finds its tables never loads the engine
    from ..experiments.runner import run_sweep
    from ..trainers import trainer

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny stacked matmuls: one thread is fastest (see README)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run_sweep(trainer(name), "smoke", device, root=Path(tmp), progress=False, log=lambda s: None)
            df = load(name, "smoke", Path(tmp))
    finally:
        torch.set_num_threads(threads)
    return ExperimentData(name, "smoke", df, reason, requested, why)


def _commits(df: pd.DataFrame, most: int = 3) -> str:
    """The code versions that wrote the rows: all of them when few, else how many and the first and last."""
    by_date = df.sort_values("date")["git_commit"]
    names = list(dict.fromkeys(by_date))  # in order of first use
    if len(names) <= most:
        return ("commit " if len(names) == 1 else "commits ") + ", ".join(names)
    return f"{len(names)} commits, from {names[0]} to {by_date.iloc[-1]}"


def _seeds_words(df: pd.DataFrame) -> str:
    """How many seeds the rows train: "10 seeds", or "3–10 seeds a cell" where the (m, d_model) cells differ (the
    lambda = 8 diagonal's largest points run 3); "" when the rows have no seed."""
    if "seed" not in df or not len(df):
        return ""
    per = seeds_per_cell(df)
    lo, hi = int(per.min()), int(per.max())
    return f"{lo}–{hi} seeds a cell" if lo != hi else f"{hi} seed{'s' if hi != 1 else ''}"


def provenance_note(data: ExperimentData) -> Markdown:
    """A visible note: which preset, device, code version and dates produced the rows, and how many of them the
    futility rule stopped (:func:`rgr.experiments.futility.futile_stops`; a rule the paper's protocol does not have)."""
    df = data.runs
    devices = ", ".join(sorted(df["device_name"].unique()))
    commits = _commits(df)
    dates = f"{df['date'].min()[:10]} to {df['date'].max()[:10]}"
    seeds = _seeds_words(df)
    seeds = f" ({seeds})" if seeds else ""
    lines = [f"**Data:** `{data.name}` — {len(df)} runs of preset `{data.preset}`{seeds} on {devices}; "
             f"rgr {', '.join(sorted(df['rgr_version'].unique()))} at {commits}; {dates}."]
    if data.requested == "auto":
        lines.append(f" Chosen by `preset = \"auto\"`: {data.why}.")
    stops = futile_stops(df)
    if stops.stopped:
        lines.append(f"\n\n> **Futility stopping, not in the paper's protocol.** {stops.stopped:,} of {stops.runs:,} "
                     f"runs were stopped early by the futility rule (README, *Futility stopping*: added to this "
                     f"preset after the paper's numbers were released, to save CPU time); a stopped run keeps its F1 "
                     f"and counts as failing. By cell: {stops.cell_list}. {stops.false} of them stopped at a point "
                     f"where a sibling seed reached the F1 target.")
    if data.is_fallback:
        lines.append(f"\n\n> **Smoke data, not results.** {data.fallback_reason}. The runs above were made just now "
                     f"with the seconds-long `smoke` preset so the chapter executes; produce the real table with "
                     f"`python -m rgr sweep {data.name} --preset book` (CPU) or `--preset paper --device cuda` (GPU).")
    elif data.preset == "book":
        what = get(data.name).book_scope
        lines.append(f"\n\n> **Reduced grid.** These are the `book` preset's runs: {what} (see `data/SCHEMA.md`) "
                     f"so that a 2-core CPU finishes them. The paper-scale protocol is "
                     f"`python -m rgr sweep {data.name} --preset paper --device cuda`.")
    return Markdown("".join(lines))


def scope_words(data: ExperimentData) -> str:
    """What the rows span, for a chapter's limits paragraph: "the book preset trains 2 seeds and head counts up
    to 16 at 3 cells, with 1 refinement round" (the rounds from the preset's grid, where the sweep has one).
    Glued as text, so no Markdown in it (backticks would show as such)."""
    df = data.runs
    cells = len(df[["m", "d_model"]].drop_duplicates())
    said = (f"the {data.preset} preset trains {_seeds_words(df)} and head counts up to {int(df['h'].max())} "
            f"at {cells} cell{'s' if cells != 1 else ''}")
    grid = getattr(get(data.name), "grid", None)
    if grid is None:
        return said
    rounds = grid(data.preset).refine_rounds
    return f"{said}, with {rounds} refinement round{'s' if rounds != 1 else ''}"


def reproduce_note(experiments: list[str], notebook: str) -> Markdown:
    """The exact commands that regenerate a chapter's data at paper scale, then the chapter."""
    cmds = "\n".join(f"python -m rgr sweep {e} --preset paper --device cuda" for e in experiments)
    return Markdown(
        f"```bash\n{cmds}\npapermill book/{notebook} /tmp/{notebook} -p preset paper\n```"
    )
