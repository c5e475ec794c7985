"""Theorem 9.2 on trained models: the normalised margin and the lower bound it implies (chapter *lower bounds*).

Theorem 9.2 counts the graphs a QK channel can recover *with margin gamma* once the parameters and
embeddings are normalised, ``||U||_F, ||V||_F, |tau|, ||x_v|| <= 1`` (its (26)); the volumetric
gamma/4-net of that ball has at most ``(12/gamma)^(2 d_model D_K + 1)`` points, so

    D_K >= (log2 binom(m(m-1), m') / log2(12/gamma) - 1) / (2 d_model),

the bit-budget bound with ``b = log2(12/gamma)`` bits per parameter. :func:`_normalised_margin`
measures gamma of a trained max-over-heads model over all ordered pairs (its length-2 contexts, the
proof's reduction), :func:`rgr.theory.bounds.margin_bound_DK` turns it into the bound, and :func:`trained_margins`
trains the models (chapter *lower bounds*; read by :func:`rgr.results.lower_bounds.margin_finding`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ..experiments.engine.config import RunConfig
from ..experiments.engine.loop import train_run
from ..task.contexts import build_task
from ..theory.bounds import bit_budget_DK, margin_bits, margin_bound_DK

__all__ = ["trained_margins"]


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
