"""Explicit key–query weights that solve RGR (chapter *constructions*; paper Sec. 4, 8, App. B).

Every construction here is one template with different ingredients:

1. cut the edge set into *blocks*, each a matching (every source and every
   target at most once) of at most ``B`` edges; block k is served by head k;
2. draw one signature row ``w_j`` (width ``d_k``) per target j, Rademacher
   (+-1) or Bernoulli(p) (0/1);
3. write the one-hot-space templates of head k: row i of ``W'_Q`` is
   ``w_{pi_k(i)}`` for sources i of the block, row j of ``W'_K`` is ``w_j`` for
   its targets (zero elsewhere);
4. map them back to model space through an approximate inverse of the
   embedding, ``X_inv = X^T / mu``: ``W_Q^k = X_inv W'_Q``, ``W_K^k = X_inv W'_K``.

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

Each returns a :class:`Construction`: weights as :class:`rgr.model.attention.QKWeights`
(the form trained models have, scored by :func:`rgr.model.attention.scores`), and a
frozen :class:`ConstructionInfo` holding the constants actually used.
Widths are chosen either directly (``d_k=``) or as ``d_k = ceil(C (ln m)^a)``
(``C=``; ``a = 1``, or ``a = 2`` for softmax). Logarithms are natural.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..model.attention import QKWeights
from ..task.embeddings import gaussian_unit, random_binary
from ..task.graphs import Graph
from ..task.rng import derive_seed
from .coloring import is_matching, matching_blocks, max_degree

__all__ = [
    "SIGNATURE_STREAM",
    "DEFAULT_C",
    "ConstructionInfo",
    "Construction",
    "EmbeddingFamily",
    "gaussian_family",
    "binary_family",
    "signatures",
    "dk_from_C",
    "theorem_B1_C",
    "construct_one_hot",
    "construct_compressive",
    "construct_softmax",
    "construct_general_embedding",
    "construct_general_graph",
]

# random stream of the signature matrix (rgr.task.rng.derive_seed accepts integer streams)
SIGNATURE_STREAM = 11

# Default width constants C in d_k = ceil(C (ln m)^a), measured with
# rgr.experiments.construction_sweeps.success_rate (chapter *constructions*): the smallest
# round value at which every one of 5-20 seeds separated all pairs, in the
# regime where the construction works at all:
#   one-hot             Bernoulli(1/4), m in {64, 256, 1024}, 20 seeds (proof: C > 171)
#   one-hot-rademacher  Sec. 4's +-1 variant, same sizes
#   compressive         Algorithm 1 at m = 1024, d_model = 512 (d_model ~ 74 ln m), 5 seeds
#   softmax             Algorithm 2 on one-hot inputs, target-containing context rows, 10 seeds
#   general-embedding   Algorithm 4, Gaussian family, Bernoulli(1/20), m = d_model = 256, B = 16
#   general-graph       Algorithm 5, as compressive
# At the book grid's d_model (16-64) the compressive constructions fail at
# every width; see rgr.theory.checks.limit_separation.
DEFAULT_C: dict[str, float] = {
    "one-hot": 80.0,
    "one-hot-rademacher": 20.0,
    "compressive": 160.0,
    "softmax": 2.0,
    "general-embedding": 250.0,
    "general-graph": 160.0,
}


@dataclass(frozen=True)
class ConstructionInfo:
    """The constants a construction actually used.

    ``C`` is None when ``d_k`` was given directly; ``B`` is the largest block
    (edges served by one head); ``h_bound`` is the paper's head count for the
    construction (``ceil(m/B)``, or ``ceil(m'/d_model) + Delta`` for Algorithm 5);
    ``h <= h_bound`` is the number of heads built.
    """

    name: str
    aggregation: str  # "max" or "softmax": how rgr.model.attention.scores must aggregate
    m: int
    m_edges: int
    d_model: int
    h: int
    d_k: int
    C: float | None
    log_power: int
    B: int
    h_bound: int
    delta: int
    signature: str  # "rademacher" or "bernoulli"
    p: float | None  # Bernoulli signature rate
    mu: float  # de-embedding scale: X_inv = X^T / mu
    tau: float
    embedding: str
    seed: int

    @property
    def D_K(self) -> int:
        return self.h * self.d_k


@dataclass(frozen=True, eq=False)
class Construction:
    """Weights (one run: R = 1) plus what built them: the embedding, the blocks, the signatures."""

    weights: QKWeights
    info: ConstructionInfo
    X: torch.Tensor  # (m, d_model) the embedding the weights were built for
    blocks: tuple[np.ndarray, ...]  # edges (|M_k|, 2) served by head k
    signatures: np.ndarray  # (m, d_k) signature rows w_j

    @property
    def edges(self) -> np.ndarray:
        return np.concatenate(self.blocks) if self.blocks else np.zeros((0, 2), np.int64)

    def adjacency(self) -> np.ndarray:
        a = np.zeros((self.info.m, self.info.m), dtype=bool)
        e = self.edges
        a[e[:, 0], e[:, 1]] = True
        return a


@dataclass(frozen=True, eq=False)
class EmbeddingFamily:
    """An embedding with the de-embedding scale ``mu`` and block size ``B`` Algorithm 4 uses."""

    name: str
    X: torch.Tensor
    mu: float
    B: int
    p_B: float | None = None  # feature rate of random binary embeddings


def gaussian_family(m: int, d_model: int, seed: int, B: int | None = None) -> EmbeddingFamily:
    """Gaussian unit-norm rows (Corollary B.6): ``mu = 1``; ``B = d_model`` unless given.

    Corollary B.6 allows ``B <= c d_model / ln m``; the specialised proof of
    Construction II attains ``B = d_model``, the default here.
    """
    X = gaussian_unit(m, d_model, seed)
    return EmbeddingFamily("gaussian", X, 1.0, int(B or d_model))


def binary_family(
    m: int, d_model: int, seed: int, c_p: float = 1.0, c_B: float = 1.0
) -> EmbeddingFamily:
    """Sparse random binary rows (Corollary B.7).

    Entries are Bernoulli(``p_B``) with ``p_B = min(1/2, c_p ln m / d_model)``;
    ``mu = d_model p_B`` (the expected squared row norm, so ``u_i(i) ~ 1``);
    block size ``B = max(1, round(c_B d_model / ln m))``.
    """
    p_B = min(0.5, c_p * math.log(m) / d_model)
    X = random_binary(m, d_model, seed, p=p_B)
    B = max(1, round(c_B * d_model / math.log(m)))
    return EmbeddingFamily("binary", X, d_model * p_B, int(B), p_B)


def dk_from_C(C: float, m: int, log_power: int = 1) -> int:
    """``d_k = ceil(C (ln m)^log_power)`` (at least 1)."""
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C}")
    return max(1, math.ceil(C * math.log(m) ** log_power - 1e-9))


def theorem_B1_C(p: float) -> float:
    """The sufficient constant of Theorem B.1's proof: ``C > max(3/c1, 2/c2)`` with
    ``c1 = p(1-p)^2/8`` and ``c2 = p(1-p)^2 / (2(1+3p))``."""
    c1 = p * (1 - p) ** 2 / 8
    c2 = p * (1 - p) ** 2 / (2 * (1 + 3 * p))
    return max(3 / c1, 2 / c2)


def signatures(m: int, d_k: int, seed: int, kind: str = "rademacher", p: float | None = None) -> np.ndarray:
    """Signature matrix W_sig (m, d_k), float64: Rademacher +-1 or Bernoulli(p) 0/1 entries.

    Columns are drawn one after another, so the first ``d_k`` columns of a
    wider draw equal a narrower draw with the same seed (nested widths make
    sweeps over ``d_k`` less noisy).
    """
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be an integer >= 1, got {d_k!r}")
    rng = np.random.default_rng(derive_seed(seed, SIGNATURE_STREAM))
    u = rng.random((d_k, m)).T
    if kind == "rademacher":
        return np.where(u < 0.5, 1.0, -1.0)
    if kind == "bernoulli":
        if p is None or not 0.0 < p < 1.0:
            raise ValueError(f"Bernoulli signatures need p in (0, 1), got {p}")
        return (u < p).astype(np.float64)
    raise ValueError(f"signature kind must be 'rademacher' or 'bernoulli', got {kind!r}")


# ---------------------------------------------------------------------------
# the template


def _template_weights(
    X: torch.Tensor, mu: float, blocks: list[np.ndarray], W_sig: np.ndarray
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-head (h, d_model, d_k) maps ``X_inv W'_Q`` and ``X_inv W'_K`` of the blocks.

    Only the block's rows of the templates are non-zero, so
    ``W_Q^k = X_inv[:, sources] W_sig[targets]`` and
    ``W_K^k = X_inv[:, targets] W_sig[targets]``: O(B d_model d_k) per head.
    """
    X_inv = X.double().numpy().T / mu  # (d_model, m)
    d_model, d_k = X_inv.shape[0], W_sig.shape[1]
    W_Q = np.zeros((len(blocks), d_model, d_k))
    W_K = np.zeros((len(blocks), d_model, d_k))
    for k, blk in enumerate(blocks):
        src, tgt = blk[:, 0], blk[:, 1]
        W_Q[k] = X_inv[:, src] @ W_sig[tgt]
        W_K[k] = X_inv[:, tgt] @ W_sig[tgt]
    dt = X.dtype
    return torch.from_numpy(W_Q).to(dt), torch.from_numpy(W_K).to(dt)


def _resolve_dk(d_k: int | None, C: float | None, m: int, log_power: int) -> tuple[int, float | None]:
    if d_k is not None:
        if not isinstance(d_k, (int, np.integer)) or isinstance(d_k, bool) or d_k < 1:
            raise ValueError(f"d_k must be an integer >= 1, got {d_k!r}")
        return int(d_k), None
    if C is None:
        raise ValueError("give either d_k or C")
    return dk_from_C(C, m, log_power), float(C)


def _check_X(X: torch.Tensor, m: int) -> torch.Tensor:
    if not isinstance(X, torch.Tensor) or X.dim() != 2 or X.shape[0] != m:
        raise ValueError(f"X must be a (m, d_model) tensor with m={m} rows, got {getattr(X, 'shape', X)}")
    return X


def _matching_edges(graph: Graph, what: str) -> np.ndarray:
    e = graph.edges
    if len(e) == 0:
        raise ValueError(f"{what} needs a graph with at least one edge")
    if not is_matching(e):
        raise ValueError(
            f"{what} needs a permutation graph (every out- and in-degree <= 1); "
            "use construct_general_graph for general graphs"
        )
    return e[np.argsort(e[:, 0], kind="stable")]


def _split(edges: np.ndarray, h: int | None, block_size: int | None) -> list[np.ndarray]:
    """Cut a matching (sorted by source) into h near-equal consecutive blocks."""
    n = len(edges)
    if h is None:
        if block_size is None or block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        h = math.ceil(n / block_size)
    if not isinstance(h, (int, np.integer)) or isinstance(h, bool) or not 1 <= h <= n:
        raise ValueError(f"h must be an integer in [1, m'={n}], got {h!r}")
    return np.array_split(edges, int(h))


def _assemble(
    name: str,
    aggregation: str,
    graph: Graph,
    X: torch.Tensor,
    mu: float,
    blocks: list[np.ndarray],
    d_k: int,
    C: float | None,
    log_power: int,
    sig: str,
    p: float | None,
    tau: float,
    embedding: str,
    seed: int,
    h_bound: int,
) -> Construction:
    W_sig = signatures(graph.m, d_k, seed, sig, p)
    W_Q, W_K = _template_weights(X, mu, blocks, W_sig)
    info = ConstructionInfo(
        name=name,
        aggregation=aggregation,
        m=graph.m,
        m_edges=graph.m_edges,
        d_model=int(X.shape[1]),
        h=len(blocks),
        d_k=d_k,
        C=C,
        log_power=log_power,
        B=max(len(b) for b in blocks),
        h_bound=int(h_bound),
        delta=max_degree(graph.edges),
        signature=sig,
        p=p,
        mu=float(mu),
        tau=float(tau),
        embedding=embedding,
        seed=int(seed),
    )
    return Construction(QKWeights.single(W_Q, W_K, tau), info, X, tuple(blocks), W_sig)


# ---------------------------------------------------------------------------
# the constructions


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
    e = _matching_edges(graph, "Construction I")
    if C is None:
        C = DEFAULT_C["one-hot" if signature == "bernoulli" else "one-hot-rademacher"]
    d_k, C = _resolve_dk(d_k, C, graph.m, 1)
    if signature == "bernoulli":
        tau = (p + p * p) / 2 * d_k
    else:
        tau, p = d_k / 2, None
    X = torch.eye(graph.m)
    return _assemble(
        "one-hot", "max", graph, X, 1.0, [e], d_k, C, 1, signature, p, tau, "one-hot", seed, 1
    )


def construct_compressive(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["compressive"],
    h: int | None = None,
    seed: int = 0,
    embedding: str = "gaussian",
) -> Construction:
    """Construction II (Algorithm 1): permutations under compressive embeddings.

    Rademacher signatures, de-embedding through ``X^T`` (``mu = 1``),
    ``tau = d_k / 2``. By default ``h = ceil(m' / d_model)`` heads, each serving
    a block of at most ``d_model`` consecutive sources (``B = d_model``);
    ``h=`` overrides the split (``h = 1``: the single-head design of Sec. 5).
    """
    e = _matching_edges(graph, "Construction II")
    X = _check_X(X, graph.m)
    d_model = int(X.shape[1])
    d_k, C = _resolve_dk(d_k, C, graph.m, 1)
    blocks = _split(e, h, d_model)
    return _assemble(
        "compressive", "max", graph, X, 1.0, blocks, d_k, C, 1, "rademacher", None,
        d_k / 2, embedding, seed, len(blocks),
    )


def construct_softmax(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["softmax"],
    h: int | None = None,
    seed: int = 0,
    embedding: str = "gaussian",
) -> Construction:
    """Algorithm 2: Construction II's weights read by per-head softmax, summed over heads.

    Score (i, j) is ``sum_k softmax_j(S^k_ij / sqrt(d_k))`` over the context,
    thresholded at ``tau = 1/2``; width ``d_k = ceil(C (ln m)^2)``. Theorem 8.1
    asks the context to be long against the head count,
    ``ell >= C_ell max(h, ln m)``, because every non-owner head adds about
    ``1/ell`` of background mass to every pair.
    """
    e = _matching_edges(graph, "Algorithm 2")
    X = _check_X(X, graph.m)
    d_k, C = _resolve_dk(d_k, C, graph.m, 2)
    blocks = _split(e, h, int(X.shape[1]))
    return _assemble(
        "softmax", "softmax", graph, X, 1.0, blocks, d_k, C, 2, "rademacher", None,
        0.5, embedding, seed, len(blocks),
    )


def construct_general_embedding(
    graph: Graph,
    family: EmbeddingFamily,
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
    e = _matching_edges(graph, "Algorithm 4")
    X = _check_X(family.X, graph.m)
    d_k, C = _resolve_dk(d_k, C, graph.m, 1)
    B = int(B or family.B)
    blocks = _split(e, None, B)
    tau = (p + p * p) / 2 * d_k
    return _assemble(
        "general-embedding", "max", graph, X, family.mu, blocks, d_k, C, 1, "bernoulli", p,
        tau, family.name, seed, math.ceil(graph.m / B),
    )


def construct_general_graph(
    graph: Graph,
    X: torch.Tensor,
    *,
    d_k: int | None = None,
    C: float | None = DEFAULT_C["general-graph"],
    block_size: int | None = None,
    seed: int = 0,
    embedding: str = "gaussian",
) -> Construction:
    """Algorithm 5: any directed graph, compressive Gaussian embeddings.

    The bipartite incidence graph is edge-coloured with exactly ``Delta``
    colours (:func:`rgr.theory.coloring.bipartite_edge_coloring`); each colour class
    (a matching) is cut into blocks of at most ``block_size = d_model`` edges,
    one head per block: at most ``ceil(m'/d_model) + Delta`` heads (the
    ``h_bound`` recorded). Rademacher signatures shared by all heads,
    ``tau = d_k / 2``.
    """
    if graph.m_edges == 0:
        raise ValueError("Algorithm 5 needs a graph with at least one edge")
    X = _check_X(X, graph.m)
    d_model = int(X.shape[1])
    d_k, C = _resolve_dk(d_k, C, graph.m, 1)
    bs = int(block_size or d_model)
    blocks = matching_blocks(graph.edges, bs)
    h_bound = math.ceil(graph.m_edges / bs) + max_degree(graph.edges)
    return _assemble(
        "general-graph", "max", graph, X, 1.0, blocks, d_k, C, 1, "rademacher", None,
        d_k / 2, embedding, seed, h_bound,
    )
