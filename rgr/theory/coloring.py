"""Packing a directed graph's edges into matchings (Lemma B.8, Algorithm 5).

A directed graph on items ``0..m-1`` is read as a bipartite graph: a left copy
of every item (as a source) and a right copy (as a target); edge (i, j) joins
left i to right j. Its maximum degree is ``Delta = max(max out-degree, max
in-degree)``. König's line-colouring theorem says ``Delta`` colours suffice for
a proper edge colouring of a bipartite graph; every colour class is then a
*matching*: no two of its edges share a source or a target, i.e. a partial
permutation, which is exactly what one head of the compressive construction
can serve.

:func:`bipartite_edge_coloring` realises König's theorem with the classical
alternating-path recolouring (exactly ``Delta`` colours, never more);
:func:`matching_blocks` then cuts every colour class into blocks of at most
``block_size`` edges, giving at most ``ceil(m'/block_size) + Delta`` blocks.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["bipartite_edge_coloring", "matching_blocks", "max_degree", "is_matching"]


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


def is_matching(edges: np.ndarray) -> bool:
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
