"""The context sampler of protocol E1/E4, vectorized over runs x contexts (chapter *theory*).

A context is an ordered set of ``ell`` distinct items. With target-in-context
rate ``rho`` each position is designated a *source* with probability ``rho``
(equivalently: b ~ Binomial(ell, rho) sources, a uniformly random subset of
that size, since the positions are in uniformly random order). For each
designated source in turn whose out-neighbours are all missing from the
context, one out-neighbour (uniformly chosen) is written over a uniformly
chosen position that is neither a designated source nor a target placed
earlier; when none is left, over a designated source not yet served (which
then stops being a source); when neither exists the source itself is dropped.
(Protocol E1 leaves the eviction order open; this order never breaks a served
source, so every source in the returned ``sources`` mask has a target in
context. The realised source rate is a little below ``rho`` when ``ell`` is
small against the demand, since each source needs a second slot.) For a
permutation graph (r = 1) this is E1's sampler; for r-regular graphs it is
E4's source-based rule.

Labels are exactly the in-context edges: ``labels[p, q] = (item_p -> item_q)``.
All ordered pairs are labelled, including the diagonal (always 0: graphs have
no self-loops).

Randomness comes from :mod:`rgr.task.rng`: context ``index`` of a run depends only
on the run's seed, its stream and the index, so runs stacked together draw
exactly what they would draw alone, on any device. So does the task itself: a run's graph and frozen
embeddings (:func:`build_task`) come from its seed, never from its stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import torch

from .embeddings import gaussian_unit
from .graphs import Graph, permutation_graph, regular_graph
from .rng import randint, stream_key, uniform


class _Run(Protocol):
    """The fields of a run (:class:`rgr.experiments.engine.config.RunConfig`) its task is drawn from."""

    graph: str  # "permutation" | "regular"
    m: int
    r: int
    d_model: int
    seed: int


def build_task(cfg: _Run) -> tuple[Graph, torch.Tensor]:
    """The run's graph and frozen embeddings X (m, d_model) float32, from its seed."""
    if cfg.graph == "permutation":
        g = permutation_graph(cfg.m, cfg.seed)
    else:
        g = regular_graph(cfg.m, cfg.r, cfg.seed)
    return g, gaussian_unit(cfg.m, cfg.d_model, cfg.seed)


@dataclass(frozen=True)
class _ContextBatch:
    """Contexts of R runs: items (R, n, ell) long, labels (R, n, ell, ell) bool,
    sources (R, n, ell) bool — the positions designated as sources."""

    items: torch.Tensor
    labels: torch.Tensor
    sources: torch.Tensor


@dataclass(frozen=True)
class GraphTable:
    """Graphs of R runs stacked for the sampler: out (R, m_max, r_max), -1 padded; m (R,)."""

    out: torch.Tensor
    m: torch.Tensor


def graph_table(graphs: list[Graph], device: torch.device | str = "cpu") -> GraphTable:
    """Stack the out-neighbour tables of several graphs (any m, any degree)."""
    if not graphs:
        raise ValueError("graphs must be a non-empty list")
    m_max = max(g.m for g in graphs)
    r_max = max(g.out.shape[1] for g in graphs)
    out = torch.full((len(graphs), m_max, r_max), -1, dtype=torch.long)
    for i, g in enumerate(graphs):
        out[i, : g.m, : g.out.shape[1]] = torch.from_numpy(g.out)
    m = torch.tensor([g.m for g in graphs], dtype=torch.long)
    return GraphTable(out.to(device), m.to(device))


def _check(ell: int, rho: float, m_min: int) -> None:
    if not isinstance(ell, int) or isinstance(ell, bool) or ell < 2:
        raise ValueError(f"ell must be an integer >= 2, got {ell!r}")
    if ell > m_min:
        raise ValueError(f"ell must be <= m (ell={ell}, smallest m={m_min})")
    if not 0.0 <= float(rho) <= 1.0:
        raise ValueError(f"rho must be in [0, 1], got {rho}")


def _eviction_candidates(sources: torch.Tensor, placed: torch.Tensor, pos: torch.Tensor, k: int) -> torch.Tensor:
    """Positions a target may overwrite: a free item if any, else a source not yet served.

    An all-False row means no position can be given up without breaking a
    served source; that source is then dropped.
    """
    free = ~sources & ~placed & (pos != k)
    later = sources & ~placed & (pos > k)
    return torch.where(free.any(-1, keepdim=True), free, later)


def sample_stacked(
    table: GraphTable, keys: torch.Tensor, index: torch.Tensor, ell: int, rho: float
) -> _ContextBatch:
    """Draw context ``index[r, i]`` of run r for every (r, i), in one tensor program.

    ``keys`` (R,) int64 are the runs' stream keys (:func:`rgr.task.rng.stream_key`),
    ``index`` (R, n) int64 the context indices within each run's stream.
    """
    R, n = index.shape
    if keys.shape != (R,) or table.out.shape[0] != R:
        raise ValueError(f"keys, index and table must agree on R (got {keys.shape}, {index.shape}, {table.out.shape})")
    _check(ell, rho, int(table.m.min()))
    dev = index.device
    u = uniform(keys, index, 5 * ell)  # (R, n, 5 ell)
    u_floyd, u_shuf, u_src, u_nbr, u_pos = u.split(ell, dim=-1)

    # 1. ell distinct items uniformly from [0, m_r) (Floyd's algorithm), then shuffled
    m = table.m.view(R, 1)
    chosen = torch.empty(R, n, ell, dtype=torch.long, device=dev)
    for k in range(ell):
        j = m - ell + k  # (R, 1)
        t = randint(u_floyd[..., k], j + 1)  # (R, n) in [0, j]
        seen = (chosen[..., :k] == t.unsqueeze(-1)).any(-1)
        chosen[..., k] = torch.where(seen, j.expand(R, n), t)
    items = chosen.gather(-1, u_shuf.argsort(dim=-1))

    # 2. designated sources, then 3. place a missing target for each in turn
    sources = u_src < rho
    placed = torch.zeros_like(sources)
    pos = torch.arange(ell, device=dev)
    r_max = table.out.shape[-1]
    for k in range(ell):
        src = items[..., k]  # (R, n)
        nbrs = table.out.gather(1, src.unsqueeze(-1).expand(R, n, r_max))  # (R, n, r)
        deg = (nbrs >= 0).sum(-1)
        is_nbr = (items.unsqueeze(-1) == nbrs.unsqueeze(-2)).any(-1)  # (R, n, ell); -1 pads never match
        has = is_nbr.any(-1)
        placed = placed | (is_nbr & sources[..., k : k + 1])  # a served source's target stays
        need = sources[..., k] & ~has & (deg > 0)
        if not bool(need.any()):
            continue
        target = nbrs.gather(-1, randint(u_nbr[..., k], deg.clamp_min(1)).unsqueeze(-1)).squeeze(-1)
        allowed = _eviction_candidates(sources, placed, pos, k)
        stuck = need & ~allowed.any(-1)
        sources = sources & ~(stuck.unsqueeze(-1) & (pos == k))
        need = need & ~stuck
        slot = randint(u_pos[..., k], allowed.sum(-1))  # the slot-th allowed position
        j = (allowed.cumsum(-1) <= slot.unsqueeze(-1)).sum(-1)  # (R, n)
        hit = need.unsqueeze(-1) & (pos == j.unsqueeze(-1))  # (R, n, ell)
        items = torch.where(hit, target.unsqueeze(-1), items)
        placed = placed | hit
        sources = sources & ~hit  # an evicted, not yet served source is gone

    nb = table.out.gather(1, items.reshape(R, n * ell, 1).expand(R, n * ell, r_max))
    nb = nb.view(R, n, ell, r_max, 1)  # out-neighbours of each position
    labels = (nb == items.view(R, n, 1, 1, ell)).any(-2)  # (R, n, ell, ell)
    return _ContextBatch(items=items, labels=labels, sources=sources)


def sample(
    graph: Graph,
    seed: int,
    n: int,
    ell: int = 16,
    rho: float = 0.5,
    stream: str = "train",
    start: int = 0,
    device: torch.device | str = "cpu",
) -> _ContextBatch:
    """Contexts ``start .. start+n-1`` of one run's ``stream``; tensors without the run axis."""
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if start < 0:
        raise ValueError(f"start must be >= 0, got {start}")
    keys = torch.tensor([stream_key(seed, stream)], dtype=torch.long, device=device)
    index = torch.arange(start, start + n, dtype=torch.long, device=device).unsqueeze(0)
    b = sample_stacked(graph_table([graph], device), keys, index, ell, rho)
    return _ContextBatch(b.items[0], b.labels[0], b.sources[0])
