"""Numerical checks of the paper's results the first chapters did not illustrate (chapter *constructions*).

- :func:`algorithm1_onset`: where Algorithm 1's d_k -> infinity limit starts to separate, against
  d_model / ln m (Theorem 4.1's ``d_model >= c_0 ln m``; read by
  :func:`rgr.results.constructions.onset_crossover`);
- :func:`prop84_table`: Proposition 8.4, softmax with one head against h = m/d_model heads at equal D_K;
- :func:`sparse_binary_table`: Corollary B.7 with sparse binary embeddings (feature rate
  ``p_B = c_p ln m / d_model`` well below 1/2) under compression m > d_model;
- :func:`bounded_skew_table`: Corollary B.10, r-regular graphs with ``h_0 = ceil(m'/d_model)`` heads;
- :func:`theorem81_tables`: Theorem 8.1 (below).

Each returns tidy DataFrames; :mod:`rgr.results.constructions` reads them.

**Theorem 8.1 at work: Algorithm 2 against head width, inside and outside the proof's bounds.**
:func:`theorem81_tables` computes what the chapter's Theorem 8.1 figure and tables show, at a
:class:`~rgr.studies.construction_sweeps.ConstructionsPreset`: the width sweep (:func:`_width_sweep`), the theory
cell inside the proof's explicit bounds (:mod:`rgr.theory.theorem81`) and the repair cell. The chapter reads them with
:func:`rgr.results.constructions.paper_theory_finding` and draws them with :mod:`rgr.chapters.figures.constructions`.

Theorem 8.1 treats a non-owner head's logits ``L^k_ij = S^k_ij / sqrt(d_k)`` as O(1) sub-Gaussian
variables over the signatures, so that its softmax adds about ``1/ell`` to every pair. With the
``X^T`` de-embedding that is not so. Write ``u_i = x_i X^T`` (row i of the Gram matrix). Averaged
over the Rademacher signatures, head k's score is

    E_sig S^k_ij = d_k * sum_{s in V_k} u_i(s) u_j(pi_k(s)),

whose one-hot part is the planted signal ``d_k [i in V_k, j = pi(i)]`` and whose rest,
the *leakage mean*, is fixed by the embedding. After the ``1/sqrt(d_k)`` scaling it enters the
logit as ``sqrt(d_k) * M^k_ij`` with ``M^k_ij = sum_s u_i(s) u_j(pi_k(s)) - signal``: it does not
average away, it *grows* with the width (its closed-form sd: :func:`rgr.theory.theorem81.leakage_logit_sd`).
Once this spread is large, the softmax of a head with no planted target concentrates on one distractor and the
threshold 1/2 fails. The repair: keep the leakage logit bounded over every row and context,
``d_k (B/d_model^2 + 1/d_model) ln m <= c``, i.e. ``d_k <= c d_model / ln m`` at ``B = d_model``; with
``d_k >= C (ln m)^2`` that needs ``d_model >= (C/c)(ln m)^3`` instead of ``c_0 ln m``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd
import torch

from ..model.attention import head_scores
from ..task.contexts import sample
from ..task.embeddings import gaussian_unit
from ..task.graphs import Graph, permutation_graph, regular_graph
from ..theory.checks import evaluate_contexts, limit_separation
from ..theory.constructions import (
    binary_family,
    construct_general_embedding,
    construct_general_graph,
    construct_softmax,
)
from ..theory.template import Construction
from ..theory.theorem81 import inside_rows, kappa, leakage_logit_sd, theorem81_bounds, theorem81_widths
from .construction_search import build, min_dk

if TYPE_CHECKING:  # the chapter's preset, for the annotation only
    from .construction_sweeps import ConstructionsPreset


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
    ``C_eff = D_K d_model / (m' ln m')``, the constant of the corollary's ``Theta(m' log m' / d_model)``, and
    ``n_seeds``, the seeds the width search ran on (its d_k -> infinity screen reads the first only).
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
                         C_eff=math.nan if D_K is None else D_K / form, n_seeds=len(seeds)))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# Theorem 8.1: Algorithm 2's width sweep


def leakage_logits(c: Construction, items: torch.Tensor) -> torch.Tensor:
    """``sqrt(d_k) M^k`` on contexts ``items`` (n, ell): (n, h, ell, ell), float64.

    ``M^k_ij = sum_{s in V_k} u_i(s) u_j(pi_k(s)) - 1[i in V_k, j = pi_k(i)]`` with ``u = X X^T``:
    the signature-averaged part of head k's logit that is not the planted signal.
    """
    X = c.X.double()
    Xc = X[items]  # (n, ell, d)
    out = []
    for blk in c.blocks:
        src, tgt = torch.from_numpy(blk[:, 0]), torch.from_numpy(blk[:, 1])
        Us = Xc @ X[src].T  # (n, ell, B): u_i(s)
        Ut = Xc @ X[tgt].T  # (n, ell, B): u_j(pi(s)), aligned with s
        M = Us @ Ut.transpose(1, 2)
        is_src = (items[:, :, None] == src.view(1, 1, -1)).double()
        planted = is_src @ (items[:, None, :] == tgt.view(1, -1, 1)).double()
        out.append(M - planted)
    return torch.stack(out, 1) * math.sqrt(c.info.d_k)


@dataclass(frozen=True)
class _SoftmaxFailures:
    """Algorithm 2 on ``n`` sampled contexts: wrong decisions at tau = 1/2, split by row and by cause.

    ``present`` / ``absent``: non-edge failures on rows whose target is / is not in the context;
    ``edge``: true edges at or below 1/2; ``*_non_owner``: failing non-edges whose largest single-head
    mass comes from a head that does not serve the row's source; ``*_no_leak``: failures of the same
    contexts when the leakage mean is subtracted from every logit (the counterfactual that removes
    only the term Theorem 8.1's proof treats as bounded).
    """

    n: int
    ell: int
    present: int
    absent: int
    edge: int
    present_non_owner: int
    absent_non_owner: int
    present_no_leak: int
    absent_no_leak: int
    edge_no_leak: int
    n_present: int
    n_absent: int
    leak_sd: float  # measured sd of the leakage logit, generic pairs of non-owner heads


def softmax_failures(c: Construction, graph: Graph, *, seed: int = 0, n: int = 200, ell: int = 16) -> _SoftmaxFailures:
    """Count Algorithm 2's failures on ``n`` contexts and attribute them (see :class:`_SoftmaxFailures`)."""
    if c.info.aggregation != "softmax":
        raise ValueError("softmax_failures needs an Algorithm 2 construction (construct_softmax)")
    batch = sample(graph, seed, n, ell=ell, stream="test")
    items, y = batch.items, batch.labels
    L = head_scores(c.X[items][None], c.weights.W_Q, c.weights.W_K)[0].double() / math.sqrt(c.info.d_k)
    leak = leakage_logits(c, items)
    P, P0 = torch.softmax(L, -1), torch.softmax(L - leak, -1)
    A, A0 = P.sum(1), P0.sum(1)
    has = y.any(-1, keepdim=True).expand_as(y)
    owner = torch.from_numpy(c.head_of(0))[items]  # (n, ell): the head serving each source
    top = P.argmax(1)  # (n, ell, ell): head with the largest mass on the pair
    non_owner = top != owner[:, :, None]
    bad, bad0 = (A >= 0.5) & ~y, (A0 >= 0.5) & ~y
    generic = _generic_mask(c, items, owner)
    return _SoftmaxFailures(
        n=n, ell=ell,
        present=int((bad & has).sum()), absent=int((bad & ~has).sum()), edge=int(((A <= 0.5) & y).sum()),
        present_non_owner=int((bad & has & non_owner).sum()), absent_non_owner=int((bad & ~has & non_owner).sum()),
        present_no_leak=int((bad0 & has).sum()), absent_no_leak=int((bad0 & ~has).sum()),
        edge_no_leak=int(((A0 <= 0.5) & y).sum()),
        n_present=int((~y & has).sum()), n_absent=int((~y & ~has).sum()),
        leak_sd=float(leak[generic].std()) if generic.any() else math.nan,
    )


def _generic_mask(c: Construction, items: torch.Tensor, owner: torch.Tensor) -> torch.Tensor:
    """(n, h, ell, ell): pairs where head k does not own i, j is not its target, i != j."""
    h = c.info.h
    th = torch.from_numpy(c.head_of(1))[items]
    ks = torch.arange(h).view(1, h, 1, 1)
    mask = (owner[:, None, :, None] != ks) & (th[:, None, None, :] != ks)
    ell = items.shape[1]
    eye = torch.eye(ell, dtype=torch.bool).view(1, 1, ell, ell)
    return mask & ~eye


def _width_sweep(
    cells: list[tuple[int, int]], d_ks: list[int], ells: list[int], seeds: list[int], n: int = 200
) -> pd.DataFrame:
    """:func:`softmax_failures` over cells (m, d_model), widths, context lengths and seeds.

    Algorithm 2 with ``h = ceil(m / d_model)`` heads on a derangement and Gaussian unit-norm
    embeddings (Theorem 8.1's setup). One row per (cell, d_k, ell, seed) with ``n``, the counts, their
    rates, ``kappa`` and the predicted leakage sd ``sqrt(d_k B) / d_model``.
    """
    for name, v in (("cells", cells), ("d_ks", d_ks), ("ells", ells), ("seeds", seeds)):
        if not len(v):
            raise ValueError(f"{name} must not be empty")
    rows = []
    for m, d_model in cells:
        if m < 2 or d_model < 1:
            raise ValueError(f"cells must hold (m >= 2, d_model >= 1), got {(m, d_model)}")
        h = math.ceil(m / d_model)
        for seed in seeds:
            g, X = permutation_graph(m, seed), gaussian_unit(m, d_model, seed)
            for d_k in d_ks:
                c = construct_softmax(g, X, d_k=int(d_k), h=h, seed=seed)
                for ell in ells:
                    f = softmax_failures(c, g, seed=seed, n=n, ell=ell)
                    row = dict(m=m, d_model=d_model, h=h, B=c.info.B, d_k=int(d_k), ell=ell, seed=seed, n=n,
                               kappa=kappa(int(d_k), m, d_model),
                               leak_sd_predicted=leakage_logit_sd(int(d_k), c.info.B, d_model))
                    row.update({k: getattr(f, k) for k in f.__dataclass_fields__ if k not in ("n", "ell")})
                    row["present_rate"] = f.present / max(f.n_present, 1)
                    row["absent_rate"] = f.absent / max(f.n_absent, 1)
                    rows.append(row)
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Theorem81Tables:
    """What the chapter shows of Theorem 8.1 (rows of :func:`_width_sweep`).

    ``sweep``: the preset's width cells and the repair cell, with ``inside`` (the row meets the proof's explicit
    bounds); ``gap``: the theory cell (``width_cells[0]``) at widths and context lengths inside those bounds;
    ``repair``: the repair cell's rows (the sufficient condition's leakage half, ``kappa <= 1``, at small widths).
    """

    sweep: pd.DataFrame
    gap: pd.DataFrame
    repair: pd.DataFrame


def theorem81_tables(p: ConstructionsPreset, seed: int = 0, n_widths: int = 3) -> _Theorem81Tables:
    """Compute :class:`_Theorem81Tables` at a preset's sizes.

    The gap table holds two context lengths: the shortest the proof allows (``p.width_n`` contexts) and
    ``m / 4``, far inside it (a fifth as many contexts: each is 16 times the work).
    """
    m, d_model = p.width_cells[0]
    b = theorem81_bounds(m, d_model)
    widths = theorem81_widths(m, d_model, n_widths)
    long_ell = max(b.ell_min + 1, m // 4)
    gap = pd.concat([_width_sweep([(m, d_model)], widths, [b.ell_min], [seed], n=p.width_n),
                     _width_sweep([(m, d_model)], widths, [long_ell], [seed], n=max(10, p.width_n // 5))],
                    ignore_index=True)
    repair = _width_sweep([p.repair_cell], list(p.repair_d_ks), list(p.width_ells), [seed], n=p.width_n)
    sweep = pd.concat([_width_sweep(list(p.width_cells), list(p.width_d_ks), list(p.width_ells), [seed], n=p.width_n),
                       repair], ignore_index=True)
    sweep["inside"] = inside_rows(sweep)
    return _Theorem81Tables(sweep=sweep, gap=gap, repair=repair)
