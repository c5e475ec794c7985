"""Numerical checks of the paper's results the first chapters did not illustrate (chapter *constructions*).

- :func:`algorithm1_onset`: where Algorithm 1's d_k -> infinity limit starts to separate, against
  d_model / ln m (Theorem 4.1's ``d_model >= c_0 ln m``; read by
  :func:`rgr.results.constructions.onset_crossover`);
- :func:`prop84_table`: Proposition 8.4, softmax with one head against h = m/d_model heads at equal D_K;
- :func:`sparse_binary_table`: Corollary B.7 with sparse binary embeddings (feature rate
  ``p_B = c_p ln m / d_model`` well below 1/2) under compression m > d_model;
- :func:`bounded_skew_table`: Corollary B.10, r-regular graphs with ``h_0 = ceil(m'/d_model)`` heads.

Each returns a tidy DataFrame; :mod:`rgr.results.constructions` reads them.
"""

from __future__ import annotations

import math

import pandas as pd

from ..task.embeddings import gaussian_unit
from ..task.graphs import permutation_graph, regular_graph
from ..theory.checks import evaluate_contexts, limit_separation
from ..theory.constructions import (
    binary_family,
    construct_general_embedding,
    construct_general_graph,
    construct_softmax,
)
from .construction_search import build, min_dk

__all__ = ["algorithm1_onset", "prop84_table", "sparse_binary_table", "bounded_skew_table"]


def algorithm1_onset(ms: list[int], ratios: list[float], seeds: list[int]) -> pd.DataFrame:
    """Whether Algorithm 1's limit (blocks of d_model, tau = d_k/2) separates all pairs, per (m, d_model, seed).

    ``d_model = round(ratio * ln m)``; ``compressive`` says m > d_model (the regime the capacity
    argument is about; at d_model >= m Algorithm 1 has one head).
    """
    rows = []
    for m in ms:
        for ratio in ratios:
            d_model = max(1, round(ratio * math.log(m)))
            for s in seeds:
                c, _ = build("compressive", m, d_model, s, d_k=1)
                lim = limit_separation(c)
                rows.append(dict(m=m, d_model=d_model, ratio=d_model / math.log(m), seed=s, h=c.info.h,
                                 separated=bool(lim.slack > 0), slack=lim.slack / lim.tau, compressive=m > d_model))
    return pd.DataFrame(rows)


def prop84_table(m: int, d_model: int, D_Ks: list[int], seed: int = 0, n: int = 200, ell: int = 16) -> pd.DataFrame:
    """Algorithm 2 with h = 1 and h = ceil(m/d_model) heads at equal D_K (Proposition 8.4's comparison).

    Gaussian unit-norm embeddings, one derangement; per (h, D_K): d_k = D_K / h, F1 and the failures
    on target-present rows (Prop. 8.4's event: contexts that contain the target), and the predicted
    single/multi ratio ``(m/d_model)/ln m`` (Eq. 22).
    """
    g, X = permutation_graph(m, seed), gaussian_unit(m, d_model, seed)
    rows = []
    for h in sorted({1, math.ceil(m / d_model)}):
        for D_K in D_Ks:
            if D_K % h:
                continue
            c = construct_softmax(g, X, d_k=D_K // h, h=h, seed=seed)
            chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
            p = chk.present
            rows.append(dict(m=m, d_model=d_model, h=h, B=c.info.B, d_k=D_K // h, D_K=D_K, f1=chk.f1,
                             present_failures=p.edge_failures + p.non_edge_failures,
                             present_rate=(p.edge_failures + p.non_edge_failures) / (p.n_edges + p.n_non_edges),
                             predicted_ratio=(m / d_model) / math.log(m)))
    return pd.DataFrame(rows)


def sparse_binary_table(m: int, d_model: int, c_ps: list[float], c_Bs: list[float], seeds: list[int],
                        d_k_max: int = 4096) -> pd.DataFrame:
    """Algorithm 4 on sparse binary rows (Corollary B.7): smallest d_k and D_K per feature rate and block size.

    ``p_B = c_p ln m / d_model``, ``B = round(c_B d_model / ln m)``; Bernoulli(1/20) signatures,
    ``X_inv = X^T / (d_model p_B)``. ``limit_separated``: the d_k -> infinity limit (first seed);
    ``formula``: ``m (ln m)^2 / d_model``, the corollary's D_K up to its constant.
    """
    if m <= d_model:
        raise ValueError(f"Corollary B.7 is about compression: need m > d_model, got m={m}, d_model={d_model}")
    rows = []
    for c_p in c_ps:
        for c_B in c_Bs:
            fam = binary_family(m, d_model, seeds[0], c_p=c_p, c_B=c_B)
            c = construct_general_embedding(permutation_graph(m, seeds[0]), fam, d_k=1, seed=seeds[0])
            lim = limit_separation(c)
            dk, note = min_dk("rbce", m, d_model, seeds, B=fam.B, c_p=c_p, c_B=c_B, d_k_max=d_k_max)
            rows.append(dict(m=m, d_model=d_model, c_p=c_p, p_B=fam.p_B, ones_per_row=d_model * fam.p_B, c_B=c_B,
                             B=fam.B, h=c.info.h, limit_separated=bool(lim.slack > 0), d_k=dk,
                             D_K=None if dk is None else c.info.h * dk, note=note,
                             formula=m * math.log(m) ** 2 / d_model))
    return pd.DataFrame(rows)


def bounded_skew_table(m: int, rs: list[int], d_model: int, seeds: list[int], d_k_max: int = 4096) -> pd.DataFrame:
    """Algorithm 5 on r-regular graphs (Corollary B.10): heads built against ``h_0 = ceil(m'/d_model)``.

    One row per r: Delta, whether the skew condition ``Delta <= m'/d_model`` (33) holds, the heads
    built (colour classes cut into blocks of d_model), h_0, the general bound ``h_0 + Delta``, the
    d_k -> infinity limit's slack (first seed), the smallest d_k separating every pair at
    tau = d_k/2 on every seed (None if none up to ``d_k_max`` or the limit fails), D_K, and
    ``C_eff = D_K d_model / (m' ln m')``, the constant of the corollary's ``Theta(m' log m' / d_model)``.
    """
    rows = []
    for r in rs:
        g = regular_graph(m, r, seeds[0])
        c = construct_general_graph(g, gaussian_unit(m, d_model, seeds[0]), d_k=1, block_size=d_model, seed=seeds[0])
        lim = limit_separation(c)
        dk, note = min_dk("general-graph", m, d_model, seeds, r=r, B=d_model, d_k_max=d_k_max)
        form = g.m_edges * math.log(g.m_edges) / d_model
        D_K = None if dk is None else c.info.h * dk
        rows.append(dict(m=m, r=r, m_edges=g.m_edges, d_model=d_model, delta=c.info.delta,
                         skew_ok=c.info.delta <= g.m_edges / d_model, h=c.info.h,
                         h0=math.ceil(g.m_edges / d_model), h_bound=c.info.h_bound,
                         limit_slack=lim.slack / lim.tau, d_k=dk, D_K=D_K, note=note,
                         C_eff=math.nan if D_K is None else D_K / form))
    return pd.DataFrame(rows)
