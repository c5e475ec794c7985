"""Constructions by name and the search for their smallest width (chapter *constructions*).

- :func:`build` makes a graph, an embedding and a construction from a name
  and sizes (one seed draws all three);
- :func:`min_dk` / :func:`smallest_budget` find the smallest width (and head
  split) at which a construction succeeds on every seed;
- :mod:`rgr.experiments.construction_table` declares ``data/constructions.csv``
  from :func:`min_dk` and :func:`smallest_budget` (command: ``python -m rgr constructions``).

The chapter's sweeps over these are in :mod:`rgr.studies.construction_sweeps`.

Success criteria (``criterion``):

``"tau"``     every ordered pair on the right side of the construction's own
              threshold (all pairs of V for max-over-heads; for softmax the
              rows of sampled contexts that contain the target, Prop. 8.4's event);
``"margin"``  some threshold separates all pairs (``min edge > max non-edge``):
              the construction's weights with a calibrated tau, as a learned
              threshold would give.
"""

from __future__ import annotations

import math
from functools import lru_cache

import pandas as pd

from ..task.embeddings import gaussian_unit, one_hot
from ..task.graphs import Graph, permutation_graph, regular_graph
from ..theory.checks import evaluate_contexts, limit_separation, separation
from ..theory.constructions import (
    binary_family,
    construct_compressive,
    construct_general_embedding,
    construct_general_graph,
    construct_one_hot,
    construct_softmax,
    gaussian_family,
)
from ..theory.template import Construction

NAMES = ("one-hot", "one-hot-rademacher", "compressive", "softmax", "softmax-one-hot", "gun", "rbce", "general-graph")


def build(
    name: str,
    m: int,
    d_model: int,
    seed: int,
    *,
    d_k: int | None = None,
    C: float | None = None,
    h: int | None = None,
    B: int | None = None,
    r: int = 1,
    c_p: float = 16.0,
    c_B: float = 1.0,
) -> tuple[Construction, Graph]:
    """A construction by name, on a graph and embedding drawn from ``seed``.

    ``one-hot`` / ``one-hot-rademacher`` (Construction I; ``d_model`` ignored),
    ``compressive`` (Algorithm 1), ``softmax`` (Algorithm 2),
    ``softmax-one-hot`` (Algorithm 2's weights on one-hot inputs, ``h`` heads):
    random permutation (derangement) graphs and, but for one-hot, Gaussian
    unit-norm embeddings; ``gun`` / ``rbce`` (Algorithm 4 with the Gaussian or random
    binary family, block size ``B``); ``general-graph`` (Algorithm 5 on a
    directed r-regular graph, blocks of at most ``B`` edges, default d_model).
    ``h`` sets the head count of Algorithms 1 and 2 (blocks of ``ceil(m/h)``);
    ``B`` the block size of the others.
    """
    kw = {"d_k": d_k, "seed": seed}
    if C is not None:
        kw["C"] = C
    if name == "general-graph":
        g = regular_graph(m, r, seed) if r > 1 else permutation_graph(m, seed)
        return construct_general_graph(g, gaussian_unit(m, d_model, seed), block_size=B, **kw), g
    g = permutation_graph(m, seed)
    if name == "one-hot":
        return construct_one_hot(g, **kw), g
    if name == "one-hot-rademacher":
        return construct_one_hot(g, signature="rademacher", **kw), g
    if name == "softmax-one-hot":  # d_model ignored
        return construct_softmax(g, one_hot(m), h=h or 1, **kw), g
    if name in ("compressive", "softmax"):
        X = gaussian_unit(m, d_model, seed)
        if h is None and B is not None:
            h = math.ceil(m / B)
        fn = construct_compressive if name == "compressive" else construct_softmax
        return fn(g, X, h=h, **kw), g
    if name == "gun":
        return construct_general_embedding(g, gaussian_family(m, d_model, seed), B=B, **kw), g
    if name == "rbce":
        fam = binary_family(m, d_model, seed, c_p=c_p, c_B=c_B)
        return construct_general_embedding(g, fam, B=B, **kw), g
    raise ValueError(f"name must be one of {NAMES}, got {name!r}")


@lru_cache(maxsize=4096)
def _outcome(name: str, m: int, d_model: int, seed: int, d_k: int, kw: tuple) -> tuple[bool, bool]:
    """(separated at tau, some tau separates) over all pairs, for one seed and width (cached)."""
    c, g = build(name, m, d_model, seed, d_k=d_k, **dict(kw))
    if c.info.aggregation == "softmax":
        chk = evaluate_contexts(c, g, seed=seed).present
    else:
        chk = separation(c)
    return chk.separated, chk.margin > 0


@lru_cache(maxsize=1024)
def _limit_outcome(name: str, m: int, d_model: int, seed: int, kw: tuple) -> tuple[bool, bool]:
    """(slack > 0, margin > 0) of the d_k -> infinity limit (cached)."""
    lim = limit_separation(build(name, m, d_model, seed, d_k=1, **dict(kw))[0])
    return lim.slack > 0, lim.margin > 0


def min_dk(
    name: str,
    m: int,
    d_model: int,
    seeds: list[int] | range,
    *,
    criterion: str = "tau",
    d_k_max: int = 4096,
    rel_tol: float = 1 / 16,
    screen: bool = True,
    **kw,
) -> tuple[int | None, str]:
    """Smallest ``d_k`` at which the construction meets ``criterion`` on every seed.

    Widths are doubled from 1 until every seed passes, then bisected to within
    ``rel_tol`` (signature columns are nested across widths, so success is
    close to monotone in d_k for a fixed seed). Returns ``(d_k, note)``, or
    ``(None, note)`` when nothing up to ``d_k_max`` passes. With ``screen``,
    a max-over-heads construction whose d_k -> infinity limit
    (:func:`rgr.theory.checks.limit_separation`, first seed) already fails is
    skipped (note ``"limit fails"``): a wider head only shrinks signature
    noise around that limit, it cannot move the limit itself. Only the
    all-pairs criteria ``"tau"`` and ``"margin"`` are searched.
    """
    if criterion not in ("tau", "margin"):
        raise ValueError(f"min_dk searches criterion 'tau' or 'margin', got {criterion!r}")
    seeds = list(seeds)
    key = tuple(sorted(kw.items()))
    pick = 0 if criterion == "tau" else 1

    def ok(dk: int) -> bool:
        return all(_outcome(name, m, d_model, s, dk, key)[pick] for s in seeds)

    if screen and not name.startswith("softmax") and not _limit_outcome(name, m, d_model, seeds[0], key)[pick]:
        return None, "limit fails"
    lo, hi = 0, 1
    while not ok(hi):
        if hi >= d_k_max:
            return None, f"searched up to d_k={d_k_max}"
        lo, hi = hi, min(2 * hi, d_k_max)
    while hi - lo > max(1, int(rel_tol * lo)):
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi, ""


def smallest_budget(
    name: str,
    m: int,
    d_model: int,
    seeds: list[int] | range,
    *,
    criterion: str = "tau",
    block_sizes: list[int] | None = None,
    d_k_max: int = 4096,
    prune: bool = True,
    **kw,
) -> pd.DataFrame:
    """For each block size B (one head per block), the smallest d_k and D_K = h d_k.

    Default block sizes: powers of two from 1 to ``d_model`` (B = d_model is
    the paper's prescribed split), tried in increasing order. With ``prune``,
    a block size is only searched below the best D_K found so far (its row
    then says ``note="pruned at D_K=..."`` if nothing smaller exists), so the
    minimum over B is exact while the search stays cheap. One row per B with
    columns B, h, d_k, D_K, found, note.
    """
    if block_sizes is None:
        block_sizes = [2**i for i in range(int(math.log2(d_model)) + 1)]
    seeds = list(seeds)
    rows = []
    best = None
    for B in sorted(block_sizes):
        c, _ = build(name, m, d_model, seeds[0], d_k=1, B=B, **kw)
        cap = d_k_max if best is None or not prune else min(d_k_max, (best - 1) // c.info.h)
        if cap < 1:
            dk, note = None, f"pruned at D_K={best}"
        else:
            dk, note = min_dk(name, m, d_model, seeds, criterion=criterion, d_k_max=cap, B=B, **kw)
            if dk is None and cap < d_k_max:
                note = f"pruned at D_K={best}" if note != "limit fails" else note
        D_K = None if dk is None else c.info.h * dk
        if D_K is not None and (best is None or D_K < best):
            best = D_K
        rows.append(dict(B=c.info.B, h=c.info.h, d_k=dk, D_K=D_K, found=dk is not None, note=note))
    return pd.DataFrame(rows)

