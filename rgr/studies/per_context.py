"""One context's pattern against every context's: the seed paper's O(log L) and RGR's budget (chapter *lower bounds*).

Likhosherstov, Choromanski and Weller (arXiv:2106.03764) show that self-attention with *fixed* parameters
can approximate any sparse pattern of length L (a bounded number of non-zeros per row and column, up to
row rescaling) by choosing the *inputs* alone, with a key–query dimension d = O(log L): "while the
parameters of self-attention are fixed, various sparse matrices can be approximated by only modifying the
inputs". RGR fixes the other side: the inputs (each item's embedding) are given, and one set of weights
must serve every context drawn from a graph on m items, which costs ``D_K = Theta(m' log m' / d_model)``
(Sec. 9 and the constructions).

:func:`per_context_table` computes the mirror of the seed paper's setting with rgr's items: embeddings fixed,
weights fitted to *one* context. Its independence from m holds by construction (only the ell items of the
context enter), so it is a sanity check, not a measurement. For one sampled context
(ell items, ell <= d_model), the embeddings of its items are linearly independent, so the
pseudo-inverse ``X_C^+`` de-embeds them exactly. Give each item a Rademacher signature of width d,
write query row ``w_{pi(i)}`` for every source whose target is in the context (zero otherwise) and key
row ``w_j``; then ``W_Q = X_C^+ Q'``, ``W_K = X_C^+ K'`` score pair (i, j) exactly ``w_{pi(i)} . w_j``
and tau = d/2 separates the pattern once the ell^2 Rademacher sums of non-edges all stay below d/2:
``d > 16 ln(ell)`` suffices w.h.p. (Hoeffding and a union bound over the ell^2 pairs:
``ell^2 exp(-d/8) < 1``), whatever m is.

Exact arithmetic. The scores are integers (sums of d products of +-1) and can equal the threshold d/2
exactly whenever 4 divides d. Computed through the model space in floating point, such a tie lands at
d/2 +- 1e-14, on a side that the BLAS kernel decides (OpenBLAS picks its kernel by CPU), so a chapter
built on it would differ between machines. The separation is therefore decided on the integer scores
(:func:`_signature_scores`), with a tie counted as a failure (the strict inequalities of the
construction), and the floating-point side is checked once per context: the pseudo-inverse must
de-embed the context to within :data:`_DE_EMBED_TOL` (:func:`_de_embedding_error`), else a ValueError.
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

__all__ = ["context_separates", "first_separating_width", "per_context_table"]

_STREAM = 23  # random stream of the per-context signatures
# largest entry of |X_C X_C^+ - I| accepted: the model-space scores are then within
# 2 * _DE_EMBED_TOL * ell * d (+ rounding) of the integer ones, far below the 1/2 that separates two integers
_DE_EMBED_TOL = 1e-9


def _hoeffding_dk(ell: int) -> int:
    """Smallest d with ``ell^2 exp(-d/8) < 1``: a width at which a union bound over a context's pairs holds."""
    if not isinstance(ell, (int, np.integer)) or ell < 2:
        raise ValueError(f"ell must be an integer >= 2, got {ell!r}")
    return math.floor(16 * math.log(ell)) + 1


def _de_embedding_error(X_C: torch.Tensor) -> float:
    """``max |X_C X_C^+ - I|``: how far the pseudo-inverse is from de-embedding the context (0 in exact arithmetic;
    about 1 when the rows of ``X_C`` are linearly dependent)."""
    X = X_C.double().numpy()
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"X_C must be a non-empty (ell, d_model) matrix, got shape {tuple(X.shape)}")
    return float(np.abs(X @ np.linalg.pinv(X) - np.eye(X.shape[0])).max())


def _check_signatures(labels: torch.Tensor, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``labels`` as a bool array and ``W`` as int64, both validated."""
    y = np.asarray(labels, dtype=bool)
    if W.ndim != 2 or y.shape != (W.shape[0], W.shape[0]):
        raise ValueError(f"labels must be (ell, ell) for W of shape (ell, d), got {y.shape} and {W.shape}")
    if not np.isin(W, (-1, 1)).all():
        raise ValueError("W must hold Rademacher signatures: every entry +1 or -1")
    if (y.sum(axis=1) > 1).any():
        raise ValueError("labels must have at most one positive per row (one target per source)")
    return y, W.astype(np.int64)


def _signature_scores(labels: torch.Tensor, W: np.ndarray) -> np.ndarray:
    """The construction's scores ``w_{pi(i)} . w_j`` (ell, ell) as exact integers (int64); rows without an
    in-context target score 0. ``W`` (ell, d) holds +-1 signatures, ``labels`` (ell, ell) at most one positive per
    row."""
    y, Wi = _check_signatures(labels, W)
    Q = np.zeros_like(Wi)
    rows, cols = np.nonzero(y)
    Q[rows] = Wi[cols]
    return Q @ Wi.T


def _check_de_embedding(X_C: torch.Tensor) -> None:
    err = _de_embedding_error(X_C)
    if not err <= _DE_EMBED_TOL:
        raise ValueError(f"X_C: the context's embeddings must be linearly independent (ell <= d_model) and well "
                         f"conditioned; X_C X_C^+ is off the identity by {err:.3g} > the tolerance {_DE_EMBED_TOL:g}")


def context_separates(X_C: torch.Tensor, labels: torch.Tensor, W: np.ndarray) -> bool:
    """Whether the per-context weights built from signature rows ``W`` (ell, d) separate ``labels`` at d/2.

    ``X_C`` (ell, d_model) must de-embed exactly (full row rank, checked to :data:`_DE_EMBED_TOL`); the
    scores it then produces are the integers of :func:`_signature_scores`, compared with d/2 exactly:
    every edge strictly above, every non-edge strictly below (a score equal to d/2 fails).
    """
    _check_de_embedding(X_C)
    d = W.shape[1]
    S, y = _signature_scores(labels, W), np.asarray(labels, dtype=bool)
    return bool((2 * S[y] > d).all() and (2 * S[~y] < d).all())


def first_separating_width(labels: torch.Tensor, W: np.ndarray) -> int:
    """The smallest d such that the first d columns of ``W`` separate ``labels`` at d/2 (integer scores, a tie
    fails), or ``W.shape[1] + 1`` if none does. Success is not monotone in d, so every width is tried."""
    y, Wi = _check_signatures(labels, W)
    Q = np.zeros_like(Wi)
    rows, cols = np.nonzero(y)
    Q[rows] = Wi[cols]
    S = np.cumsum(Q.T[:, :, None] * Wi.T[:, None, :], axis=0)  # S[k-1] = scores at width k (d_max, ell, ell)
    width = np.arange(1, Wi.shape[1] + 1)
    ok = (2 * S[:, ~y] < width[:, None]).all(axis=1)
    if y.any():
        ok &= (2 * S[:, y] > width[:, None]).all(axis=1)
    hit = np.flatnonzero(ok)
    return int(width[hit[0]]) if len(hit) else Wi.shape[1] + 1


def _per_context_dk(m: int, d_model: int, ell: int, seed: int, n: int = 20, d_max: int = 512) -> np.ndarray:
    """For each of ``n`` sampled contexts, the smallest signature width d (1, 2, ..., d_max) that separates it.

    Signature columns are nested (column t is the same whatever d is), so the search is over a
    single draw per context; a context that needs more than d_max returns d_max + 1. Exact: integer
    scores (:func:`first_separating_width`) once the context's de-embedding is checked.
    """
    if ell > d_model:
        raise ValueError(f"ell must be <= d_model for an exact per-context de-embedding, got ell={ell}, "
                         f"d_model={d_model}")
    g = permutation_graph(m, seed)
    X = gaussian_unit(m, d_model, seed)
    batch = sample(g, seed, n, ell=ell, stream="test")
    out = np.empty(n, dtype=int)
    for c in range(n):
        rng = np.random.default_rng(derive_seed(seed * 100_003 + c, _STREAM))
        W = np.where(rng.random((ell, d_max)) < 0.5, 1, -1)
        _check_de_embedding(X[batch.items[c]])
        out[c] = first_separating_width(batch.labels[c], W)
    return out


def per_context_table(ms: list[int], ells: list[int], d_model: int, seeds: list[int], n: int = 20) -> pd.DataFrame:
    """One row per (m, ell, seed): median and max per-context width over ``n`` contexts, and 16 ln(ell)."""
    rows = []
    for m in ms:
        for ell in ells:
            for s in seeds:
                d = _per_context_dk(m, d_model, ell, s, n=n)
                rows.append(dict(m=m, ell=ell, seed=s, d_median=float(np.median(d)), d_max=int(d.max()),
                                 hoeffding=_hoeffding_dk(ell), ln_ell=math.log(ell)))
    return pd.DataFrame(rows)
