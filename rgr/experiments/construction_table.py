"""data/constructions.csv: the smallest D_K of the explicit constructions, as an experiment of the one runner.

Chapters *constructions*, *lower bounds* and *permutation sweeps* read it, through the one strict loader
(:func:`rgr.catalog.load_complete` / :func:`rgr.catalog.load`). For each cell (a graph family at sizes m, d_model) the
table gives the smallest total key dimension ``D_K = h * d_k`` at which an
explicit construction (Algorithm 1 on permutation graphs, Algorithm 5 on
r-regular graphs) succeeds on every seed, under two rules for splitting the
edges into heads (``prescribed``: the paper's; ``best-split``: the best block
size) and two criteria (``tau``, ``margin``; :mod:`rgr.studies.construction_search`).

:data:`CONSTRUCTIONS` is a :class:`rgr.store.Table`: one run is one
(cell, rule, criterion) row, keyed by its fields, the first seed and the preset,
so ``python -m rgr constructions --preset smoke`` adds smoke rows beside the
book's and never replaces them; the rows of one cell form one stack (they share
the cached checks).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from ..store import Column, RowKey, Schema, field_key


@dataclass(frozen=True)
class Preset:
    """Sizes of the explicit-construction table."""

    base_m: tuple[int, ...]
    base_d: tuple[int, ...]
    regular_rs: tuple[int, ...]
    regular_m: int
    regular_d: int
    theory_cells: tuple[tuple[int, int], ...]
    n_seeds: int
    d_k_max: int


PRESETS: dict[str, Preset] = {
    "smoke": Preset(base_m=(64,), base_d=(16, 64), regular_rs=(2,), regular_m=64, regular_d=16, theory_cells=(),
                    n_seeds=1, d_k_max=256),
    "book": Preset(base_m=(64, 128, 256, 512), base_d=(16, 32, 64), regular_rs=(1, 2, 4, 8, 16, 32), regular_m=128,
                   regular_d=32, theory_cells=((1024, 512),), n_seeds=3, d_k_max=4096),
}


@dataclass(frozen=True)
class Run:
    """One row of the table: a cell, a head-split rule and a criterion, searched over seeds seed..seed+n_seeds-1."""

    construction: str  # "compressive" (Algorithm 1) | "general-graph" (Algorithm 5)
    m: int
    d_model: int
    r: int
    rule: str  # "prescribed" | "best-split"
    criterion: str  # "tau" | "margin"
    seed: int
    n_seeds: int
    d_k_max: int

    @property
    def graph(self) -> str:
        return "permutation" if self.r == 1 else "regular"

    @property
    def seeds(self) -> list[int]:
        return list(range(self.seed, self.seed + self.n_seeds))


def _schema() -> Schema:
    pos = dict(low=1)
    cols = [
        Column("construction", "str", "`compressive` (Algorithm 1 / Construction II) or `general-graph` (Algorithm 5)"),
        Column("graph", "str", "`permutation` (random derangement) or `regular` (directed r-regular)"),
        Column("m", "int", "number of items", **pos),
        Column("d_model", "int", "embedding width", **pos),
        Column("r", "int", "out-/in-degree (1 for permutations)", **pos),
        Column("m_edges", "int", "number of edges m'", **pos),
        Column("delta", "int", "maximum in-/out-degree Delta", **pos),
        Column("rule", "str", "`prescribed`: the paper's split; `best-split`: the best over block sizes B = 1, 2, 4, "
               "..., d_model (one head per block)"),
        Column("criterion", "str", "`tau`: every ordered pair on the right side of tau = d_k/2; `margin`: min edge "
               "score > max non-edge score"),
        Column("B", "int", "largest number of edges served by one head", nullable=True, **pos),
        Column("h", "int", "number of heads", nullable=True, **pos),
        Column("d_k", "int", "smallest per-head width found (empty: none up to d_k_max, or the limit fails)",
               nullable=True, **pos),
        Column("D_K", "int", "h * d_k (empty when not found)", nullable=True, **pos),
        Column("found", "bool", "whether a width was found"),
        Column("note", "str", "why not: `limit fails`, `searched up to d_k=...`, `no block size passes`",
               nullable=True),
        Column("C_eff", "float", "d_k / ln m, the constant C in d_k = C ln m actually needed", nullable=True, low=0),
        Column("seed", "int", "first seed (graph, embedding and signatures redrawn per seed)", low=0),
        Column("n_seeds", "int", "seeds per check; success must hold on all", **pos),
        Column("d_k_max", "int", "search cap on d_k", **pos),
        Column("stack_size", "int", "rows computed together (one cell)", **pos),
        Column("wall_time_s", "float", "wall time of the cell divided by its rows", low=0),
    ]
    fields = tuple(f.name for f in dataclasses.fields(Run))
    key = RowKey.per_row((*fields, "preset"), lambda r: field_key(Run(**{f: r[f] for f in fields}), r["preset"]))
    return Schema("constructions", tuple(cols), key=key)


SCHEMA = _schema()


def _runs(P: Preset, seed: int) -> list[Run]:
    cells = [("compressive", m, d, 1) for m in P.base_m for d in P.base_d]
    cells += [("general-graph", P.regular_m, P.regular_d, r) for r in P.regular_rs]
    cells += [("compressive", m, d, 1) for m, d in P.theory_cells]
    return [Run(construction=name, m=m, d_model=d, r=r, rule=rule, criterion=criterion, seed=seed, n_seeds=P.n_seeds,
                d_k_max=P.d_k_max)
            for name, m, d, r in cells for rule in ("prescribed", "best-split") for criterion in ("tau", "margin")]


@dataclass(frozen=True)
class ConstructionSweep:
    """What the constructions table is (:class:`rgr.store.Table`); ``seed``: the first seed. It is
    computed by :class:`rgr.studies.construction_trainer.ConstructionTrainer`."""

    seed: int = 0
    name: str = "constructions"
    spec: str = "Sec. 4, App. B"
    description: str = "smallest D_K of the explicit constructions (Algorithms 1 and 5)"
    shardable: bool = False
    book_scope: str = "the base grid, r-regular graphs and one theory-scale cell, three seeds each"

    presets = PRESETS  # class attributes, not fields (rgr.store.Table)
    schema = SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None, shard: tuple[int, int] = (0, 1)) -> list[Run]:
        return _runs(PRESETS[preset], self.seed)

    run_key = staticmethod(field_key)


CONSTRUCTIONS = ConstructionSweep()
