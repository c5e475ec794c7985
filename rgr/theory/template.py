"""The template every explicit construction fills in (chapter *constructions*; paper Sec. 4, App. B).

Each construction of :mod:`rgr.theory.constructions` is this template with different ingredients:

1. cut the edge set into *blocks*, each a matching (every source and every
   target at most once) of at most ``B`` edges; block k is served by head k
   (:func:`matching_edges`, :func:`split_blocks`; a general graph's through :func:`matching_blocks`, below);
2. draw one signature row ``w_j`` (width ``d_k``) per target j, Rademacher
   (+-1) or Bernoulli(p) (0/1) (:func:`signatures`);
3. write the one-hot-space templates of head k: row i of ``W'_Q`` is
   ``w_{pi_k(i)}`` for sources i of the block, row j of ``W'_K`` is ``w_j`` for
   its targets (zero elsewhere);
4. map them back to model space through an approximate inverse of the
   embedding, ``X_inv = X^T / mu``: ``W_Q^k = X_inv W'_Q``, ``W_K^k = X_inv W'_K``
   (:func:`_template_weights`).

:func:`assemble` runs steps 2-4 and returns a :class:`Construction`: weights as
:class:`rgr.model.attention.QKWeights` and a frozen :class:`_ConstructionInfo`
holding the constants actually used. Widths are chosen either directly (``d_k=``)
or as ``d_k = ceil(C (ln m)^a)`` (:func:`rgr.theory.bounds.dk_from_C`, :func:`resolve_dk`). Logarithms are natural.

**Packing a directed graph's edges into matchings (Lemma B.8, Algorithm 5).** A directed graph on items
``0..m-1`` is read as a bipartite graph: a left copy of every item (as a source) and a right copy (as a target);
edge (i, j) joins left i to right j. Its maximum degree is ``Delta = max(max out-degree, max in-degree)``.
König's line-colouring theorem says ``Delta`` colours suffice for a proper edge colouring of a bipartite graph;
every colour class is then a *matching*: no two of its edges share a source or a target, i.e. a partial
permutation, which is exactly what one head of the compressive construction can serve.
:func:`bipartite_edge_coloring` realises König's theorem with the classical alternating-path recolouring (exactly
``Delta`` colours, never more); :func:`matching_blocks` then cuts every colour class into blocks of at most
``block_size`` edges, giving at most ``ceil(m'/block_size) + Delta`` blocks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..model.attention import QKWeights
from ..task.graphs import Graph
from ..task.rng import derive_seed
from .bounds import dk_from_C

# ---------------------------------------------------------------------------------------
# step 1: blocks that are matchings (a general graph's through König's colouring)


def _as_edges(edges: np.ndarray | list) -> np.ndarray:
    e = np.asarray(edges, dtype=np.int64)
    if e.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError(f"edges must have shape (m', 2), got {tuple(e.shape)}")
    if e.min() < 0:
        raise ValueError("edges must have non-negative endpoints")
    if len(np.unique(e, axis=0)) != len(e):
        raise ValueError("edges must not contain repeated edges")
    return e


def max_degree(edges: np.ndarray | list) -> int:
    """``Delta``: the largest out- or in-degree (0 for no edges)."""
    e = _as_edges(edges)
    if len(e) == 0:
        return 0
    return int(max(np.bincount(e[:, 0]).max(), np.bincount(e[:, 1]).max()))


def _is_matching(edges: np.ndarray) -> bool:
    """True iff no two edges share a source and no two share a target."""
    e = np.asarray(edges).reshape(-1, 2)
    return len(np.unique(e[:, 0])) == len(e) and len(np.unique(e[:, 1])) == len(e)


def bipartite_edge_coloring(edges: np.ndarray | list) -> np.ndarray:
    """A proper edge colouring with exactly ``Delta`` colours: int64 array (m',) in [0, Delta).

    Edges are coloured one at a time. For edge (u, v) take a colour ``a`` free
    at source u and a colour ``b`` free at target v (both exist since each
    endpoint has fewer than Delta coloured edges). If ``a`` is also free at v,
    use it. Otherwise swap ``a`` and ``b`` along the maximal path from v whose
    edges alternate a, b, a, ...; in a bipartite graph that path cannot end at
    u (it enters sources only through a-edges, and u has none), so after the
    swap ``a`` is free at both ends and colours (u, v). Each step costs
    O(Delta + path length).
    """
    e = _as_edges(edges)
    n_edges = len(e)
    if n_edges == 0:
        return np.zeros(0, dtype=np.int64)
    delta = max_degree(e)
    n_left, n_right = int(e[:, 0].max()) + 1, int(e[:, 1].max()) + 1
    # at_left[u, c] = id of the edge of colour c at source u (-1: colour c free)
    at_left = np.full((n_left, delta), -1, dtype=np.int64)
    at_right = np.full((n_right, delta), -1, dtype=np.int64)
    colour = np.full(n_edges, -1, dtype=np.int64)

    for eid in range(n_edges):
        u, v = int(e[eid, 0]), int(e[eid, 1])
        a = int(np.flatnonzero(at_left[u] < 0)[0])
        if at_right[v, a] >= 0:
            b = int(np.flatnonzero(at_right[v] < 0)[0])
            # walk the a/b alternating path from target v
            path: list[int] = []
            node, on_right, c = v, True, a
            while True:
                nxt = at_right[node, c] if on_right else at_left[node, c]
                if nxt < 0:
                    break
                path.append(int(nxt))
                node = int(e[nxt, 0] if on_right else e[nxt, 1])
                on_right = not on_right
                c = b if c == a else a
            for pid in path:  # uncolour, then recolour swapped
                s, t, c = e[pid, 0], e[pid, 1], colour[pid]
                at_left[s, c] = -1
                at_right[t, c] = -1
            for pid in path:
                s, t = e[pid, 0], e[pid, 1]
                c = b if colour[pid] == a else a
                colour[pid] = c
                at_left[s, c] = pid
                at_right[t, c] = pid
        colour[eid] = a
        at_left[u, a] = eid
        at_right[v, a] = eid
    return colour


def matching_blocks(edges: np.ndarray | list, block_size: int) -> list[np.ndarray]:
    """Partition the edges into matchings of at most ``block_size`` edges (Lemma B.8).

    Colour classes come from :func:`bipartite_edge_coloring`; each class F_c is
    cut into ``ceil(|F_c| / block_size)`` blocks of near-equal size (sources in
    increasing order). The number of blocks is at most
    ``ceil(m' / block_size) + Delta``. Returns a list of (|M_k|, 2) edge arrays.
    """
    if not isinstance(block_size, (int, np.integer)) or isinstance(block_size, bool) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    e = _as_edges(edges)
    colour = bipartite_edge_coloring(e)
    blocks: list[np.ndarray] = []
    for c in range(int(colour.max(initial=-1)) + 1):
        cls = e[colour == c]
        cls = cls[np.argsort(cls[:, 0], kind="stable")]
        n_blocks = math.ceil(len(cls) / block_size)
        blocks.extend(np.array_split(cls, n_blocks))
    return blocks


# ---------------------------------------------------------------------------------------
# steps 2-4: signatures, templates, weights


# random stream of the signature matrix (rgr.task.rng.derive_seed accepts integer streams)
_SIGNATURE_STREAM = 11


@dataclass(frozen=True)
class _ConstructionInfo:
    """The constants a construction actually used.

    ``B`` is the largest block
    (edges served by one head); ``h_bound`` is the paper's head count for the
    construction (``ceil(m/B)``, or ``ceil(m'/d_model) + Delta`` for Algorithm 5);
    ``h <= h_bound`` is the number of heads built.
    """

    aggregation: str  # "max" or "softmax": how rgr.model.attention.scores must aggregate
    m: int
    d_model: int
    h: int
    d_k: int
    B: int
    h_bound: int
    delta: int
    signature: str  # "rademacher" or "bernoulli"
    p: float | None  # Bernoulli signature rate
    mu: float  # de-embedding scale: X_inv = X^T / mu
    tau: float

    @property
    def D_K(self) -> int:
        return self.h * self.d_k


@dataclass(frozen=True, eq=False)
class Construction:
    """Weights (one run: R = 1) plus what built them: the embedding, the blocks, the signatures."""

    weights: QKWeights
    info: _ConstructionInfo
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

    def head_of(self, column: int) -> np.ndarray:
        """(m,) the head whose block holds item i in block column ``column`` (0: as a source, 1: as a target);
        -1 where none does."""
        head = np.full(self.info.m, -1)
        for k, b in enumerate(self.blocks):
            head[b[:, column]] = k
        return head

    def padded_blocks(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Sources and targets (h, largest block) int64 of each head's block, padded with ``m`` (the index of an
        appended zero row)."""
        m = self.info.m
        Bmax = max(len(b) for b in self.blocks)
        src = torch.full((len(self.blocks), Bmax), m, dtype=torch.long)
        tgt = src.clone()
        for k, b in enumerate(self.blocks):
            src[k, : len(b)] = torch.from_numpy(b[:, 0])
            tgt[k, : len(b)] = torch.from_numpy(b[:, 1])
        return src, tgt


def signatures(m: int, d_k: int, seed: int, kind: str = "rademacher", p: float | None = None) -> np.ndarray:
    """Signature matrix W_sig (m, d_k), float64: Rademacher +-1 or Bernoulli(p) 0/1 entries.

    Columns are drawn one after another, so the first ``d_k`` columns of a
    wider draw equal a narrower draw with the same seed (nested widths make
    sweeps over ``d_k`` less noisy).
    """
    if not isinstance(d_k, (int, np.integer)) or d_k < 1:
        raise ValueError(f"d_k must be an integer >= 1, got {d_k!r}")
    rng = np.random.default_rng(derive_seed(seed, _SIGNATURE_STREAM))
    u = rng.random((d_k, m)).T
    if kind == "rademacher":
        return np.where(u < 0.5, 1.0, -1.0)
    if kind == "bernoulli":
        if p is None or not 0.0 < p < 1.0:
            raise ValueError(f"Bernoulli signatures need p in (0, 1), got {p}")
        return (u < p).astype(np.float64)
    raise ValueError(f"signature kind must be 'rademacher' or 'bernoulli', got {kind!r}")


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


def resolve_dk(d_k: int | None, C: float | None, m: int, log_power: int) -> int:
    if d_k is not None:
        if not isinstance(d_k, (int, np.integer)) or isinstance(d_k, bool) or d_k < 1:
            raise ValueError(f"d_k must be an integer >= 1, got {d_k!r}")
        return int(d_k)
    if C is None:
        raise ValueError("give either d_k or C")
    return dk_from_C(C, m, log_power)


def check_X(X: torch.Tensor, m: int) -> torch.Tensor:
    if not isinstance(X, torch.Tensor) or X.dim() != 2 or X.shape[0] != m:
        raise ValueError(f"X must be a (m, d_model) tensor with m={m} rows, got {getattr(X, 'shape', X)}")
    return X


def matching_edges(graph: Graph, what: str) -> np.ndarray:
    e = graph.edges
    if len(e) == 0:
        raise ValueError(f"{what} needs a graph with at least one edge")
    if not _is_matching(e):
        raise ValueError(
            f"{what} needs a permutation graph (every out- and in-degree <= 1); "
            "use construct_general_graph for general graphs"
        )
    return e[np.argsort(e[:, 0], kind="stable")]


def split_blocks(edges: np.ndarray, h: int | None, block_size: int | None) -> list[np.ndarray]:
    """Cut a matching (sorted by source) into h near-equal consecutive blocks."""
    n = len(edges)
    if h is None:
        if block_size is None or block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        h = math.ceil(n / block_size)
    if not isinstance(h, (int, np.integer)) or isinstance(h, bool) or not 1 <= h <= n:
        raise ValueError(f"h must be an integer in [1, m'={n}], got {h!r}")
    return np.array_split(edges, int(h))


def assemble(
    aggregation: str,
    graph: Graph,
    X: torch.Tensor,
    mu: float,
    blocks: list[np.ndarray],
    d_k: int,
    sig: str,
    p: float | None,
    tau: float,
    seed: int,
    h_bound: int,
) -> Construction:
    W_sig = signatures(graph.m, d_k, seed, sig, p)
    W_Q, W_K = _template_weights(X, mu, blocks, W_sig)
    info = _ConstructionInfo(
        aggregation=aggregation,
        m=graph.m,
        d_model=int(X.shape[1]),
        h=len(blocks),
        d_k=d_k,
        B=max(len(b) for b in blocks),
        h_bound=int(h_bound),
        delta=max_degree(graph.edges),
        signature=sig,
        p=p,
        mu=float(mu),
        tau=float(tau),
    )
    return Construction(QKWeights.single(W_Q, W_K, tau), info, X, tuple(blocks), W_sig)

