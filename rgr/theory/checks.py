"""Checking constructions against their theorems (chapter *constructions*).

- :func:`all_pair_scores` / :func:`separation`: the aggregated score of every
  ordered pair (i, j) of items (the diagonal included: it is a non-edge) through
  the one scoring path :func:`rgr.model.attention.scores`, and whether every true
  edge lies above ``tau`` and every non-edge below. By *monotonicity under
  context restriction* (Sec. 4) separation over all of V implies F1 = 1 on
  every context, which :func:`evaluate_contexts` confirms on sampled ones.
- Softmax scores depend on the context, so for Algorithm 2 the same check runs
  over sampled contexts (:func:`evaluate_contexts`).
- :func:`score_terms`: Construction II's score of one head split into the
  signal and the three leakage terms N1, N2, N3 of App. B.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..model.attention import QKWeights, scores
from ..task.contexts import sample
from ..task.graphs import Graph
from ..task.metrics import counts
from .template import Construction


@dataclass(frozen=True)
class _Separation:
    """How the scores of true edges and non-edges sit against ``tau``.

    ``margin = min_edge - max_non_edge`` (> 0 when some threshold separates);
    ``slack = min(min_edge - tau, tau - max_non_edge)`` (> 0 when *this* tau
    does); ``separated`` iff no pair is on the wrong side of tau (an edge needs
    a score > tau, a non-edge a score < tau).
    """

    min_edge: float
    max_non_edge: float
    tau: float
    margin: float
    slack: float
    n_edges: int
    n_non_edges: int
    edge_failures: int
    non_edge_failures: int
    separated: bool


def separation_from_scores(S: torch.Tensor, labels: torch.Tensor, tau: float) -> _Separation:
    """:class:`_Separation` of scores ``S`` against boolean ``labels`` of the same shape."""
    if S.shape != labels.shape:
        raise ValueError(f"S and labels must have the same shape, got {tuple(S.shape)} and {tuple(labels.shape)}")
    S = S.double()
    inf = torch.tensor(float("inf"), dtype=S.dtype)
    n_pos = int(labels.sum())
    min_edge = float(torch.where(labels, S, inf).min()) if n_pos else float("inf")
    max_non = float(torch.where(labels, -inf, S).max()) if n_pos < labels.numel() else float("-inf")
    e_fail = int(((S <= tau) & labels).sum())
    n_fail = int(((S >= tau) & ~labels).sum())
    return _Separation(
        min_edge=min_edge,
        max_non_edge=max_non,
        tau=float(tau),
        margin=min_edge - max_non,
        slack=min(min_edge - tau, tau - max_non),
        n_edges=n_pos,
        n_non_edges=labels.numel() - n_pos,
        edge_failures=e_fail,
        non_edge_failures=n_fail,
        separated=e_fail == 0 and n_fail == 0,
    )


def _head_chunks(w: QKWeights, max_elems: int, n_pairs: int):
    step = max(1, max_elems // max(1, n_pairs))
    for k0 in range(0, w.h, step):
        yield QKWeights(w.W_Q[:, k0 : k0 + step], w.W_K[:, k0 : k0 + step], w.tau)


def all_pair_scores(c: Construction, max_elems: int = 2**24) -> torch.Tensor:
    """Aggregated scores (m, m) of all ordered pairs: the whole vertex set as one context.

    Max-over-heads only (softmax scores depend on the context). Heads are
    scored in chunks through :func:`rgr.model.attention.scores` and max-reduced, so
    memory stays at about ``max_elems`` floats.
    """
    if c.info.aggregation != "max":
        raise ValueError(
            f"all-pairs scores are context-free only for max-over-heads, not {c.info.aggregation!r}; "
            "use evaluate_contexts"
        )
    X_C = c.X[None, None]  # (R=1, n=1, m, d_model)
    m = c.info.m
    out = None
    for w in _head_chunks(c.weights, max_elems, m * m):
        s = scores(X_C, w, "max")[0, 0]
        out = s if out is None else torch.maximum(out, s)
    return out


def separation(c: Construction) -> _Separation:
    """All-pairs separation of a max-over-heads construction (the theorems' event)."""
    S = all_pair_scores(c)
    return separation_from_scores(S, torch.from_numpy(c.adjacency()), c.info.tau)


def _construction_scores(c: Construction, items: torch.Tensor) -> torch.Tensor:
    """Aggregated scores (n, ell, ell) of the construction on contexts ``items`` (n, ell)."""
    X_C = c.X[items][None]  # (1, n, ell, d_model)
    return scores(X_C, c.weights, c.info.aggregation)[0]


@dataclass(frozen=True)
class _ContextCheck:
    """Micro-averaged F1 on sampled contexts, and the separation seen there.

    ``present`` covers the rows whose source has an out-neighbour in the context, ``absent`` the rows whose
    source has none (all non-edges). The split matters for softmax, where a
    row's mass is spread over the context whatever it contains.
    """

    f1: float
    present: _Separation
    absent: _Separation


def evaluate_contexts(
    c: Construction,
    graph: Graph,
    *,
    seed: int = 0,
    n: int = 256,
    ell: int = 16,
    S_all: torch.Tensor | None = None,
) -> _ContextCheck:
    """Score ``n`` sampled test contexts (:func:`rgr.task.contexts.sample`) with the construction.

    Predictions are ``score > tau``; metrics from :func:`rgr.task.metrics.counts`
    over all ordered pairs (diagonal included, always a negative). For
    max-over-heads, ``S_all`` (from :func:`all_pair_scores`) may be passed:
    a context's scores are then read off it (they are its restriction to the
    context's items), which is cheaper than rescoring when D_K is large.
    """
    batch = sample(graph, seed, n, ell=ell, stream="test")
    if S_all is not None:
        if c.info.aggregation != "max":
            raise ValueError("S_all can stand in for context scores only under max-over-heads")
        it = batch.items
        S = S_all[it[:, :, None], it[:, None, :]]
    else:
        S = _construction_scores(c, batch.items)
    tau = c.info.tau
    y = batch.labels
    cnt = counts((S > tau)[None], y[None])
    has = y.any(-1)  # (n, ell): the row's source has a target in the context
    return _ContextCheck(
        f1=float(cnt.f1[0]),
        present=separation_from_scores(S[has], y[has], tau),
        absent=separation_from_scores(S[~has], y[~has], tau),
    )


def leakage_matrix(c: Construction) -> np.ndarray:
    """``delta = X X^T / mu - I`` (m, m), float64: row i is the leakage vector delta_i."""
    X = c.X.double().numpy()
    return X @ X.T / c.info.mu - np.eye(X.shape[0])


def score_terms(c: Construction, k: int, delta: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Head k's all-pairs score split as in App. B.2: ``S^k = signal + N1 + N2 + N3``.

    With ``u_i = x_i X^T / mu = e_i + delta_i``, the query of item i in head k
    is ``A_i + P_i`` where ``A_i = 1[i in V_k] w_{pi_k(i)}`` (the one-hot
    template row) and ``P_i = sum_{s in V_k} delta_i(s) w_{pi_k(s)}`` (leakage);
    the key of j is ``Bk_j + Q_j`` likewise. Then signal = A Bk^T, N1 = A Q^T,
    N2 = P Bk^T, N3 = P Q^T (``score`` is their sum). Also ``n3_mean``, the
    mean of N3 over the signatures given X: with signature entries of mean a
    and variance v, ``d_k [v sum_{s in V_k} delta_i(s) delta_j(pi_k(s))
    + a^2 (sum_{s in V_k} delta_i(s)) (sum_{t in T_k} delta_j(t))]``; N3 minus
    it is the fluctuation that Sec. 5's N3(B) ~ (B/d_model) sqrt(d_k log m)
    describes. All (m, m), float64.
    """
    blk = c.blocks[k]
    src, tgt = blk[:, 0], blk[:, 1]
    m = c.info.m
    if delta is None:
        delta = leakage_matrix(c)
    W = c.signatures
    A = np.zeros((m, W.shape[1]))
    A[src] = W[tgt]
    Bk = np.zeros_like(A)
    Bk[tgt] = W[tgt]
    P = delta[:, src] @ W[tgt]
    Q = delta[:, tgt] @ W[tgt]
    terms = {"signal": A @ Bk.T, "n1": A @ Q.T, "n2": P @ Bk.T, "n3": P @ Q.T}
    terms["score"] = terms["signal"] + terms["n1"] + terms["n2"] + terms["n3"]
    v, a = _signature_moments(c)
    Ds, Dt = delta[:, src], delta[:, tgt]
    terms["n3_mean"] = W.shape[1] * (v * Ds @ Dt.T + a * a * np.outer(Ds.sum(1), Dt.sum(1)))
    return terms


def _signature_moments(c: Construction) -> tuple[float, float]:
    """(variance, mean) of one signature entry."""
    if c.info.signature == "rademacher":
        return 1.0, 0.0
    p = float(c.info.p)
    return p - p * p, p


def limit_scores(c: Construction, max_elems: int = 2**24) -> torch.Tensor:
    """The d_k -> infinity limit of ``S_max / d_k`` (m, m): the template's leakage floor.

    With signature entries of mean a and variance v, ``w_s . w_t / d_k -> v 1[s=t] + a^2``,
    so head k's score per unit width tends to
    ``v sum_{s in V_k} u_i(s) u_j(pi_k(s)) + a^2 (sum_{s in V_k} u_i(s)) (sum_{t in T_k} u_j(t))``
    with ``u_i = x_i X^T / mu``. Whatever survives here is not signature noise
    (which shrinks relative to d_k) but de-embedding leakage, which a wider
    head cannot remove. Max-over-heads constructions only.
    """
    if c.info.aggregation != "max":
        raise ValueError("limit_scores is defined for max-over-heads constructions")
    X = c.X.double()
    U = X @ X.T / c.info.mu  # (m, m) rows u_i
    m = U.shape[0]
    v, a = _signature_moments(c)
    src, tgt = c.padded_blocks()  # index m = a zero row
    UT = torch.cat([U.T, torch.zeros(1, m, dtype=U.dtype)], dim=0)  # (m+1, m): row s is column s of U
    out = torch.full((m, m), -torch.inf, dtype=U.dtype)
    step = max(1, max_elems // (m * m))
    for k0 in range(0, len(c.blocks), step):
        Ts = UT[src[k0 : k0 + step]]  # (chunk, B, m): u_.(s) for the block's sources
        Tt = UT[tgt[k0 : k0 + step]]
        L = v * Ts.transpose(1, 2) @ Tt
        if a:
            L = L + a * a * Ts.sum(1).unsqueeze(2) * Tt.sum(1).unsqueeze(1)
        out = torch.maximum(out, L.amax(0))
    return out


def limit_separation(c: Construction) -> _Separation:
    """:class:`_Separation` of :func:`limit_scores` against ``tau / d_k`` (d_k -> infinity)."""
    S = limit_scores(c)
    return separation_from_scores(S, torch.from_numpy(c.adjacency()), c.info.tau / c.info.d_k)


def score_samples(
    c: Construction,
    graph: Graph | None = None,
    *,
    max_non_edges: int = 20000,
    seed: int = 0,
    n: int = 256,
    ell: int = 16,
    S_all: torch.Tensor | None = None,
) -> pd.DataFrame:
    """Scores of true edges and (a random subset of) non-edges, for histograms.

    Max-over-heads: all ordered pairs of V. Softmax: the pairs of ``n`` sampled
    contexts (needs ``graph``), tagged by whether the row's target is in the
    context. Columns: kind ("edge" / "non-edge"), row ("all", "target in
    context", "target absent"), score, score_over_tau.
    """
    rng = np.random.default_rng(seed)
    if c.info.aggregation == "max":
        S = (all_pair_scores(c) if S_all is None else S_all).double().numpy()
        A = c.adjacency()
        parts = [("edge", "all", S[A]), ("non-edge", "all", S[~A])]
    else:
        if graph is None:
            raise ValueError("softmax scores depend on the context: pass the graph")
        batch = sample(graph, seed, n, ell=ell, stream="test")
        S = _construction_scores(c, batch.items).double().numpy()
        y = batch.labels.numpy()
        has = np.broadcast_to(y.any(-1, keepdims=True), y.shape)
        parts = [("edge", "target in context", S[y]), ("non-edge", "target in context", S[~y & has]),
                 ("non-edge", "target absent", S[~y & ~has])]
    frames = []
    for kind, row, v in parts:
        if kind == "non-edge" and v.size > max_non_edges:
            v = rng.choice(v, max_non_edges, replace=False)
        frames.append(pd.DataFrame({"kind": kind, "row": row, "score": v, "score_over_tau": v / c.info.tau}))
    return pd.concat(frames, ignore_index=True)
