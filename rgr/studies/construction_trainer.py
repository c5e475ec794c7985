"""How data/constructions.csv is computed (:class:`ConstructionTrainer`): each row's search
(:mod:`rgr.studies.construction_search`), the rows of one cell as one stack (they share the cached checks).

What the table is (presets, runs, keys, schema) is :data:`rgr.experiments.construction_table.CONSTRUCTIONS`; this module
is imported by :mod:`rgr.trainers`, the command line and the chapters that compute rows live.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..experiments.construction_table import ConstructionSweep, Run
from ..experiments.runner import Sweepable
from .construction_search import build, min_dk, smallest_budget


def _result(run: Run) -> dict:
    """The search of one row: B, h, d_k, D_K, found, note."""
    if run.rule == "prescribed":
        c0, _ = build(run.construction, run.m, run.d_model, run.seed, d_k=1, r=run.r)
        dk, note = min_dk(run.construction, run.m, run.d_model, run.seeds, criterion=run.criterion,
                          d_k_max=run.d_k_max, r=run.r)
        return dict(B=c0.info.B, h=c0.info.h, d_k=dk, D_K=None if dk is None else c0.info.h * dk, found=dk is not None,
                    note=note or None)
    tab = smallest_budget(run.construction, run.m, run.d_model, run.seeds, criterion=run.criterion,
                          d_k_max=run.d_k_max, r=run.r)
    hit = tab[tab.found]
    if not len(hit):
        return dict(B=None, h=None, d_k=None, D_K=None, found=False, note="no block size passes")
    best = hit.loc[hit.D_K.astype(float).idxmin()]
    return dict(B=int(best.B), h=int(best.h), d_k=int(best.d_k), D_K=int(best.D_K), found=True, note=None)


@dataclass(frozen=True)
class ConstructionTrainer(Sweepable):
    """The constructions table as :func:`rgr.experiments.runner.run_sweep` computes it."""

    table: ConstructionSweep

    def stack_key(self, run: Run) -> tuple:
        return run.construction, run.m, run.d_model, run.r, run.seed  # one cell's rows share the cached checks

    def train_rows(self, runs: list[Run], preset: str, device: torch.device) -> list[dict]:
        rows = []
        for run in runs:
            c0, g0 = build(run.construction, run.m, run.d_model, run.seed, d_k=1, r=run.r)
            res = _result(run)
            c_eff = None if res["d_k"] is None else round(res["d_k"] / math.log(run.m), 3)
            rows.append(dict(construction=run.construction, graph=run.graph, m=run.m, d_model=run.d_model, r=run.r,
                             m_edges=g0.m_edges, delta=c0.info.delta, rule=run.rule, criterion=run.criterion, **res,
                             C_eff=c_eff, seed=run.seed, n_seeds=run.n_seeds, d_k_max=run.d_k_max))
        return rows


