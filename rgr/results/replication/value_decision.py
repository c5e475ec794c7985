"""The decision run ``value_long`` and the rows it lends the verdict ``value_d32_best`` (chapter *Does it replicate?*).

At m = 64, d_model = 32 the ``value`` sweep cut its top budget's runs with h >= 4 at the protocol's 20,000 steps,
their error still falling, so the paper's "lowest error at h = 4 and 8" is undecided there. ``value_long``
(:mod:`rgr.experiments.registry`; declared in data/README.md before it ran) reruns that cell with a ladder up to
D_K = 512 and an 80,000-step cutoff, a deviation from the protocol made only to settle that comparison.
:func:`deciding_runs` says when its rows decide the row (its table complete); :func:`long_source` reads them the
way every chapter reads a table (``preset = "auto"``: :func:`rgr.catalog.resolve_preset`), without a smoke fallback.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...catalog import get, load, resolve_preset, table_path
from ...store import TableError
from .rows import Source, basis

__all__ = ["LONG", "complete", "deciding_runs", "long_basis", "long_source"]

LONG = "value_long"


def complete(src: Source) -> bool:
    """Whether ``src`` holds every run its preset's planner asks for (the test of :func:`rgr.catalog.load_complete`,
    on the rows in hand). A preset the experiment does not have, or no rows: False."""
    sweep = get(src.name)
    if src.preset not in sweep.presets or not len(src.runs) or "run_key" not in src.runs:
        return False
    planned = {sweep.run_key(c, src.preset) for c in sweep.planned_runs(src.preset, src.runs)}
    return planned <= set(src.runs["run_key"])


def deciding_runs(long: Source | None, d_model: int = 32) -> pd.DataFrame | None:
    """``long``'s rows at ``d_model`` when its table is complete and has that width; None otherwise (the verdict
    then reads ``value`` as before)."""
    if long is None or not complete(long):
        return None
    rows = long.runs[long.runs.d_model == d_model]
    return rows.reset_index(drop=True) if len(rows) else None


def long_basis(long: Source, rows: pd.DataFrame) -> str:
    """What decided the row, for its basis: table, preset, seeds, heads, budgets and the cutoff, named as a
    deviation."""
    dks = f"D_K {int(rows.D_K.min())}–{int(rows.D_K.max())}"
    return (f"{LONG} {basis(Source('value', long.preset, rows))}, {dks}, {len(rows)} runs at d_model = "
            f"{int(rows.d_model.iloc[0])} (the protocol's cutoff is 20k: a longer one, declared before the run, to "
            "settle this comparison; data/README.md)")


def long_source(requested: str = "auto", root: Path | None = None) -> Source:
    """``value_long``'s rows at the preset ``requested`` resolves to; no rows when data/ has none (no smoke run)."""
    preset = resolve_preset([LONG], requested, root)
    try:
        runs = load(LONG, preset, root)
    except TableError:
        if table_path(LONG, root=root).is_file():
            raise  # present but unreadable: never a silent fallback
        runs = pd.DataFrame(columns=[c.name for c in get(LONG).schema.all_columns])  # no table yet: value decides
    return Source(LONG, preset, runs)
