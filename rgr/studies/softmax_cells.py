"""Algorithm 2 at the trained models' cells (chapter *softmax*; paper Sec. 8, Theorem 8.1).

:func:`softmax_at_cells` builds the softmax construction at each ``(m, d_model)`` cell of the learned
sweeps and scores it on sampled contexts against ``ell``; :func:`softmax_cells_summary` reads one row per
cell out of it. The chapter imports both from here.
"""

from __future__ import annotations

import math

import pandas as pd

from ..protocol import F1_TARGET
from ..task.embeddings import gaussian_unit, one_hot
from ..task.graphs import permutation_graph
from ..theory.checks import evaluate_contexts
from ..theory.constructions import construct_softmax

__all__ = ["softmax_at_cells", "softmax_cells_summary"]


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
            made.append(("one-hot", construct_softmax(g, one_hot(m), h=h, seed=seed, embedding="one-hot")))
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


def softmax_cells_summary(df: pd.DataFrame, target: float = F1_TARGET) -> pd.DataFrame:
    """Per cell of :func:`softmax_at_cells`: the shortest context at which the one-hot construction's
    mean F1 reaches ``target`` (NaN if none), and the best mean F1 of the Gaussian-input construction
    over every width and length tried."""
    mean = df.groupby(["m", "d_model", "inputs", "d_k", "ell"], as_index=False).agg(f1=("f1", "mean"), h=("h", "first"))
    rows = []
    for (m, d), cell in mean.groupby(["m", "d_model"]):
        oh, ga = cell[cell.inputs == "one-hot"], cell[cell.inputs == "gaussian"]
        ok = oh[oh.f1 >= target]
        best = ga.loc[ga.f1.idxmax()] if len(ga) else None
        rows.append(dict(m=m, d_model=d, h=int(cell.h.iloc[0]), ln_m=math.log(m),
                         one_hot_min_ell=float(ok.ell.min()) if len(ok) else math.nan,
                         gaussian_best_f1=float(best.f1) if best is not None else math.nan,
                         gaussian_best_d_k=int(best.d_k) if best is not None else -1,
                         gaussian_best_ell=int(best.ell) if best is not None else -1))
    return pd.DataFrame(rows)
