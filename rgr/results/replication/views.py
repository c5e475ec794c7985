"""The tables the chapter *Does it replicate?* shows besides the verdict table, and how it gathers its rows.

- :data:`GROUPS` and :func:`sources_of` — every experiment on its own preset, and each comparison of
  :data:`rgr.results.replication.table.JOINT` at one preset;
- :func:`used_frame` — the rows behind every number: per comparison, experiment, preset, runs and seeds;
- :func:`table1_view` — the paper's Table 1 beside the book's d_k* and its noise interval;
- :func:`readings_frame` — a reading of every fit row (every configuration tested, the other log base);
- :func:`arithmetic_frame` — the Table 1 arithmetic (:mod:`rgr.results.replication.paper_arithmetic`), one line per fit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ...catalog import preset_completeness
from ..stats import within
from . import reported as rep
from .budget import SETTLED, settled_source
from .gpt2_decision import gpt2_source
from .paper_arithmetic import ArithmeticCheck
from .rows import ClaimRow, Source, reached
from .seed_bootstrap import cell_noise, seed_draws
from .table import JOINT
from .value_decision import LONG, long_source
from .verdicts import table1

__all__ = ["OWN", "GROUPS", "EXPERIMENTS", "sources_of", "used_frame", "table1_view", "readings_frame",
           "arithmetic_frame", "longer_frame"]

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


def used_frame(loaded: Mapping[str, Mapping[str, object]], smoke: bool = False) -> pd.DataFrame:
    """One line per (comparison, experiment): the preset read, its runs and seeds, and the fraction of its planned
    runs present in data/ (None for smoke data)."""
    rows = []
    for key, g in loaded.items():
        for n, d in g.items():
            rows.append(dict(read_for=key if key in JOINT else "own", experiment=n, preset=d.preset, runs=len(d.runs),
                             seeds=int(d.runs["seed"].nunique()) if len(d.runs) else 0,
                             complete=None if smoke or d.preset == "smoke" else preset_completeness(n, d.preset)))
    return pd.DataFrame(rows)


def table1_view(base: Source) -> pd.DataFrame:
    """:func:`rgr.results.replication.verdicts.table1` of the base grid's runs, with each cell's 95% noise interval of
    d_k*."""
    if not len(base.runs):
        return table1(pd.DataFrame(columns=["m", "d_model", "r", "D_K_star", "h_star", "d_k_star"]),
                      pd.DataFrame(columns=["m", "d_model", "r", "lo", "hi"]))
    d = reached(seed_draws(base.runs))
    return table1(d.cells, cell_noise(d, "d_k_star"))


def readings_frame(rows: list[ClaimRow], name: str) -> pd.DataFrame:
    """The fit rows with a reading whose name starts with ``name``: the claim, the paper's value, the verdict's value
    and interval, the reading's value and interval, and whether the paper's value lies in each."""
    out = []
    for r in rows:
        got = [x for x in r.readings if x.name.startswith(name)]
        if not got:
            continue
        x, paper = got[0], rep.claim(r.key).value
        iv = lambda lo, hi: f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) and math.isfinite(hi) else "—"  # noqa: E731
        out.append(
            dict(key=r.key, claim=rep.claim(r.key).claim, paper=rep.claim(r.key).paper,
                 verdict_reading=f"{r.value:.3g} {iv(r.lo, r.hi)}", paper_inside=within(paper, r.lo, r.hi),
                 reading=f"{x.value:.3g} {iv(x.lo, x.hi)}", reading_inside=x.holds, what=x.name)
        )
    return pd.DataFrame(
        out, columns=["key", "claim", "paper", "verdict_reading", "paper_inside", "reading", "reading_inside", "what"]
    )


def arithmetic_frame(checks: tuple[ArithmeticCheck, ...] | list[ArithmeticCheck]) -> pd.DataFrame:
    """One line per fit, log base and R² kind: the assignments tried, those giving the paper's slope (and intercept),
    those giving its R² too, and the nearest R² where none does."""
    return pd.DataFrame([dict(fit=c.fit, log=c.base, r2=c.r2_kind, cells=c.cells, assignments=c.assignments,
                              slope_matches=c.slope_matches, reproduce=c.matches,
                              nearest_r2=None if c.nearest is None else round(c.nearest[2], 3)) for c in checks])


def longer_frame(rows: list[ClaimRow]) -> pd.DataFrame:
    """The rows read again with a longer step budget (:mod:`rgr.results.replication.budget`): the claim, the
    protocol's verdict, the budget, the book's value there, the status that reading would get, and whether it is
    settled."""
    out = [dict(claim=rep.claim(r.key).name, protocol=r.verdict.status, budget=f"{r.longer.budget}x",
                book_there=r.longer.book, status_there=r.longer.status, settled="yes" if r.longer.settled else "no")
           for r in rows if r.longer is not None]
    return pd.DataFrame(out, columns=["claim", "protocol", "budget", "book_there", "status_there", "settled"])
