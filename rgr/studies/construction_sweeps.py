"""Sweeps over the constructions: success rates, limits, interference (chapter *constructions*).

- :func:`success_rate` sweeps ``C`` in ``d_k = ceil(C (ln m)^a)`` over seeds;
- :func:`separation_panels`, :func:`softmax_background`, :func:`coloring_table` and
  :func:`limit_phase` give the chapter's score panels, Algorithm 2's background, Algorithm 5's
  packing and where the d_k -> infinity template separates;
- :func:`leakage_noise` and :func:`head_split` measure Sec. 5's interference
  mechanism.

:class:`rgr.studies.presets.ConstructionsPreset` sizes them per preset. Constructions are made by name with
:func:`rgr.studies.construction_search.build`, which also holds the success criteria and the smallest-width
search behind ``data/constructions.csv``.
"""

from __future__ import annotations

import math

import pandas as pd
import torch

from ..task.embeddings import gaussian_unit, one_hot
from ..task.graphs import Graph, permutation_graph
from ..theory.checks import (
    all_pair_scores,
    evaluate_contexts,
    leakage_matrix,
    limit_separation,
    score_samples,
    separation,
    separation_from_scores,
)
from ..theory.coloring import bipartite_edge_coloring
from ..theory.constructions import construct_compressive, construct_softmax
from ..theory.template import Construction
from .construction_search import build, passes

__all__ = [
    "success_rate",
    "limit_phase",
    "separation_panels",
    "softmax_background",
    "coloring_table",
    "leakage_noise",
    "head_split",
]


def success_rate(
    name: str,
    m: int,
    d_model: int,
    Cs: list[float],
    seeds: list[int] | range,
    *,
    criterion: str = "tau",
    **kw,
) -> pd.DataFrame:
    """One row per (C, seed): whether the construction at ``d_k = ceil(C (ln m)^a)`` succeeds.

    Columns: construction, m, d_model, C, d_k, h, D_K, seed, success, and
    ``slack`` (all-pairs ``min(min_edge - tau, tau - max_non_edge) / tau`` for
    max-over-heads; NaN for softmax).
    """
    rows = []
    for C in Cs:
        for s in seeds:
            c, g = build(name, m, d_model, s, C=C, **kw)
            if c.info.aggregation == "max" and criterion != "f1":
                sep = separation(c)
                ok = sep.separated if criterion == "tau" else sep.margin > 0
                slack = sep.slack / c.info.tau
            else:
                ok, slack = passes(c, g, criterion, seed=s), float("nan")
            rows.append(
                dict(construction=name, m=m, d_model=c.info.d_model, C=float(C), d_k=c.info.d_k,
                     h=c.info.h, D_K=c.info.D_K, seed=int(s), success=bool(ok), slack=float(slack))
            )
    return pd.DataFrame(rows)


def separation_panels(
    specs: list[tuple[str, str, int, int, int, dict]],
) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Score samples and a separation summary for a list of constructions.

    ``specs``: (title, name, m, d_model, seed, build kwargs). Returns the
    panels for :func:`rgr.chapters.figures.constructions.plot_score_separation` and one
    summary row per construction: h, d_k, D_K, B, tau, separated and
    slack / tau (for softmax: over target-containing context rows), F1 on
    test contexts.
    """
    panels, rows = {}, []
    for title, name, m, d, seed, kw in specs:
        c, g = build(name, m, d, seed, **kw)
        if c.info.aggregation == "max":
            S = all_pair_scores(c)
            sep = separation_from_scores(S, torch.from_numpy(c.adjacency()), c.info.tau)
            chk = evaluate_contexts(c, g, seed=seed, S_all=S)
        else:
            S = None
            chk = evaluate_contexts(c, g, seed=seed)
            sep = chk.present
        panels[title] = score_samples(c, g, seed=seed, S_all=S)
        rows.append(dict(construction=title, m=m, d_model=c.info.d_model, h=c.info.h, d_k=c.info.d_k,
                         D_K=c.info.D_K, B=c.info.B, tau=round(c.info.tau, 4), separated=sep.separated,
                         slack=sep.slack / c.info.tau, f1=chk.f1))
    return panels, pd.DataFrame(rows)


def softmax_background(m: int, hs: list[int], ells: list[int], seed: int = 0, n: int = 200,
                       d_k: int | None = None) -> pd.DataFrame:
    """Algorithm 2's weights on one-hot inputs with h heads: what non-owner heads add.

    On target-containing rows, each non-owner head has a zero query, hence a
    uniform softmax: it adds exactly 1/ell to every pair, so the largest
    non-edge score should be about (h - 1)/ell (``predicted``) and the
    threshold 1/2 fails once that reaches 1/2 (Theorem 8.1's ell >= C_ell h).
    ``d_k``: the head width (None: Algorithm 2's default ``ceil(2 (ln m)^2)``).
    """
    g = permutation_graph(m, seed)
    rows = []
    for h in hs:
        c = construct_softmax(g, one_hot(m), h=h, d_k=d_k, seed=seed, embedding="one-hot")
        for ell in ells:
            chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
            rows.append(dict(m=m, h=h, ell=ell, d_k=c.info.d_k, predicted=(h - 1) / ell,
                             max_non_edge=chk.present.max_non_edge, min_edge=chk.present.min_edge,
                             separated=chk.present.separated, absent_max=chk.absent.max_non_edge,
                             absent_false_positives=chk.absent.non_edge_failures, f1=chk.f1))
    return pd.DataFrame(rows)


def coloring_table(graph: Graph, block_size: int) -> pd.DataFrame:
    """Algorithm 5's packing of a graph: one row per colour class (edges, blocks, largest block)."""
    colour = bipartite_edge_coloring(graph.edges)
    rows = []
    for c in range(int(colour.max()) + 1):
        n = int((colour == c).sum())
        rows.append(dict(colour=c, edges=n, blocks=math.ceil(n / block_size),
                         largest_block=math.ceil(n / math.ceil(n / block_size))))
    return pd.DataFrame(rows)


def limit_phase(
    name: str,
    m: int,
    d_models: list[int],
    block_sizes: list[int],
    seeds: list[int] | range,
    **kw,
) -> pd.DataFrame:
    """Where the d_k -> infinity template separates: one row per (d_model, B, seed).

    Columns ``slack`` and ``margin`` are in units of ``tau / d_k`` (so
    ``slack > 0``: the construction's own threshold separates every pair
    once d_k is large enough; ``margin > 0``: some threshold does), plus
    ``min_edge`` and ``max_non_edge`` in the same units.
    """
    rows = []
    for d in d_models:
        for B in block_sizes:
            if B > m:
                continue
            for s in seeds:
                c, _ = build(name, m, d, s, d_k=1, B=B, **kw)
                lim = limit_separation(c)
                t = lim.tau
                rows.append(dict(construction=name, m=m, d_model=d, B=c.info.B, h=c.info.h, seed=int(s),
                                 slack=lim.slack / t, margin=lim.margin / t, min_edge=lim.min_edge / t,
                                 max_non_edge=lim.max_non_edge / t))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# Sec. 5: interference


def _n3_stats(c: Construction, max_elems: int = 2**24) -> dict[str, float]:
    """Largest |N3|, largest and RMS |N3 - E[N3|X]|, largest |E[N3|X]| over all (i, j, k).

    Batched over heads (Rademacher signatures: ``E[N3 | X] = d_k delta_src delta_tgt^T``).
    """
    if c.info.signature != "rademacher":
        raise ValueError("leakage statistics are implemented for Rademacher signatures")
    delta = torch.from_numpy(leakage_matrix(c))
    W = torch.from_numpy(c.signatures)
    m, d_k = delta.shape[0], W.shape[1]
    Bmax = max(len(b) for b in c.blocks)
    dpad = torch.cat([delta, torch.zeros(m, 1, dtype=delta.dtype)], 1)  # column m is zero
    Wpad = torch.cat([W, torch.zeros(1, d_k, dtype=W.dtype)], 0)  # row m is zero
    src = torch.full((len(c.blocks), Bmax), m, dtype=torch.long)
    tgt = src.clone()
    for k, b in enumerate(c.blocks):
        src[k, : len(b)] = torch.from_numpy(b[:, 0])
        tgt[k, : len(b)] = torch.from_numpy(b[:, 1])
    out = dict(n3_max=0.0, n3_fluct_max=0.0, n3_mean_max=0.0)
    sq, count = 0.0, 0
    step = max(1, max_elems // (m * m))
    for k0 in range(0, len(c.blocks), step):
        Ds = dpad[:, src[k0 : k0 + step]].permute(1, 0, 2)  # (hc, m, B)
        Dt = dpad[:, tgt[k0 : k0 + step]].permute(1, 0, 2)
        Wt = Wpad[tgt[k0 : k0 + step]]  # (hc, B, d_k)
        n3 = (Ds @ Wt) @ (Dt @ Wt).transpose(1, 2)  # P Q^T
        mean = d_k * Ds @ Dt.transpose(1, 2)
        fl = n3 - mean
        out["n3_max"] = max(out["n3_max"], float(n3.abs().max()))
        out["n3_fluct_max"] = max(out["n3_fluct_max"], float(fl.abs().max()))
        out["n3_mean_max"] = max(out["n3_mean_max"], float(mean.abs().max()))
        sq += float((fl * fl).sum())
        count += fl.numel()
    out["n3_fluct_rms"] = math.sqrt(sq / count)
    return out


def leakage_noise(
    m: int, d_model: int, d_k: int, block_sizes: list[int], seeds: list[int] | range
) -> pd.DataFrame:
    """The leakage term N3 of Construction II as a function of the block size B.

    For each seed and B (``h = ceil(m/B)`` heads), over all pairs (i, j) and
    heads k: the largest |N3|, the largest and the RMS fluctuation
    ``|N3 - E[N3 | X]|`` (over signatures), and the largest conditional mean
    ``|E[N3 | X]|``; beside Sec. 5's scale ``(B / d_model) sqrt(d_k ln m)``
    (``predicted``; the RMS should track ``(B / d_model) sqrt(d_k)``) and the
    mean term's scale ``d_k sqrt(B ln m) / d_model`` (``predicted_mean``,
    Lemma B.3(3) at block size B).
    """
    rows = []
    for s in seeds:
        g, X = permutation_graph(m, s), gaussian_unit(m, d_model, s)
        for B in block_sizes:
            c = construct_compressive(g, X, d_k=d_k, h=math.ceil(m / B), seed=s)
            rows.append(dict(m=m, d_model=d_model, d_k=d_k, B=c.info.B, h=c.info.h, seed=int(s), **_n3_stats(c),
                             predicted=c.info.B / d_model * math.sqrt(d_k * math.log(m)),
                             predicted_mean=d_k * math.sqrt(c.info.B * math.log(m)) / d_model))
    return pd.DataFrame(rows)


def head_split(
    m: int,
    d_model: int,
    D_Ks: list[int],
    hs: list[int],
    seeds: list[int] | range,
    *,
    n_contexts: int = 500,
    ell: int = 16,
) -> pd.DataFrame:
    """Construction II at equal budget D_K split into different head counts h (d_k = D_K / h).

    One row per (D_K, h, seed): all-pairs ``margin / d_k`` and ``slack / tau``,
    whether all pairs separate at tau, the d_k -> infinity limit slack, and
    micro-F1 on ``n_contexts`` test contexts.
    """
    rows = []
    for s in seeds:
        g, X = permutation_graph(m, s), gaussian_unit(m, d_model, s)
        for D_K in D_Ks:
            for h in hs:
                if D_K % h:
                    continue
                c = construct_compressive(g, X, d_k=D_K // h, h=h, seed=s)
                S = all_pair_scores(c)
                sep = separation_from_scores(S, torch.from_numpy(c.adjacency()), c.info.tau)
                lim = limit_separation(c)
                f1 = evaluate_contexts(c, g, seed=s, n=n_contexts, ell=ell, S_all=S).f1
                rows.append(dict(m=m, d_model=d_model, D_K=D_K, h=h, d_k=D_K // h, B=c.info.B, seed=int(s),
                                 separated=sep.separated, margin=sep.margin / c.info.d_k,
                                 slack=sep.slack / c.info.tau, limit_slack=lim.slack / lim.tau, f1=f1))
    return pd.DataFrame(rows)
