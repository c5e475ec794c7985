"""Sweeps over the constructions: success rates, limits, interference (chapter *constructions*).

- :func:`success_rate` sweeps ``C`` in ``d_k = ceil(C (ln m)^a)`` over seeds;
- :func:`separation_panels`, :func:`softmax_background`, :func:`coloring_table` and
  :func:`limit_phase` give the chapter's score panels, Algorithm 2's background, Algorithm 5's
  packing and where the d_k -> infinity template separates;
- :func:`leakage_noise` and :func:`head_split` measure Sec. 5's interference
  mechanism.

:class:`ConstructionsPreset` sizes them and the chapter's other studies per preset (smoke / book / paper).
Constructions are made by name with :func:`rgr.studies.construction_search.build`, which also holds the success
criteria and the smallest-width search behind ``data/constructions.csv``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd
import torch

from ..protocol import pick_preset
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
from ..theory.constructions import construct_compressive, construct_softmax
from ..theory.template import Construction, bipartite_edge_coloring
from .construction_search import build


@dataclass(frozen=True)
class ConstructionsPreset:
    """Chapter *constructions*: the sweeps of section 4 and the checks of the paper's other results."""

    # sweeps (this module)
    onehot_m: tuple[int, ...]  # success rate against C, one-hot inputs
    onehot_seeds: int
    book_cell: tuple[int, int]  # (m, d_model) of a book-grid cell
    theory_cell: tuple[int, int]  # (m, d_model) where the constants of the theory apply
    phase_m: int  # the d_k -> infinity limit against d_model and B
    phase_d: tuple[int, ...]
    leak: tuple[int, int, int]  # (m, d_model, d_k) of the leakage sweep
    leak_seeds: int
    split_D_K: tuple[int, ...]  # equal budget D_K split into h heads
    split_h: tuple[int, ...]
    softmax_m: int  # Algorithm 2 on one-hot inputs
    softmax_h: tuple[int, ...]
    ells: tuple[int, ...]
    gun_cell: tuple[int, int, int]  # (m, d_model, B) of Algorithm 4
    regular_r: int
    # Theorem 8.1 (rgr.studies.theory_checks): Algorithm 2's width sweep, first cell = the theory cell
    width_cells: tuple[tuple[int, int], ...]
    width_d_ks: tuple[int, ...]
    repair_cell: tuple[int, int]  # a cell where d_k <= d_model / ln m holds for d_k >= 2 (ln m)^2-ish
    repair_d_ks: tuple[int, ...]
    width_ells: tuple[int, ...]
    width_n: int  # contexts per (cell, d_k, ell)
    # the other checks (rgr.studies.theory_checks)
    onset_ms: tuple[int, ...]  # Algorithm 1 onset
    onset_ratios: tuple[float, ...]  # d_model / ln m
    onset_seeds: int
    prop84_cell: tuple[int, int]
    prop84_D_Ks: tuple[int, ...]
    prop84_ell: int
    rbce_cell: tuple[int, int]  # Corollary B.7 (m > d_model)
    rbce_c_ps: tuple[float, ...]
    rbce_c_Bs: tuple[float, ...]
    skew_cell: tuple[int, int]  # Corollary B.10 (m, d_model)
    skew_rs: tuple[int, ...]

    @classmethod
    def named(cls, preset: str) -> ConstructionsPreset:
        return pick_preset(CONSTRUCTIONS, preset, "constructions")


def _ratios(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(lo + step * i for i in range(n + 1))


CONSTRUCTIONS: dict[str, ConstructionsPreset] = {
    "smoke": ConstructionsPreset(
        onehot_m=(64,), onehot_seeds=2, book_cell=(128, 32), theory_cell=(256, 256), phase_m=64, phase_d=(16, 64),
        leak=(128, 16, 32), leak_seeds=1, split_D_K=(256, 1024), split_h=(1, 2, 4), softmax_m=64, softmax_h=(1, 4),
        ells=(16, 32), gun_cell=(128, 128, 8), regular_r=2,
        width_cells=((256, 128),), width_d_ks=(48, 216, 864), repair_cell=(512, 256), repair_d_ks=(32,),
        width_ells=(16,), width_n=40,
        onset_ms=(64, 256), onset_ratios=_ratios(20, 50, 10), onset_seeds=2,
        prop84_cell=(256, 64), prop84_D_Ks=(256, 1024), prop84_ell=32, rbce_cell=(256, 128), rbce_c_ps=(4.0,),
        rbce_c_Bs=(0.03,), skew_cell=(256, 128), skew_rs=(2,),
    ),
    "book": ConstructionsPreset(
        onehot_m=(64, 256), onehot_seeds=8, book_cell=(256, 32), theory_cell=(1024, 512), phase_m=256,
        phase_d=(16, 32, 64, 128, 256), leak=(256, 32, 64), leak_seeds=2, split_D_K=(1024, 2048, 4096),
        split_h=(1, 2, 8), softmax_m=256, softmax_h=(1, 2, 4, 8, 16), ells=(16, 64), gun_cell=(256, 256, 16),
        regular_r=2,
        width_cells=((1024, 512), (256, 128)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 864), width_ells=(16, 64), width_n=100,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 2.5), onset_seeds=6,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 1024, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(4.0, 8.0), rbce_c_Bs=(0.03, 0.125), skew_cell=(1024, 512), skew_rs=(2, 4),
    ),
    "paper": ConstructionsPreset(
        onehot_m=(64, 256, 1024), onehot_seeds=20, book_cell=(256, 32), theory_cell=(1024, 512), phase_m=512,
        phase_d=(16, 32, 64, 128, 256, 512), leak=(512, 32, 64), leak_seeds=5, split_D_K=(512, 1024, 2048, 4096),
        split_h=(1, 2, 4, 8), softmax_m=512, softmax_h=(1, 2, 4, 8, 16, 32), ells=(16, 64, 128),
        gun_cell=(256, 256, 16), regular_r=4,
        width_cells=((1024, 512), (256, 128), (1024, 256)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 432, 864), width_ells=(16, 64), width_n=200,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 1.25), onset_seeds=20,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 512, 1024, 2048, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(2.0, 4.0, 8.0), rbce_c_Bs=(0.01, 0.03, 0.06, 0.125),
        skew_cell=(1024, 512), skew_rs=(2, 4),
    ),
}


def success_rate(
    name: str,
    m: int,
    d_model: int,
    Cs: list[float],
    seeds: list[int] | range,
    **kw,
) -> pd.DataFrame:
    """One row per (C, seed): whether the construction at ``d_k = ceil(C (ln m)^a)`` separates at its tau
    (softmax: on the target-containing rows of sampled contexts).

    Columns: construction, m, d_model, C, d_k, h, D_K, seed, success, and
    ``slack`` (all-pairs ``min(min_edge - tau, tau - max_non_edge) / tau`` for
    max-over-heads; NaN for softmax).
    """
    rows = []
    for C in Cs:
        for s in seeds:
            c, g = build(name, m, d_model, s, C=C, **kw)
            if c.info.aggregation == "max":
                sep = separation(c)
                ok, slack = sep.separated, sep.slack / c.info.tau
            else:
                ok, slack = evaluate_contexts(c, g, seed=s, n=500, ell=16).present.separated, float("nan")
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
        c = construct_softmax(g, one_hot(m), h=h, d_k=d_k, seed=seed)
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
    dpad = torch.cat([delta, torch.zeros(m, 1, dtype=delta.dtype)], 1)  # column m is zero
    Wpad = torch.cat([W, torch.zeros(1, d_k, dtype=W.dtype)], 0)  # row m is zero
    src, tgt = c.padded_blocks()
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
