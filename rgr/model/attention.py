"""Key–query scoring: per-head scores and their aggregation over heads (chapter *theory*).

One code path scores learned and constructed weights alike. Weights carry a
leading run axis R so that many runs are scored in one tensor program:

    X_C  (R, n, ell, d_model)   embeddings of n contexts per run
    W_Q  (R, h, d_model, d_k)   per-head query maps
    W_K  (R, h, d_model, d_k)   per-head key maps
    S    (R, n, h, ell, ell)    S[..., k, p, q] = (x_p W_Q^k) . (x_q W_K^k)

Aggregations (``kind``):

- ``"max"``: S_max = max_k S_k (protocol E1, Sec. 3);
- ``"softmax"``: sum_k softmax_q(S_k / sqrt(d_k)) (protocol E5, Sec. 8);
- ``"sum"``: sum_k S_k, the linear ablation that collapses to one head of width D_K.

An edge p -> q is predicted iff the aggregated score exceeds ``tau``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

_AGGREGATIONS: tuple[str, ...] = ("max", "softmax", "sum")


@dataclass(frozen=True)
class QKWeights:
    """Weights of R key–query layers: W_Q, W_K (R, h, d_model, d_k); tau (R,)."""

    W_Q: torch.Tensor
    W_K: torch.Tensor
    tau: torch.Tensor

    def __post_init__(self) -> None:
        if self.W_Q.dim() != 4 or self.W_Q.shape != self.W_K.shape:
            raise ValueError(
                f"W_Q and W_K must both have shape (R, h, d_model, d_k), got {tuple(self.W_Q.shape)} and "
                f"{tuple(self.W_K.shape)}"
            )
        if self.tau.shape != self.W_Q.shape[:1]:
            raise ValueError(f"tau must have shape (R,), got {tuple(self.tau.shape)}")

    @property
    def h(self) -> int:
        return self.W_Q.shape[1]

    @property
    def d_k(self) -> int:
        return self.W_Q.shape[3]

    @staticmethod
    def single(W_Q: torch.Tensor, W_K: torch.Tensor, tau: float) -> "QKWeights":
        """One layer from (h, d_model, d_k) maps and a float threshold (adds the run axis)."""
        return QKWeights(W_Q.unsqueeze(0), W_K.unsqueeze(0), torch.tensor([float(tau)], dtype=W_Q.dtype))


def head_scores(X_C: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor) -> torch.Tensor:
    """Per-head raw scores (R, n, h, ell, ell) from X_C (R, n, ell, d) and W (R, h, d, d_k)."""
    q = torch.einsum("rnld,rhdk->rnhlk", X_C, W_Q)  # (R, n, h, ell, d_k)
    k = torch.einsum("rnld,rhdk->rnhlk", X_C, W_K)  # (R, n, h, ell, d_k)
    return q @ k.transpose(-1, -2)  # (R, n, h, ell, ell)


def scores(X_C: torch.Tensor, w: QKWeights, kind: str = "max") -> torch.Tensor:
    """Aggregated scores (R, n, ell, ell) of weights ``w`` on contexts ``X_C``."""
    if kind not in _AGGREGATIONS:
        raise ValueError(f"kind must be one of {_AGGREGATIONS}, got {kind!r}")
    S = head_scores(X_C, w.W_Q, w.W_K)
    if kind == "softmax":
        return torch.softmax(S / w.d_k**0.5, dim=-1).sum(dim=-3)
    return S.amax(dim=-3) if kind == "max" else S.sum(dim=-3)
