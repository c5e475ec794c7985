"""Explicit key–query weights that solve RGR (chapter *constructions*; paper Sec. 4, 8, App. B).

Every construction here is one template (:mod:`rgr.theory.template`) with different ingredients:
a block split of the edges (one head per block), signature rows of width ``d_k``,
and an approximate inverse ``X_inv = X^T / mu`` of the embedding that maps the
one-hot-space templates back to model space.

With one-hot inputs ``X_inv = I`` and the scores are exact signature dot
products; with compressive embeddings (``d_model < m``) each query and key
picks up *leakage* from the other items of its block, the noise that Sec. 5
blames for the single-head penalty (see :mod:`rgr.theory.checks`).

The constructions, with the paper's names:

========================  =====================  ==========  ===========================
function                  paper                  signatures  threshold tau
========================  =====================  ==========  ===========================
construct_one_hot         Construction I, Alg 3  Bernoulli   (p + p^2) d_k / 2
construct_compressive     Construction II, Alg 1 Rademacher  d_k / 2
construct_softmax         Algorithm 2            Rademacher  1/2 (softmax per head, summed)
construct_general_embed.  Algorithm 4            Bernoulli   (p + p^2) d_k / 2
construct_general_graph   Algorithm 5            Rademacher  d_k / 2
========================  =====================  ==========  ===========================

Each returns a :class:`rgr.theory.template.Construction`: weights as :class:`rgr.model.attention.QKWeights`
(the form trained models have, scored by :func:`rgr.model.attention.scores`), and a
frozen :class:`rgr.theory.template._ConstructionInfo` holding the constants actually used.
Widths are chosen either directly (``d_k=``) or as ``d_k = ceil(C (ln m)^a)``
(``C=``; ``a = 1``, or ``a = 2`` for softmax). Logarithms are natural.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..task.embeddings import gaussian_unit, one_hot, random_binary
from ..task.graphs import Graph
from .bounds import DEFAULT_C
from .template import (
    Construction,
    assemble,
    check_X,
    matching_blocks,
    matching_edges,
    max_degree,
    resolve_dk,
    split_blocks,
)


@dataclass(frozen=True, eq=False)
class _EmbeddingFamily:
    """An embedding with the de-embedding scale ``mu`` and block size ``B`` Algorithm 4 uses."""

    X: torch.Tensor
    mu: float
    B: int
    p_B: float | None = None  # feature rate of random binary embeddings


def gaussian_family(m: int, d_model: int, seed: int, B: int | None = None) -> _EmbeddingFamily:
    """Gaussian unit-norm rows (Corollary B.6): ``mu = 1``; ``B = d_model`` unless given.

    Corollary B.6 allows ``B <= c d_model / ln m``; the specialised proof of
    Construction II attains ``B = d_model``, the default here.
    """
    X = gaussian_unit(m, d_model, seed)
    return _EmbeddingFamily(X, 1.0, int(B or d_model))


def binary_family(
    m: int, d_model: int, seed: int, c_p: float = 1.0, c_B: float = 1.0
) -> _EmbeddingFamily:
    """Sparse random binary rows (Corollary B.7).

    Entries are Bernoulli(``p_B``) with ``p_B = min(1/2, c_p ln m / d_model)``;
    ``mu = d_model p_B`` (the expected squared row norm, so ``u_i(i) ~ 1``);
    block size ``B = max(1, round(c_B d_model / ln m))``.
    """
    p_B = min(0.5, c_p * math.log(m) / d_model)
    X = random_binary(m, d_model, seed, p=p_B)
    B = max(1, round(c_B * d_model / math.log(m)))
    return _EmbeddingFamily(X, d_model * p_B, int(B), p_B)


def construct_one_hot(
    graph: Graph,
    *,
    d_k: int | None = None,
    C: float | None = None,
    p: float = 0.25,
    signature: str = "bernoulli",
    seed: int = 0,
) -> Construction:
    """Construction I (Algorithm 3): one head on one-hot inputs ``x_i = e_i``.

    Keys are signature rows, ``k_j = w_j``; queries copy their target's key,
    ``q_i = w_{pi(i)}``. Bernoulli(p) signatures use ``tau = (p + p^2) d_k / 2``
    (App. B.1); ``signature="rademacher"`` gives Sec. 4's sketch with
    ``tau = d_k / 2``.
    """
    e = matching_edges(graph, "Construction I")
    if C is None:
        C = DEFAULT_C["one-hot" if signature == "bernoulli" else "one-hot-rademacher"]
    d_k = resolve_dk(d_k, C, graph.m, 1)
    if signature == "bernoulli":
        tau = (p + p * p) / 2 * d_k
    else:
        tau, p = d_k / 2, None
    X = one_hot(graph.m)
    return assemble(
        "max", graph, X, 1.0, [e], d_k, signature, p, tau, seed, 1
    )


def construct_compressive(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["compressive"],
    h: int | None = None,
    seed: int = 0,
) -> Construction:
    """Construction II (Algorithm 1): permutations under compressive embeddings.

    Rademacher signatures, de-embedding through ``X^T`` (``mu = 1``),
    ``tau = d_k / 2``. By default ``h = ceil(m' / d_model)`` heads, each serving
    a block of at most ``d_model`` consecutive sources (``B = d_model``);
    ``h=`` overrides the split (``h = 1``: the single-head design of Sec. 5).
    """
    e = matching_edges(graph, "Construction II")
    X = check_X(X, graph.m)
    d_model = int(X.shape[1])
    d_k = resolve_dk(d_k, C, graph.m, 1)
    blocks = split_blocks(e, h, d_model)
    return assemble(
        "max", graph, X, 1.0, blocks, d_k, "rademacher", None,
        d_k / 2, seed, len(blocks),
    )


def construct_softmax(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["softmax"],
    h: int | None = None,
    seed: int = 0,
) -> Construction:
    """Algorithm 2: Construction II's weights read by per-head softmax, summed over heads.

    Score (i, j) is ``sum_k softmax_j(S^k_ij / sqrt(d_k))`` over the context,
    thresholded at ``tau = 1/2``; width ``d_k = ceil(C (ln m)^2)``. Theorem 8.1
    asks the context to be long against the head count,
    ``ell >= C_ell max(h, ln m)``, because every non-owner head adds about
    ``1/ell`` of background mass to every pair.
    """
    e = matching_edges(graph, "Algorithm 2")
    X = check_X(X, graph.m)
    d_k = resolve_dk(d_k, C, graph.m, 2)
    blocks = split_blocks(e, h, int(X.shape[1]))
    return assemble(
        "softmax", graph, X, 1.0, blocks, d_k, "rademacher", None,
        0.5, seed, len(blocks),
    )


def construct_general_embedding(
    graph: Graph,
    family: _EmbeddingFamily,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["general-embedding"],
    p: float = 1 / 20,
    B: int | None = None,
    seed: int = 0,
) -> Construction:
    """Algorithm 4: permutations under a general embedding family.

    Bernoulli(p) signatures (``p <= 1/20`` in Theorem B.5),
    ``tau = (p + p^2) d_k / 2``, approximate inverse ``X^T / mu`` and
    ``h = ceil(m / B)`` heads; ``mu`` and ``B`` come from the family
    (:func:`gaussian_family`, :func:`binary_family`) unless ``B`` is given.
    """
    e = matching_edges(graph, "Algorithm 4")
    X = check_X(family.X, graph.m)
    d_k = resolve_dk(d_k, C, graph.m, 1)
    B = int(B or family.B)
    blocks = split_blocks(e, None, B)
    tau = (p + p * p) / 2 * d_k
    return assemble(
        "max", graph, X, family.mu, blocks, d_k, "bernoulli", p,
        tau, seed, math.ceil(graph.m / B),
    )


def construct_general_graph(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["general-graph"],
    block_size: int | None = None,
    seed: int = 0,
) -> Construction:
    """Algorithm 5: any directed graph, compressive Gaussian embeddings.

    The bipartite incidence graph is edge-coloured with exactly ``Delta``
    colours (:func:`rgr.theory.template.bipartite_edge_coloring`); each colour class
    (a matching) is cut into blocks of at most ``block_size = d_model`` edges,
    one head per block: at most ``ceil(m'/d_model) + Delta`` heads (the
    ``h_bound`` recorded). Rademacher signatures shared by all heads,
    ``tau = d_k / 2``.
    """
    if graph.m_edges == 0:
        raise ValueError("Algorithm 5 needs a graph with at least one edge")
    X = check_X(X, graph.m)
    d_model = int(X.shape[1])
    d_k = resolve_dk(d_k, C, graph.m, 1)
    bs = int(block_size or d_model)
    blocks = matching_blocks(graph.edges, bs)
    h_bound = math.ceil(graph.m_edges / bs) + max_degree(graph.edges)
    return assemble(
        "max", graph, X, 1.0, blocks, d_k, "rademacher", None,
        d_k / 2, seed, h_bound,
    )
