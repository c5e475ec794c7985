"""One context's pattern against every context's: the seed paper's O(log L) and RGR's budget (chapter *lower bounds*).

Likhosherstov, Choromanski and Weller (arXiv:2106.03764) show that for a *fixed* input of length L
any sparse attention pattern can be approximated with a key–query dimension of O(log L): the weights
may depend on the input. RGR asks one set of weights to serve every context drawn from a graph on
m items, which costs ``D_K = Theta(m' log m' / d_model)`` (Sec. 9 and the constructions).

:func:`per_context_dk` makes the seed paper's side concrete with rgr's items. For one sampled context
(ell items, ell <= d_model), the embeddings of its items are linearly independent, so the
pseudo-inverse ``X_C^+`` de-embeds them exactly. Give each item a Rademacher signature of width d,
write query row ``w_{pi(i)}`` for every source whose target is in the context (zero otherwise) and key
row ``w_j``; then ``W_Q = X_C^+ Q'``, ``W_K = X_C^+ K'`` score pair (i, j) exactly ``w_{pi(i)} . w_j``
and tau = d/2 separates the pattern once the ell^2 Rademacher sums of non-edges all stay below d/2:
d ~ 8 ln(ell) suffices w.h.p. (Hoeffding and a union bound over the ell^2 pairs:
``ell^2 exp(-d/8) < 1``), whatever m is.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from ..task.contexts import sample
from ..task.embeddings import gaussian_unit
from ..task.graphs import permutation_graph
from ..task.rng import derive_seed

__all__ = ["hoeffding_dk", "context_separates", "per_context_dk", "per_context_table"]

_STREAM = 23  # random stream of the per-context signatures


def hoeffding_dk(ell: int) -> int:
    """Smallest d with ``ell^2 exp(-d/8) < 1``: a width at which a union bound over a context's pairs holds."""
    if not isinstance(ell, (int, np.integer)) or ell < 2:
        raise ValueError(f"ell must be an integer >= 2, got {ell!r}")
    return math.floor(16 * math.log(ell)) + 1


def context_separates(X_C: torch.Tensor, labels: torch.Tensor, W: np.ndarray) -> bool:
    """Whether the per-context weights built from signature rows ``W`` (ell, d) separate ``labels`` at d/2.

    ``X_C`` (ell, d_model) must have full row rank; ``labels`` (ell, ell) bool with at most one
    positive per row. Scores go through the model space: ``(X_C W_Q)(X_C W_K)^T``.
    """
    ell, d = W.shape
    X = X_C.double().numpy()
    y = labels.numpy()
    if np.linalg.matrix_rank(X) < ell:
        raise ValueError("the context's embeddings must be linearly independent (ell <= d_model)")
    Xp = np.linalg.pinv(X)  # (d_model, ell): X Xp = I on the context
    Q = np.zeros((ell, d))
    rows, cols = np.nonzero(y)
    Q[rows] = W[cols]
    S = (X @ (Xp @ Q)) @ (X @ (Xp @ W)).T
    return bool((S[y] > d / 2).all() and (S[~y] < d / 2).all())


def per_context_dk(m: int, d_model: int, ell: int, seed: int, n: int = 20, d_max: int = 512) -> np.ndarray:
    """For each of ``n`` sampled contexts, the smallest signature width d (searched 1, 2, ...) that separates it.

    Signature columns are nested (column t is the same whatever d is), so the search is over a
    single draw per context; d_max bounds it (a context that needs more returns d_max + 1).
    """
    if ell > d_model:
        raise ValueError(f"ell must be <= d_model for an exact per-context de-embedding, got ell={ell}, d_model={d_model}")
    g = permutation_graph(m, seed)
    X = gaussian_unit(m, d_model, seed)
    batch = sample(g, seed, n, ell=ell, stream="test")
    out = np.empty(n, dtype=int)
    for c in range(n):
        rng = np.random.default_rng(derive_seed(seed * 100_003 + c, _STREAM))
        W = np.where(rng.random((ell, d_max)) < 0.5, 1.0, -1.0)
        X_C, y = X[batch.items[c]], batch.labels[c]
        lo, hi = 0, 1
        while hi <= d_max and not context_separates(X_C, y, W[:, :hi]):
            lo, hi = hi, 2 * hi
        if hi > d_max:
            out[c] = d_max + 1
            continue
        while hi - lo > 1:  # success is not strictly monotone in d: report the first width of the last bracket
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if context_separates(X_C, y, W[:, :mid]) else (mid, hi)
        out[c] = hi
    return out


def per_context_table(ms: list[int], ells: list[int], d_model: int, seeds: list[int], n: int = 20) -> pd.DataFrame:
    """One row per (m, ell, seed): median and max per-context width over ``n`` contexts, and 16 ln(ell)."""
    rows = []
    for m in ms:
        for ell in ells:
            for s in seeds:
                d = per_context_dk(m, d_model, ell, s, n=n)
                rows.append(dict(m=m, ell=ell, seed=s, d_median=float(np.median(d)), d_max=int(d.max()),
                                 hoeffding=hoeffding_dk(ell), ln_ell=math.log(ell)))
    return pd.DataFrame(rows)
