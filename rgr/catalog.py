"""Every table of data/ by name, and the one way to read one (between the gpt2 and results wings).

``base``, ``lambda8``, ``lambda32``, ``regular``, ``softmax``, ``linear``,
``value`` (:mod:`rgr.experiments.registry`), ``gpt2`` (:data:`rgr.gpt2.experiment.GPT2`)
and ``constructions`` (:data:`rgr.experiments.construction_table.CONSTRUCTIONS`):
each is a :class:`rgr.experiments.runner.Sweepable` that ``python -m rgr sweep
<name>`` runs and :func:`load` reads, strictly (:func:`rgr.store.load_table`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .experiments.construction_table import CONSTRUCTIONS
from .experiments.registry import EXPERIMENTS
from .experiments.runner import Sweepable
from .experiments.tables import load_results, table_path
from .gpt2.experiment import GPT2
from .store import Schema

__all__ = ["SWEEPS", "get", "load", "schema_for_file", "table_path"]

SWEEPS: dict[str, Sweepable] = {**EXPERIMENTS, GPT2.name: GPT2, CONSTRUCTIONS.name: CONSTRUCTIONS}


def get(name: str) -> Sweepable:
    """The experiment whose table is data/<name>.csv."""
    if name not in SWEEPS:
        raise ValueError(f"experiment must be one of {sorted(SWEEPS)}, got {name!r}")
    return SWEEPS[name]


def load(name: str, preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """data/<name>.csv (shards merged) through the strict loader, optionally one preset's rows."""
    return load_results(get(name).schema, preset, root)


def schema_for_file(path: str | Path) -> Schema:
    """The schema of a table file from its name (``base.csv``, ``base.shard-0-of-4.csv``, ...)."""
    stem = Path(path).name.split(".")[0]
    if stem not in SWEEPS:
        raise ValueError(f"path: {path} is not a table of data/ (names: {sorted(SWEEPS)})")
    return SWEEPS[stem].schema
