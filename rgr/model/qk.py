"""Stacked key–query models: R independent layers as one ``nn.Module`` (chapter *theory*).

The model of Sec. 3 of the book's *theory* chapter, and the variants the
experiments train (protocol E1, E5, E6):

- ``"max"``     S = max_k S_k, threshold tau (E1, max over heads);
- ``"softmax"`` S = sum_k softmax_q(S_k / sqrt(d_k)), threshold tau (E5);
- ``"sum"``     S = sum_k S_k, the linear ablation (one head of width D_K in disguise);
- ``"value"``   S = max_k S_k as mixing weights of a frozen random value map:
  prediction ``S V_C`` with ``V_C = X_C W_V`` (E6, the value channel).

Every parameter carries a leading run axis R, so R runs with the same
d_model but their own graphs, embeddings, seeds, head counts and head widths
train as one tensor program (the *permutation sweeps* chapter;
:mod:`rgr.experiments.engine`). Runs never mix: every operation below acts on
each run's slice separately.

Mixed stacks. The stack has h heads of width d_k (its widest); run r uses its
first ``heads[r]`` heads and their first ``d_ks[r]`` columns. The other columns
of W_Q and W_K are zero and stay zero in training (their gradient is exactly
zero: a zero key column makes the query column's gradient zero and vice
versa, and Adam with weight decay 0 leaves a parameter with zero gradient
where it is); the heads a run lacks are masked (minus infinity before the max,
left out of the softmax sum). The softmax scale is each run's own
``d_ks[r]^-1/2``. ``heads``/``d_ks`` default to the stack's h and d_k.

Parameter layout (heads side by side, as in a fused ``c_attn``):

    W_Q, W_K  (R, d_model, D_K)   head k = columns k*d_k .. (k+1)*d_k - 1
    tau       (R,)                the threshold (unused by "value")
    W_V       (R, d_model, d_msg) frozen buffer ("value" only)
    heads     (R,)                each run's head count (<= h); d_ks (R,) each run's d_k

:meth:`QKModel.weights` gives the same numbers as :class:`rgr.model.attention.QKWeights`
((R, h, d_model, d_k) per-head maps), so learned and constructed weights are
scored by one code path when needed.

Speed (it decides how many runs a sweep can afford): ``forward`` is one
autograd Function whose backward is written out (the same math as autograd of
:func:`rgr.model.attention.scores`, which the tests check), and evaluation on fixed
context sets reads scores off per-item tables (:meth:`QKModel.item_tables`,
:meth:`QKModel.scores_from_tables`) or off a table of all item pairs
(:meth:`QKModel.pair_scores`, :func:`context_scores`) instead of projecting
every item once per context.
"""

from __future__ import annotations

import torch
from torch import nn

from ..protocol import MODEL_KINDS
from .attention import QKWeights


class QKModel(nn.Module):
    """R stacked key–query layers of one kind (see the module docstring)."""

    def __init__(
        self,
        W_Q: torch.Tensor,
        W_K: torch.Tensor,
        tau: torch.Tensor,
        h: int,
        kind: str = "max",
        W_V: torch.Tensor | None = None,
        heads: torch.Tensor | None = None,
        d_ks: torch.Tensor | None = None,
    ) -> None:
        super().__init__()
        if kind not in MODEL_KINDS:
            raise ValueError(f"kind must be one of {MODEL_KINDS}, got {kind!r}")
        if W_Q.dim() != 3 or W_Q.shape != W_K.shape:
            raise ValueError(
                f"W_Q and W_K must both have shape (R, d_model, D_K), got {tuple(W_Q.shape)} and {tuple(W_K.shape)}"
            )
        R, _, D_K = W_Q.shape
        if not isinstance(h, int) or h < 1 or D_K % h:
            raise ValueError(f"h must be a positive divisor of D_K={D_K}, got {h!r}")
        if tau.shape != (R,):
            raise ValueError(f"tau must have shape (R,)=({R},), got {tuple(tau.shape)}")
        if (kind == "value") != (W_V is not None):
            raise ValueError("W_V must be given exactly when kind == 'value'")
        if W_V is not None and (W_V.dim() != 3 or W_V.shape[:2] != W_Q.shape[:2]):
            raise ValueError(f"W_V must have shape (R, d_model, d_msg), got {tuple(W_V.shape)}")
        d_k = D_K // h
        heads = torch.full((R,), h, dtype=torch.long, device=W_Q.device) if heads is None else heads.to(W_Q.device)
        d_ks = torch.full((R,), d_k, dtype=torch.long, device=W_Q.device) if d_ks is None else d_ks.to(W_Q.device)
        if heads.shape != (R,) or bool((heads < 1).any() | (heads > h).any()):
            raise ValueError(f"heads must have shape (R,)=({R},) with values in [1, {h}], got {heads.tolist()}")
        if d_ks.shape != (R,) or bool((d_ks < 1).any() | (d_ks > d_k).any()):
            raise ValueError(f"d_ks must have shape (R,)=({R},) with values in [1, {d_k}], got {d_ks.tolist()}")
        self.kind = kind
        self.h = h
        self.register_buffer("heads", heads.long().clone())
        self.register_buffer("d_ks", d_ks.long().clone())
        # (R, 1, h, 1, 1) bool, None when every run has every head (the same-shape stack pays nothing)
        mask = torch.arange(h, device=W_Q.device) < heads.view(R, 1)
        self.head_mask = None if bool(mask.all()) else mask.view(R, 1, h, 1, 1)
        # softmax scale d_k^-1/2 per run: a float when all runs share d_k, else (R, 1, 1, 1, 1)
        same_dk = bool((d_ks == d_k).all())
        self.scale = d_k**-0.5 if same_dk else d_ks.to(W_Q.dtype).pow(-0.5).view(R, 1, 1, 1, 1)
        self.W_Q = nn.Parameter(W_Q.clone())
        self.W_K = nn.Parameter(W_K.clone())
        # "value" has no threshold; keep it frozen so every kind has the same fields
        self.tau = nn.Parameter(tau.clone(), requires_grad=kind != "value")
        self.register_buffer("W_V", None if W_V is None else W_V.clone())

    # ---- shapes ---------------------------------------------------------------------
    @property
    def R(self) -> int:
        return self.W_Q.shape[0]

    @property
    def d_model(self) -> int:
        return self.W_Q.shape[1]

    @property
    def D_K(self) -> int:
        return self.W_Q.shape[2]

    @property
    def d_k(self) -> int:
        return self.D_K // self.h

    # ---- conversions ----------------------------------------------------------------
    def weights(self) -> QKWeights:
        """Detached per-head weights, W_Q, W_K (R, h, d_model, d_k), as :mod:`rgr.model.attention` wants
        (a mixed stack's padding included: see :meth:`run_weights` for one run's own)."""
        split = lambda W: W.detach().view(self.R, self.d_model, self.h, self.d_k).permute(0, 2, 1, 3)
        return QKWeights(split(self.W_Q), split(self.W_K), self.tau.detach())

    def run_weights(self, r: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Run r's own per-head W_Q, W_K (heads[r], d_model, d_ks[r]), its padding cut off (copies)."""
        w, h, d_k = self.weights(), int(self.heads[r]), int(self.d_ks[r])
        return w.W_Q[r, :h, :, :d_k].clone(), w.W_K[r, :h, :, :d_k].clone()

    def select(self, idx: torch.Tensor) -> "QKModel":
        """A new model holding runs ``idx`` only (copies)."""
        W_V = None if self.W_V is None else self.W_V[idx]
        return QKModel(self.W_Q.detach()[idx], self.W_K.detach()[idx], self.tau.detach()[idx], self.h, kind=self.kind,
                       W_V=W_V, heads=self.heads[idx], d_ks=self.d_ks[idx])

    # ---- forward --------------------------------------------------------------------
    @property
    def aggregation(self) -> str:
        """How heads combine: "max", "softmax" or "sum" ("value" aggregates by max)."""
        return "max" if self.kind == "value" else self.kind

    @torch.no_grad()
    def scores_for_step(self, X_C: torch.Tensor) -> tuple[torch.Tensor, tuple]:
        """:meth:`forward` without autograd, and what :meth:`grads` needs (the engine's step writes its own)."""
        return _scores_forward(X_C, self.W_Q, self.W_K, self.h, self.aggregation, self.head_mask, self.scale)

    @torch.no_grad()
    def grads(self, saved: tuple, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """dL/dW_Q, dL/dW_K from dL/dS ``g`` and :meth:`scores_for_step`'s ``saved``."""
        return _scores_backward(saved, g)

    def forward(self, X_C: torch.Tensor) -> torch.Tensor:
        """Aggregated scores S (R, n, ell, ell): S[r, i, p, q] scores the pair item_p -> item_q."""
        return _AggregatedScores.apply(X_C, self.W_Q, self.W_K, self.h, self.aggregation, self.head_mask, self.scale)

    @torch.no_grad()
    def item_tables(self, X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-head queries and keys of every item, (R, h, m, d_k) each, from X (R, m, d_model)."""
        R, m, _ = X.shape
        heads = lambda W: torch.bmm(X, W).view(R, m, self.h, self.d_k).transpose(1, 2).contiguous()
        return heads(self.W_Q), heads(self.W_K)

    @torch.no_grad()
    def scores_from_tables(self, tables: tuple[torch.Tensor, torch.Tensor], items: torch.Tensor) -> torch.Tensor:
        """Aggregated scores (R, n, ell, ell) of contexts ``items`` (R, n, ell), read off :meth:`item_tables`.

        Equal to ``forward`` on the gathered embeddings (up to float rounding),
        but each item is projected once rather than once per context, and the
        rows are gathered straight into the per-head layout: far cheaper for the
        fixed validation and test sets, where n ell >> m.
        """
        Q, K = tables
        R, h, m, d_k = Q.shape
        n, ell = items.shape[1:]
        first_row = torch.arange(R * h, device=items.device).view(R, 1, h, 1) * m  # of (run, head) in a flat table
        rows = (first_row + items.unsqueeze(2)).reshape(-1)  # (R, n, h, ell) flattened
        q = Q.view(R * h * m, d_k).index_select(0, rows).view(R * n * h, ell, d_k)
        k = K.view(R * h * m, d_k).index_select(0, rows).view(R * n * h, ell, d_k)
        S = torch.bmm(q, k.transpose(1, 2)).view(R, n, h, ell, ell)
        return _aggregate(S, self.aggregation, self.head_mask, self.scale)[0]

    @torch.no_grad()
    def pair_scores(self, X: torch.Tensor) -> torch.Tensor:
        """Aggregated scores of every ordered item pair, (R, m, m), for "max"/"sum"/"value" models.

        A context's scores are a sub-matrix of this table (:func:`context_scores`),
        which makes evaluation on many contexts cheap when m^2 < n ell^2. Softmax
        scores depend on the whole context, so they have no such table.
        """
        if self.aggregation == "softmax":
            raise ValueError("pair_scores needs a context-free aggregation ('max', 'sum' or 'value'), not 'softmax'")
        Q, K = self.item_tables(X)  # (R, h, m, d_k) each
        out = torch.bmm(Q[:, 0], K[:, 0].transpose(1, 2))  # (R, m, m), head 0 (every run has it)
        for k in range(1, self.h):  # one head at a time keeps memory at one (R, m, m) table
            S_k = torch.bmm(Q[:, k], K[:, k].transpose(1, 2))
            if self.aggregation == "max":
                if self.head_mask is not None:  # a run without head k: its (zero) scores must not win
                    S_k.masked_fill_(~self.head_mask[:, 0, k], -torch.inf)
                out = torch.maximum(out, S_k, out=out)
            else:
                out.add_(S_k)  # a head a run lacks scores exactly zero
        return out

    def predict_edges(self, S: torch.Tensor) -> torch.Tensor:
        """Edge decisions S > tau (R, n, ell, ell) bool."""
        return S > self.tau.view(-1, *(1,) * (S.dim() - 1))

    def messages(self, X_C: torch.Tensor) -> torch.Tensor:
        """Value vectors V_C = X_C W_V (R, n, ell, d_msg) ("value" only)."""
        if self.W_V is None:
            raise ValueError(f"messages needs a value map; this model's kind is {self.kind!r}")
        R, n, ell, d = X_C.shape
        return torch.bmm(X_C.reshape(R, n * ell, d), self.W_V).view(R, n, ell, -1)  # (R, n, ell, d_msg)


# ---- the score computation, with a hand-written backward ------------------------------
# Autograd of the few lines in _AggregatedScores.forward spends most of a small
# training step on bookkeeping and layout copies (and amax's backward builds
# masks over all heads). The backward below is the same math, written out; the
# tests check it against autograd of rgr.model.attention.scores.


def _project(X_C: torch.Tensor, W_Q: torch.Tensor, W_K: torch.Tensor, h: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-head queries and keys, *transposed*: q^T, k^T (R*n*h, d_k, ell) each, from X_C (R, n, ell, d).

    W^T X_C^T is computed rather than X_C W: its rows come out grouped by head,
    so for one context per run (training) no layout copy is needed, here or in
    the backward pass (bmm reads transposed operands in place).
    """
    R, n, ell, d = X_C.shape
    d_k = W_Q.shape[-1] // h
    x_t = X_C.reshape(R, n * ell, d).transpose(1, 2)  # (R, d_model, n*ell)

    def heads(W: torch.Tensor) -> torch.Tensor:
        y = torch.bmm(W.transpose(1, 2), x_t).view(R, h, d_k, n, ell)  # (R, h, d_k, n, ell)
        return y.permute(0, 3, 1, 2, 4).reshape(R * n * h, d_k, ell)  # (R*n*h, d_k, ell); a view when n == 1

    return heads(W_Q), heads(W_K)


def _aggregate(
    S: torch.Tensor, agg: str, mask: torch.Tensor | None, scale: float | torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-head scores (R, n, h, ell, ell) -> aggregated (R, n, ell, ell), and the softmax P if any.

    ``mask`` (R, 1, h, 1, 1) marks each run's heads (None: all); ``scale`` is the
    softmax's d_k^-1/2 (per run when a tensor). For "max", S is masked in place.
    """
    if agg == "max":
        if mask is not None:
            S.masked_fill_(~mask, -torch.inf)  # a head the run lacks never wins
        return S.amax(dim=2), None
    if agg == "sum":
        return S.sum(dim=2), None  # a head the run lacks has zero columns: it adds exactly zero
    if agg == "softmax":
        P = torch.softmax(S * scale, dim=-1)  # over the keys q
        if mask is not None:
            P = P * mask  # a head the run lacks is left out of the sum (and of the gradient)
        return P.sum(dim=2), P
    raise ValueError(f"aggregation must be 'max', 'softmax' or 'sum', got {agg!r}")


def context_scores(table: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """Scores (R, n, ell, ell) of contexts ``items`` (R, n, ell), read off a pair table (R, m, m)."""
    R, m, _ = table.shape
    first = torch.arange(R, device=items.device).view(R, 1, 1, 1) * (m * m)  # offset of run r's table
    flat = first + items.unsqueeze(-1) * m + items.unsqueeze(-2)  # (R, n, ell, ell): [r, item_p, item_q]
    return table.reshape(-1).take(flat)


def _scores_forward(X_C, W_Q, W_K, h: int, agg: str, mask=None, scale=None) -> tuple[torch.Tensor, tuple]:
    """Aggregated scores (R, n, ell, ell) and what :func:`_scores_backward` needs; no autograd.

    ``mask`` (R, 1, h, 1, 1) marks each run's heads (None: all); ``scale`` is the
    softmax's d_k^-1/2 (a float, or per run (R, 1, 1, 1, 1); None: the stack's d_k).
    """
    R, n, ell, _ = X_C.shape
    scale = (W_Q.shape[-1] // h) ** -0.5 if scale is None else scale
    q_t, k_t = _project(X_C, W_Q, W_K, h)  # (R*n*h, d_k, ell) each
    S = torch.bmm(q_t.transpose(1, 2), k_t).view(R, n, h, ell, ell)  # (R, n, h, ell, ell)
    out, P = _aggregate(S, agg, mask, scale)
    saved = {"max": (S, out), "sum": (), "softmax": (P,)}[agg]
    return out, (X_C, q_t, k_t, h, agg, scale, W_Q.shape[-1], *saved)


def _scores_backward(saved: tuple, g: torch.Tensor, need_q: bool = True, need_k: bool = True):
    """dL/dW_Q, dL/dW_K (R, d_model, D_K) from dL/dS ``g`` (R, n, ell, ell) and :func:`_scores_forward`'s ``saved``."""
    X_C, q_t, k_t, h, agg, scale, D_K, *saved = saved
    R, n, ell, d = X_C.shape
    d_k = D_K // h
    g = g.contiguous()
    if agg == "max" and h == 1:
        dS = g
    elif agg == "max":  # the winning head gets the gradient (shared evenly on a tie, as amax does; masked heads
        # never win)
        win = (saved[0] == saved[1].unsqueeze(2)).to(g.dtype)  # (R, n, h, ell, ell)
        dS = win * (g.unsqueeze(2) / win.sum(2, keepdim=True))
    elif agg == "sum":
        dS = g.unsqueeze(2).expand(R, n, h, ell, ell)
    else:  # softmax Jacobian, row by row: P (g - <g, P>), then the 1/sqrt(d_k) scale (P = 0 on masked heads)
        P = saved[0]
        gP = g.unsqueeze(2) * P  # (R, n, h, ell, ell)
        dS = (gP - P * gP.sum(-1, keepdim=True)) * scale
    dS = dS.reshape(R * n * h, ell, ell)
    x_t = X_C.reshape(R, n * ell, d).transpose(1, 2)  # (R, d_model, n*ell)

    def weight_grad(dy_t: torch.Tensor) -> torch.Tensor:  # dy^T (R*n*h, d_k, ell) -> dW (R, d_model, D_K)
        dy_t = dy_t.view(R, n, h, d_k, ell).permute(0, 2, 3, 1, 4).reshape(R, h * d_k, n * ell)  # (R, D_K, n*ell)
        return torch.bmm(x_t, dy_t.transpose(1, 2))

    # dq = dS k and dk = dS^T q, transposed: dq^T = k^T dS^T, dk^T = q^T dS
    dW_Q = weight_grad(torch.bmm(k_t, dS.transpose(1, 2))) if need_q else None
    dW_K = weight_grad(torch.bmm(q_t, dS)) if need_k else None
    return dW_Q, dW_K


class _AggregatedScores(torch.autograd.Function):
    """S = agg_k S_k with S_k = (X_C W_Q^k)(X_C W_K^k)^T; agg in {"max", "softmax", "sum"}."""

    @staticmethod
    def forward(ctx, X_C, W_Q, W_K, h: int, agg: str, mask, scale) -> torch.Tensor:
        out, saved = _scores_forward(X_C, W_Q, W_K, h, agg, mask, scale)
        ctx.save_for_backward(*saved[:3], *saved[7:])  # the tensors (an output saved otherwise would leak)
        ctx.meta = saved[3:7]
        return out

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # g: dL/dS (R, n, ell, ell)
        t = ctx.saved_tensors
        saved = (*t[:3], *ctx.meta, *t[3:])
        dW_Q, dW_K = _scores_backward(saved, g, ctx.needs_input_grad[1], ctx.needs_input_grad[2])
        return None, dW_Q, dW_K, None, None, None, None
