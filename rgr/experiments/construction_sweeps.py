"""Sweeps over the constructions: success rates, smallest budgets, interference (chapter *constructions*).

- :func:`build` makes a graph, an embedding and a construction from a name
  and sizes (one seed draws all three);
- :func:`passes` applies one success criterion to a construction;
- :func:`success_rate` sweeps ``C`` in ``d_k = ceil(C (ln m)^a)`` over seeds;
- :func:`min_dk` / :func:`smallest_budget` find the smallest width (and head
  split) at which a construction succeeds on every seed;
- :mod:`rgr.experiments.construction_table` builds ``data/constructions.csv``
  from :func:`min_dk` and :func:`smallest_budget` (command: ``python -m rgr constructions``);
- :func:`leakage_noise` and :func:`head_split` measure Sec. 5's interference
  mechanism.

Success criteria (``criterion``):

``"tau"``     every ordered pair on the right side of the construction's own
              threshold (all pairs of V for max-over-heads; for softmax the
              rows of sampled contexts that contain the target, Prop. 8.4's event);
``"margin"``  some threshold separates all pairs (``min edge > max non-edge``):
              the construction's weights with a calibrated tau, as a learned
              threshold would give;
``"f1"``      mean micro-F1 >= 0.99 on sampled test contexts with the
              construction's own tau (the learned models' D_K* criterion).
"""

from __future__ import annotations

import math
from functools import lru_cache

import pandas as pd
import torch

from ..task.embeddings import gaussian_unit
from ..task.graphs import Graph, permutation_graph, regular_graph
from ..task.metrics import F1_TARGET
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
from ..theory.constructions import (
    Construction,
    binary_family,
    construct_compressive,
    construct_general_embedding,
    construct_general_graph,
    construct_one_hot,
    construct_softmax,
    gaussian_family,
)

__all__ = [
    "NAMES",
    "CRITERIA",
    "build",
    "passes",
    "success_rate",
    "min_dk",
    "smallest_budget",
    "limit_phase",
    "separation_panels",
    "softmax_background",
    "softmax_at_cells",
    "softmax_cells_summary",
    "coloring_table",
    "CHAPTER_PRESETS",
    "leakage_noise",
    "head_split",
]

NAMES = ("one-hot", "one-hot-rademacher", "compressive", "softmax", "softmax-one-hot", "gun", "rbce", "general-graph")
CRITERIA = ("tau", "margin", "f1")


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
        return construct_softmax(g, torch.eye(m), h=h or 1, embedding="one-hot", **kw), g
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


def passes(
    c: Construction, g: Graph, criterion: str = "tau", *, n_contexts: int = 500, ell: int = 16, seed: int = 0
) -> bool:
    """Whether construction ``c`` of graph ``g`` meets ``criterion`` (see the module doc)."""
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if criterion == "f1":
        return evaluate_contexts(c, g, seed=seed, n=n_contexts, ell=ell).f1 >= F1_TARGET
    if c.info.aggregation == "softmax":
        chk = evaluate_contexts(c, g, seed=seed, n=n_contexts, ell=ell)
        return chk.present.separated if criterion == "tau" else chk.present.margin > 0
    sep = separation(c)
    return sep.separated if criterion == "tau" else sep.margin > 0


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


def separation_panels(specs: list[tuple[str, str, int, int, int, dict]]) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
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


def softmax_background(m: int, hs: list[int], ells: list[int], seed: int = 0, n: int = 200) -> pd.DataFrame:
    """Algorithm 2's weights on one-hot inputs with h heads: what non-owner heads add.

    On target-containing rows, each non-owner head has a zero query, hence a
    uniform softmax: it adds exactly 1/ell to every pair, so the largest
    non-edge score should be about (h - 1)/ell (``predicted``) and the
    threshold 1/2 fails once that reaches 1/2 (Theorem 8.1's ell >= C_ell h).
    """
    g = permutation_graph(m, seed)
    rows = []
    for h in hs:
        c = construct_softmax(g, torch.eye(m), h=h, seed=seed, embedding="one-hot")
        for ell in ells:
            chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
            rows.append(dict(h=h, ell=ell, d_k=c.info.d_k, predicted=(h - 1) / ell,
                             max_non_edge=chk.present.max_non_edge, min_edge=chk.present.min_edge,
                             separated=chk.present.separated, absent_max=chk.absent.max_non_edge,
                             absent_false_positives=chk.absent.non_edge_failures, f1=chk.f1))
    return pd.DataFrame(rows)


def softmax_at_cells(
    cells: list[tuple[int, int]],
    d_ks: list[int],
    ells: list[int],
    seeds: list[int],
    n: int = 200,
) -> pd.DataFrame:
    """Algorithm 2 at trained models' cells (chapter *softmax*), as context F1 against ``ell``.

    For each ``(m, d_model)`` the construction is built twice on the same
    derangement, with ``h = ceil(m / d_model)`` heads (blocks of d_model edges,
    Theorem 8.1's split): on Gaussian unit-norm embeddings of width d_model at
    every width in ``d_ks`` (``inputs = "gaussian"``), and on one-hot inputs,
    where the theorem's embedding precondition holds, at its default width
    ``ceil(2 (ln m)^2)`` (``inputs = "one-hot"``). Each is scored on ``n``
    sampled contexts (rho = 0.5) per ``ell``. ``condition`` says whether
    ``ell >= max(h, ln m)``, the context-length condition with ``C_ell = 1``;
    the non-owner heads' background (h - 1) / ell (``background``) is what it
    keeps below tau = 1/2.
    """
    for name, v in (("d_ks", d_ks), ("ells", ells), ("seeds", seeds)):
        if not len(v):
            raise ValueError(f"{name} must not be empty")
    if min(ells) < 2:
        raise ValueError(f"ells must be >= 2, got {min(ells)}")
    rows = []
    for m, d_model in cells:
        if m < 2 or d_model < 1:
            raise ValueError(f"cells must hold (m >= 2, d_model >= 1), got {(m, d_model)}")
        h = math.ceil(m / d_model)
        for seed in seeds:
            g = permutation_graph(m, seed)
            X = gaussian_unit(m, d_model, seed)
            made = [("gaussian", construct_softmax(g, X, d_k=d_k, h=h, seed=seed)) for d_k in d_ks]
            made.append(("one-hot", construct_softmax(g, torch.eye(m), h=h, seed=seed, embedding="one-hot")))
            for inputs, c in made:
                for ell in ells:
                    if ell > m:
                        continue
                    chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
                    rows.append(dict(m=m, d_model=d_model, inputs=inputs, h=c.info.h, d_k=c.info.d_k,
                                     D_K=c.info.D_K, ell=ell, seed=seed, f1=chk.f1,
                                     separated=chk.present.separated, background=(c.info.h - 1) / ell,
                                     condition=ell >= max(c.info.h, math.log(m))))
    return pd.DataFrame(rows)


def softmax_cells_summary(df: pd.DataFrame, target: float = F1_TARGET) -> pd.DataFrame:
    """Per cell of :func:`softmax_at_cells`: the shortest context at which the one-hot construction's
    mean F1 reaches ``target`` (NaN if none), and the best mean F1 of the Gaussian-input construction
    over every width and length tried."""
    mean = df.groupby(["m", "d_model", "inputs", "d_k", "ell"], as_index=False).agg(f1=("f1", "mean"), h=("h", "first"))
    rows = []
    for (m, d), cell in mean.groupby(["m", "d_model"]):
        oh, ga = cell[cell.inputs == "one-hot"], cell[cell.inputs == "gaussian"]
        ok = oh[oh.f1 >= target]
        best = ga.loc[ga.f1.idxmax()] if len(ga) else None
        rows.append(dict(m=m, d_model=d, h=int(cell.h.iloc[0]), ln_m=math.log(m),
                         one_hot_min_ell=float(ok.ell.min()) if len(ok) else math.nan,
                         gaussian_best_f1=float(best.f1) if best is not None else math.nan,
                         gaussian_best_d_k=int(best.d_k) if best is not None else -1,
                         gaussian_best_ell=int(best.ell) if best is not None else -1))
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


CHAPTER_PRESETS: dict[str, dict] = {
    "smoke": dict(onehot_m=(64,), onehot_seeds=2, book_cell=(128, 32), theory_cell=(256, 256), phase_m=64,
                  phase_d=(16, 64), leak=(128, 16, 32), leak_seeds=1, split_D_K=(256, 1024), split_h=(1, 2, 4),
                  softmax_m=64, softmax_h=(1, 4), ells=(16, 32), gun_cell=(128, 128, 8), regular_r=2, n_seeds=2),
    "book": dict(onehot_m=(64, 256), onehot_seeds=8, book_cell=(256, 32), theory_cell=(1024, 512), phase_m=256,
                 phase_d=(16, 32, 64, 128, 256), leak=(256, 32, 64), leak_seeds=2, split_D_K=(1024, 2048, 4096),
                 split_h=(1, 2, 8), softmax_m=256, softmax_h=(1, 2, 4, 8, 16), ells=(16, 64),
                 gun_cell=(256, 256, 16), regular_r=2, n_seeds=3),
    "paper": dict(onehot_m=(64, 256, 1024), onehot_seeds=20, book_cell=(256, 32), theory_cell=(1024, 512),
                  phase_m=512, phase_d=(16, 32, 64, 128, 256, 512), leak=(512, 32, 64), leak_seeds=5,
                  split_D_K=(512, 1024, 2048, 4096), split_h=(1, 2, 4, 8), softmax_m=512,
                  softmax_h=(1, 2, 4, 8, 16, 32), ells=(16, 64, 128), gun_cell=(256, 256, 16), regular_r=4,
                  n_seeds=5),
}


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
