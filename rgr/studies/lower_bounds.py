"""The chapter *lower bounds*' live studies, sized by :class:`LowerBoundsPreset`: Theorem 9.2 on trained models
(:func:`trained_margins`) and the seed paper's per-context width (:func:`per_context_table`).

**Theorem 9.2's normalised margin.** Theorem 9.2 counts the graphs a QK channel can recover *with margin
gamma* once the parameters and embeddings are normalised, ``||U||_F, ||V||_F, |tau|, ||x_v|| <= 1`` (its (26));
the volumetric gamma/4-net of that ball has at most ``(12/gamma)^(2 d_model D_K + 1)`` points, so

    D_K >= (log2 binom(m(m-1), m') / log2(12/gamma) - 1) / (2 d_model),

the bit-budget bound with ``b = log2(12/gamma)`` bits per parameter. :func:`_normalised_margin`
measures gamma of a trained max-over-heads model over all ordered pairs (its length-2 contexts, the
proof's reduction), :func:`rgr.theory.bounds.margin_bound_DK` turns it into the bound, and :func:`trained_margins`
trains the models (read by :func:`rgr.results.lower_bounds.margin_finding`).

**One context's pattern against every context's: the seed paper's O(log L) and RGR's budget.**
Likhosherstov, Choromanski and Weller (arXiv:2106.03764) show that self-attention with *fixed* parameters can
approximate any sparse pattern of length L (a bounded number of non-zeros per row and column, up to
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
(:func:`first_separating_width`), with a tie counted as a failure (the strict inequalities of the
construction), and the floating-point side is checked once per context: the pseudo-inverse must
de-embed the context to within :data:`_DE_EMBED_TOL` (:func:`_de_embedding_error`), else a ValueError.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..experiments.engine.config import RunConfig
from ..experiments.engine.loop import train_run
from ..protocol import pick_preset
from ..task.contexts import build_task, sample
from ..task.embeddings import gaussian_unit
from ..task.graphs import permutation_graph
from ..task.rng import derive_seed
from ..theory.bounds import bit_budget_DK, margin_bits, margin_bound_DK


@dataclass(frozen=True)
class LowerBoundsPreset:
    """Chapter *lower bounds*: Theorem 9.2 on trained models and the seed paper's per-context width
    (smoke / book / paper, as every chapter preset: :func:`rgr.protocol.pick_preset`)."""

    margin_runs: tuple[tuple[int, int, int, int], ...]  # Theorem 9.2: trained (m, d_model, h, d_k)
    margin_max_steps: int
    context_ms: tuple[int, ...]  # seed paper: per-context width
    context_ells: tuple[int, ...]
    context_d_model: int
    context_n: int
    budget_d_model: int  # the d_model of the all-contexts budget (data/base.csv rows)

    @classmethod
    def named(cls, preset: str) -> LowerBoundsPreset:
        return pick_preset(_PRESETS, preset, "lower bounds")


_PRESETS: dict[str, LowerBoundsPreset] = {
    "smoke": LowerBoundsPreset(
        margin_runs=((32, 32, 1, 4),), margin_max_steps=3000, context_ms=(64,), context_ells=(4, 16),
        context_d_model=32, context_n=5, budget_d_model=8,
    ),
    "book": LowerBoundsPreset(
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20)), margin_max_steps=20_000,
        context_ms=(64, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64, context_n=20, budget_d_model=32,
    ),
    "paper": LowerBoundsPreset(
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20), (128, 64, 1, 7)),
        margin_max_steps=20_000, context_ms=(64, 256, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64,
        context_n=50, budget_d_model=32,
    ),
}


# ---------------------------------------------------------------------------------------
# Theorem 9.2: the normalised margin of trained models


@dataclass(frozen=True)
class _Margin:
    """The all-pairs margin of one model after Theorem 9.2's normalisation.

    ``gamma = min_pairs sign * (S - tau) / scale`` with ``scale = max(||U||_F ||V||_F max||x||^2, |tau|)``
    (edges +, non-edges -); ``gamma <= 0`` means some pair is on the wrong side (the model does not
    recover the graph on every length-2 context, whatever its F1 on longer ones).
    """

    gamma: float
    raw_margin: float
    scale: float
    pair_errors: int


def _normalised_margin(W_Q: torch.Tensor, W_K: torch.Tensor, tau: float, X: torch.Tensor,
                      adjacency: np.ndarray) -> _Margin:
    """:class:`_Margin` of max-over-heads weights (h, d_model, d_k) on embeddings X (m, d_model)."""
    Xd, Q, K = X.double(), W_Q.double(), W_K.double()
    S = ((Xd @ Q) @ (Xd @ K).transpose(1, 2)).amax(0).numpy()  # (m, m): max over heads
    A = np.asarray(adjacency, dtype=bool)
    off = ~np.eye(A.shape[0], dtype=bool)
    signed = np.where(A, S - tau, tau - S)[off]
    fro = float(Q.norm() * K.norm())  # ||U||_F ||V||_F of the concatenated heads
    scale = max(fro * float(Xd.norm(dim=1).max()) ** 2, abs(tau))
    raw = float(signed.min())
    return _Margin(gamma=raw / scale, raw_margin=raw, scale=scale, pair_errors=int((signed <= 0).sum()))


def trained_margins(configs: list[RunConfig]) -> pd.DataFrame:
    """Train each config (CPU), then its normalised margin, Theorem 9.2's bound at that margin and the bit bound.

    One row per config: cell, h, D_K, steps, test F1, gamma, pair errors, ``bound_DK`` (at the measured
    gamma, NaN if gamma <= 0) and ``bound_DK_b32`` (32 bits per parameter) for comparison.
    """
    rows = []
    for cfg in configs:
        r = train_run(cfg, device="cpu", progress=False, keep_weights=True)
        g, X = build_task(cfg)
        mg = _normalised_margin(r.weights["W_Q"], r.weights["W_K"], float(r.tau), X, g.adjacency())
        bound = margin_bound_DK(cfg.m, g.m_edges, cfg.d_model, min(mg.gamma, 1.0)) if mg.gamma > 0 else math.nan
        rows.append(dict(m=cfg.m, d_model=cfg.d_model, h=cfg.h, d_k=cfg.d_k, D_K=cfg.D_K, seed=cfg.seed,
                         steps=r.steps, test_f1=r.test_f1, gamma=mg.gamma, pair_errors=mg.pair_errors,
                         bits=margin_bits(min(mg.gamma, 1.0)) if mg.gamma > 0 else math.nan, bound_DK=bound,
                         bound_DK_b32=bit_budget_DK(cfg.m, g.m_edges, cfg.d_model, 32.0)))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------
# the seed paper: one context's width


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


def _check_de_embedding(X_C: torch.Tensor) -> None:
    err = _de_embedding_error(X_C)
    if not err <= _DE_EMBED_TOL:
        raise ValueError(f"X_C: the context's embeddings must be linearly independent (ell <= d_model) and well "
                         f"conditioned; X_C X_C^+ is off the identity by {err:.3g} > the tolerance {_DE_EMBED_TOL:g}")


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
