"""Algorithm 2 at the trained models' cells (chapter *softmax*; paper Sec. 8, Theorem 8.1).

:func:`softmax_at_cells` builds the softmax construction at each ``(m, d_model)`` cell of the learned
sweeps and scores it on sampled contexts against ``ell``. :class:`SoftmaxCellsTrainer` computes the rows of
data/softmax_cells.csv with it (``python -m rgr sweep softmax_cells``; what the table is:
:data:`rgr.experiments.softmax_cells_table.SOFTMAX_CELLS`), which the chapter reads;
:func:`rgr.results.softmax.softmax_cells_summary` reads one row per cell out of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch

from ..experiments.runner import Sweepable
from ..experiments.softmax_cells_table import Run, SoftmaxCellsTable
from ..task.embeddings import gaussian_unit, one_hot
from ..task.graphs import permutation_graph
from ..theory.checks import evaluate_contexts
from ..theory.constructions import construct_softmax


def softmax_at_cells(
    cells: list[tuple[int, int]],
    d_ks: list[int],
    ells: list[int],
    seeds: list[int],
    n: int = 200,
) -> pd.DataFrame:
    """Algorithm 2 at trained models' cells (chapter *softmax*), as context F1 against ``ell``.

    For each ``(m, d_model)`` the construction is built twice on the same
    derangement, with ``h = ceil(m / d_model)`` heads (blocks of d_model edges,
    Theorem 8.1's split): on Gaussian unit-norm embeddings of width d_model at
    every width in ``d_ks`` (``inputs = "gaussian"``), and on one-hot inputs,
    where the theorem's embedding precondition holds, at its default width
    ``ceil(2 (ln m)^2)`` (``inputs = "one-hot"``). Each is scored on ``n``
    sampled contexts (rho = 0.5) per ``ell``. ``condition`` says whether
    ``ell >= max(h, ln m)``, the context-length condition with ``C_ell = 1``;
    the non-owner heads' background (h - 1) / ell (``background``) is what it
    keeps below tau = 1/2.
    """
    for name, v in (("d_ks", d_ks), ("ells", ells), ("seeds", seeds)):
        if not len(v):
            raise ValueError(f"{name} must not be empty")
    if min(ells) < 2:
        raise ValueError(f"ells must be >= 2, got {min(ells)}")
    rows = []
    for m, d_model in cells:
        if m < 2 or d_model < 1:
            raise ValueError(f"cells must hold (m >= 2, d_model >= 1), got {(m, d_model)}")
        h = math.ceil(m / d_model)
        for seed in seeds:
            g = permutation_graph(m, seed)
            X = gaussian_unit(m, d_model, seed)
            made = [("gaussian", construct_softmax(g, X, d_k=d_k, h=h, seed=seed)) for d_k in d_ks]
            made.append(("one-hot", construct_softmax(g, one_hot(m), h=h, seed=seed)))
            for inputs, c in made:
                for ell in ells:
                    if ell > m:
                        continue
                    chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
                    rows.append(dict(m=m, d_model=d_model, inputs=inputs, h=c.info.h, d_k=c.info.d_k,
                                     D_K=c.info.D_K, ell=ell, seed=seed, f1=chk.f1,
                                     separated=chk.present.separated, background=(c.info.h - 1) / ell,
                                     condition=ell >= max(c.info.h, math.log(m))))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SoftmaxCellsTrainer(Sweepable):
    """The softmax_cells table as :func:`rgr.experiments.runner.run_sweep` computes it: one (cell, seed) a stack,
    by :func:`softmax_at_cells` at the preset's widths and lengths, each row the one its run names. The study is CPU
    code: it runs, and its rows say it ran, on the CPU whatever device the command names."""

    table: SoftmaxCellsTable

    def train_stack(self, configs: list[Run], preset: str, device: torch.device, **options) -> list[dict]:
        return super().train_stack(configs, preset, torch.device("cpu"), **options)

    def stack_key(self, run: Run) -> tuple:
        return run.m, run.d_model, run.seed, run.n_contexts

    def train_rows(self, runs: list[Run], preset: str, device: torch.device) -> list[dict]:
        P = self.table.presets[preset]
        made: dict[tuple, dict] = {}
        for m, d_model, seed, n in dict.fromkeys(self.stack_key(r) for r in runs):
            df = softmax_at_cells([(m, d_model)], list(P.d_ks), list(P.ells), [seed], n=n)
            for row in df.to_dict("records"):
                d_k = row["d_k"] if row["inputs"] == "gaussian" else None
                made[(m, d_model, seed, n, row["inputs"], d_k, row["ell"])] = {**row, "n_contexts": n}
        return [dict(made[(*self.stack_key(r), r.inputs, r.d_k, r.ell)]) for r in runs]
