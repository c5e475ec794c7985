"""Relational graphs: what an attention layer must store (chapter *theory*).

A :class:`Graph` on ``m`` items is held as an out-neighbour table ``out`` of
shape (m, r_max), padded with -1, plus its edge list. Permutation graphs have
``r_max = 1`` (``out[i, 0] = pi(i)``); directed r-regular graphs have
``r_max = r``. The table is what the vectorized context sampler gathers from.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rng import derive_seed


@dataclass(frozen=True)
class DegreeStats:
    """Degree statistics of a directed graph: ``m'`` edges, max degree ``Delta``."""

    m: int
    m_edges: int  # m'
    max_out: int
    max_in: int
    avg_out: float

    @property
    def delta(self) -> int:
        """Delta = the maximum of in- and out-degree (Algorithm 5 needs it)."""
        return max(self.max_out, self.max_in)


@dataclass(frozen=True, eq=False)
class Graph:
    """A directed graph without self-loops or repeated edges on items 0..m-1."""

    m: int
    edges: np.ndarray  # (m', 2) int64, rows (source, target), sorted
    out: np.ndarray  # (m, r_max) int64 out-neighbour table, -1 padded

    @property
    def m_edges(self) -> int:
        return int(self.edges.shape[0])

    @property
    def out_degree(self) -> np.ndarray:
        return np.bincount(self.edges[:, 0], minlength=self.m)

    @property
    def in_degree(self) -> np.ndarray:
        return np.bincount(self.edges[:, 1], minlength=self.m)

    def stats(self) -> DegreeStats:
        return DegreeStats(
            m=self.m,
            m_edges=self.m_edges,
            max_out=int(self.out_degree.max(initial=0)),
            max_in=int(self.in_degree.max(initial=0)),
            avg_out=self.m_edges / self.m,
        )

    def adjacency(self) -> np.ndarray:
        """Dense (m, m) boolean adjacency, ``A[i, j]`` iff i -> j."""
        a = np.zeros((self.m, self.m), dtype=bool)
        a[self.edges[:, 0], self.edges[:, 1]] = True
        return a

    @property
    def pi(self) -> np.ndarray:
        """The permutation of a permutation graph (``out[:, 0]``)."""
        if self.out.shape[1] != 1 or np.any(self.out[:, 0] < 0):
            raise ValueError("pi is defined only for permutation graphs (out-degree 1 everywhere)")
        return self.out[:, 0]


def _check_int(name: str, value: int, low: int, high: int | None = None) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        rng = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ValueError(f"{name} must be {rng}, got {value}")


def _table(m: int, edges: np.ndarray) -> np.ndarray:
    deg = np.bincount(edges[:, 0], minlength=m) if len(edges) else np.zeros(m, dtype=np.int64)
    r_max = max(int(deg.max(initial=0)), 1)
    out = np.full((m, r_max), -1, dtype=np.int64)
    fill = np.zeros(m, dtype=np.int64)
    for s, t in edges:
        out[s, fill[s]] = t
        fill[s] += 1
    return out


def graph_from_edges(m: int, edges: np.ndarray | list) -> Graph:
    """A graph from an edge list of (source, target) pairs; rejects loops and repeats."""
    _check_int("m", m, 2)
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2) if len(edges) else np.zeros((0, 2), np.int64)
    if e.size and (e.min() < 0 or e.max() >= m):
        raise ValueError(f"edges must have entries in [0, {m - 1}] (m={m})")
    if np.any(e[:, 0] == e[:, 1]):
        raise ValueError("edges must not contain self-loops (i, i)")
    e = e[np.lexsort((e[:, 1], e[:, 0]))]
    if len(e) > 1 and np.any(np.all(e[1:] == e[:-1], axis=1)):
        raise ValueError("edges must not contain repeated edges")
    return Graph(m=m, edges=e, out=_table(m, e))


def permutation_graph(m: int, seed: int) -> Graph:
    """Edges (i, pi(i)) of a uniformly random permutation pi on m items.

    pi is a uniformly random derangement (the project's choice, see protocol E1's open
    choice), drawn by rejection, so the
    graph has no self-loops and every item has exactly one target.
    """
    _check_int("m", m, 2)
    _check_int("seed", seed, 0)
    rng = np.random.default_rng(derive_seed(seed, "graph"))
    while True:
        pi = rng.permutation(m)
        if not np.any(pi == np.arange(m)):
            break
    return graph_from_edges(m, np.stack([np.arange(m), pi], axis=1))


def regular_graph(m: int, r: int, seed: int) -> Graph:
    """A directed r-regular graph: the union of r random perfect matchings ("layers").

    Each layer is a permutation sigma with sigma(i) != i and sigma(i) not an
    earlier layer's target of i. It is built by a randomized greedy pass over
    the sources (each picks a uniformly random admissible free target); sources
    the greedy pass leaves unmatched are then matched along augmenting paths.
    The admissible pairs of layer l form an (m-1-l)-regular bipartite graph,
    which always has a perfect matching (Hall), so this never fails. Every node
    ends with r out- and r in-neighbours, no self-loops, no repeated edges.
    """
    _check_int("m", m, 2)
    _check_int("r", r, 1, m - 1)
    _check_int("seed", seed, 0)
    rng = np.random.default_rng(derive_seed(seed, "graph"))
    allowed = ~np.eye(m, dtype=bool)
    layers: list[np.ndarray] = []
    for _ in range(r):
        sigma = _random_perfect_matching(allowed, rng)
        allowed[np.arange(m), sigma] = False
        layers.append(sigma)
    src = np.repeat(np.arange(m), r)
    dst = np.stack(layers, axis=1).reshape(-1)
    g = graph_from_edges(m, np.stack([src, dst], axis=1))
    if not (np.all(g.out_degree == r) and np.all(g.in_degree == r)):
        raise AssertionError("regular_graph produced unequal degrees")  # pragma: no cover
    return g


def _random_perfect_matching(allowed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A random perfect matching source -> target inside ``allowed`` (m, m).

    Randomized greedy, then augmenting paths (breadth-first) for the sources it
    left unmatched. Raises if ``allowed`` has no perfect matching.
    """
    m = allowed.shape[0]
    sigma = np.full(m, -1, dtype=np.int64)  # source -> target
    owner = np.full(m, -1, dtype=np.int64)  # target -> source
    for i in rng.permutation(m):
        cand = np.flatnonzero((owner < 0) & allowed[i])
        if cand.size:
            j = cand[rng.integers(cand.size)]
            sigma[i], owner[j] = j, i
    for i in np.flatnonzero(sigma < 0):
        if not _augment(int(i), allowed, sigma, owner, rng):
            raise RuntimeError("allowed pairs admit no perfect matching")
    return sigma


def _augment(i: int, allowed: np.ndarray, sigma: np.ndarray, owner: np.ndarray, rng: np.random.Generator) -> bool:
    """Match source i by flipping a shortest alternating path; True on success."""
    parent_of_target = {}  # target -> source that reached it
    frontier, seen_src = [i], {i}
    while frontier:
        nxt = []
        for s in frontier:
            for t in rng.permutation(np.flatnonzero(allowed[s])):
                t = int(t)
                if t in parent_of_target:
                    continue
                parent_of_target[t] = s
                if owner[t] < 0:  # free target: flip the path back to i
                    while True:
                        s_prev = parent_of_target[t]
                        t_prev = sigma[s_prev]
                        sigma[s_prev], owner[t] = t, s_prev
                        if s_prev == i:
                            return True
                        t = int(t_prev)
                if owner[t] not in seen_src:
                    seen_src.add(int(owner[t]))
                    nxt.append(int(owner[t]))
        frontier = nxt
    return False
