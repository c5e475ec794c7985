"""How the chapter *Does it replicate?* gathers its rows, and the Table 1 comparison it computes.

- :data:`GROUPS` and :func:`sources_of` — every experiment on its own preset, and each comparison of
  :data:`rgr.results.replication.table.JOINT` at one preset;
- :func:`table1_view` — the paper's Table 1 beside the book's d_k* and its noise interval.

The frames the chapter only displays live in :mod:`rgr.chapters.replication_frames`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from .budget import SETTLED, settled_source
from .gpt2_decision import gpt2_source
from .rows import Source, reached
from .seed_bootstrap import cell_noise, seed_draws
from .table import JOINT
from .value_decision import LONG, long_source
from .verdicts import table1

__all__ = ["OWN", "GROUPS", "EXPERIMENTS", "sources_of", "table1_view"]

OWN = ("base", "lambda8", "regular", "softmax", "value", "gpt2")  # each read on its own preset
GROUPS: dict[str, tuple[str, ...]] = {**{n: (n,) for n in OWN}, **JOINT}
EXPERIMENTS: tuple[str, ...] = tuple(dict.fromkeys(n for g in GROUPS.values() for n in g))  # every table read


def sources_of(loaded: Mapping[str, Mapping[str, object]],
               root: Path | None = None) -> tuple[dict[str, Source], dict[str, dict[str, Source]]]:
    """From the loaded :data:`GROUPS` (objects with ``name``, ``preset`` and ``runs``, e.g.
    :class:`rgr.chapters.loading.ExperimentData`): the sources each on its own preset, and the joint comparisons.
    With ``base`` loaded, the settled-threshold extension at its preset
    (:func:`rgr.results.replication.budget.settled_source`); with ``value`` loaded, the decision run ``value_long``
    is read from data/ (under ``root``) too, at the preset the chapter asked for and without a smoke fallback
    (:func:`rgr.results.replication.value_decision.long_source`)."""
    src = lambda d: Source(d.name, d.preset, d.runs)  # noqa: E731
    own = {k: src(g[k]) for k, g in loaded.items() if k not in JOINT}
    joint = {k: {n: src(d) for n, d in g.items()} for k, g in loaded.items() if k in JOINT}
    if "gpt2" in loaded:  # the compressive preset, once complete (rgr.results.replication.gpt2_decision)
        g = loaded["gpt2"]["gpt2"]
        own["gpt2"] = gpt2_source(own["gpt2"], getattr(g, "requested", "") or g.preset, root)
    if "base" in loaded:  # the settled-threshold extension, at the preset the base grid is read at
        own[SETTLED] = settled_source(own["base"].preset, root)
    if "value" in loaded:  # the decision run, at the preset the chapter asked for (smoke where value fell back to it)
        v = loaded["value"]["value"]
        own[LONG] = long_source("smoke" if v.preset == "smoke" else getattr(v, "requested", "") or v.preset, root)
    return own, joint


def table1_view(base: Source) -> pd.DataFrame:
    """:func:`rgr.results.replication.verdicts.table1` of the base grid's runs, with each cell's 95% noise interval of
    d_k*."""
    if not len(base.runs):
        return table1(pd.DataFrame(columns=["m", "d_model", "r", "D_K_star", "h_star", "d_k_star"]),
                      pd.DataFrame(columns=["m", "d_model", "r", "lo", "hi"]))
    d = reached(seed_draws(base.runs))
    return table1(d.cells, cell_noise(d, "d_k_star"))
