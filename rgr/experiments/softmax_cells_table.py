"""data/softmax_cells.csv: Algorithm 2 at the trained softmax models' cells, as an experiment of the one runner.

Chapter *softmax* reads it through the one loader (:func:`rgr.chapters.loading.load_experiment`, on the preset its
``softmax`` rows come from). For each ``(m, d_model)`` cell of the ``softmax`` sweep's preset, each seed, each input
kind (Gaussian unit-norm embeddings of width d_model at every width in ``d_ks``; one-hot inputs at the theorem's
width) and each context length ``ell <= m``, a row gives the construction's context micro-F1 on sampled contexts
(:func:`rgr.studies.softmax_cells.softmax_at_cells`, which computes it).

:data:`SOFTMAX_CELLS` is a :class:`rgr.store.Table`: one run is one row, keyed by its fields and the preset; the
rows of one (cell, seed) form one stack (they share the graph and the embeddings).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pandas as pd

from ..store import Column, RowKey, Schema, field_key


@dataclass(frozen=True)
class Preset:
    """Where Algorithm 2 is built and how it is scored: the ``softmax`` sweep's cells of the same preset."""

    cells: tuple[tuple[int, int], ...]
    d_ks: tuple[int, ...]  # widths tried on Gaussian embeddings
    ells: tuple[int, ...]  # context lengths (those above m are skipped)
    seeds: tuple[int, ...]
    n_contexts: int  # sampled contexts per (construction, ell)


_SCORING = dict(d_ks=(16, 64, 256), ells=(4, 8, 16, 32, 64, 128), seeds=(0, 1), n_contexts=200)
PRESETS: dict[str, Preset] = {
    "smoke": Preset(cells=((16, 8),), **_SCORING),
    "book": Preset(cells=((64, 16), (64, 32), (128, 32)), **_SCORING),
    "paper": Preset(cells=((64, 16), (64, 32), (128, 32), (256, 32)), **_SCORING),
}


@dataclass(frozen=True)
class Run:
    """One row: the construction at one cell and seed on one kind of inputs, scored at one context length."""

    m: int
    d_model: int
    seed: int
    inputs: str  # "gaussian" | "one-hot"
    d_k: int | None  # the Gaussian width asked for; None for one-hot (the theorem's width)
    ell: int
    n_contexts: int


def _schema() -> Schema:
    pos = dict(low=1)
    cols = [
        Column("m", "int", "number of items", low=2),
        Column("d_model", "int", "embedding width", **pos),
        Column("inputs", "str", "`gaussian` (unit-norm embeddings of width d_model) or `one-hot` (orthogonal)",
               choices=("gaussian", "one-hot")),
        Column("h", "int", "heads, ceil(m / d_model) (Theorem 8.1's split)", **pos),
        Column("d_k", "int", "per-head width (one-hot: the theorem's ceil(2 (ln m)^2))", **pos),
        Column("D_K", "int", "h * d_k", **pos),
        Column("ell", "int", "context length", low=2),
        Column("seed", "int", "seed of the graph, the embeddings and the sampled contexts", low=0),
        Column("n_contexts", "int", "sampled contexts (rho = 0.5)", **pos),
        Column("f1", "float", "context micro-F1 at tau = 1/2", low=0, high=1),
        Column("separated", "bool", "whether every edge scores above every non-edge on the contexts"),
        Column("background", "float", "(h - 1) / ell, the non-owner heads' background", low=0),
        Column("condition", "bool", "ell >= max(h, ln m), Theorem 8.1's context condition with C_ell = 1"),
        Column("stack_size", "int", "rows computed together (one cell and seed)", **pos),
        Column("wall_time_s", "float", "wall time of the stack divided by its rows", low=0),
    ]
    fields = tuple(f.name for f in dataclasses.fields(Run))

    def key(r: dict) -> str:
        run = Run(**{f: r[f] for f in fields if f != "d_k"}, d_k=r["d_k"] if r["inputs"] == "gaussian" else None)
        return field_key(run, r["preset"])

    return Schema("softmax_cells", tuple(cols), key=RowKey.per_row((*fields, "preset"), key))


SCHEMA = _schema()


@dataclass(frozen=True)
class SoftmaxCellsTable:
    """What the softmax_cells table is (:class:`rgr.store.Table`). It is computed by
    :class:`rgr.studies.softmax_cells.SoftmaxCellsTrainer`."""

    name: str = "softmax_cells"
    spec: str = "Sec. 8, Thm 8.1"
    description: str = "Algorithm 2 at the softmax sweep's cells: context F1 against ell"
    shardable: bool = False
    book_scope: str = "the book preset's three softmax cells (the paper preset adds m = 256)"

    presets = PRESETS  # class attributes, not fields (rgr.store.Table)
    schema = SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None, shard: tuple[int, int] = (0, 1)) -> list[Run]:
        P = PRESETS[preset]
        return [Run(m=m, d_model=d, seed=seed, inputs=inputs, d_k=d_k, ell=ell, n_contexts=P.n_contexts)
                for m, d in P.cells for seed in P.seeds
                for inputs, d_k in [*(("gaussian", d_k) for d_k in P.d_ks), ("one-hot", None)]
                for ell in P.ells if ell <= m]

    run_key = staticmethod(field_key)


SOFTMAX_CELLS = SoftmaxCellsTable()
