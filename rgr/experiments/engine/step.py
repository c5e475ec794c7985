"""One training step of a stack, and the losses of protocol E1/E4/E5/E6 (chapter *permutation sweeps*).

The loss is summed over runs, so each run's gradient (and AdamW update) is
exactly its own. Contexts are drawn a block of steps at a time for all runs
(context ``t`` of stream "train" at step ``t``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ...task.contexts import sample_stacked
from .graphed import StepProgram
from .stack import Stack, blocks, gather

__all__ = ["logistic_coefficients", "logistic_loss", "logistic_grads", "value_targets", "value_loss", "value_grad",
           "block_rows", "train_steps"]


def logistic_coefficients(labels: torch.Tensor, adaptive: torch.Tensor,
                          dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Coefficients (a, b) with ``loss = sum(a * softplus(z) - b * z)`` per context.

    Since softplus(-z) = softplus(z) - z, E1's
    ``ell^-2 sum[pw y softplus(-z) + (1 - y) softplus(z)]`` equals
    ``sum[a softplus(z) - b z]`` with ``a = (pw y + 1 - y) / ell^2``, ``b = pw y / ell^2``
    (the gradients agree exactly; only the form is cheaper). ``labels`` is
    (R, n, ell, ell) bool; ``adaptive`` (R, 1, 1) bool picks pw = #neg/#pos of the
    context (E4, 1 when the context has no positive) over pw = ell - 1 (E1).
    """
    ell = labels.shape[-1]
    y = labels.to(dtype)
    pos = y.sum((-1, -2), keepdim=True)  # (R, n, 1, 1)
    pw_adaptive = torch.where(pos > 0, (ell * ell - pos) / pos.clamp_min(1), torch.ones_like(pos))
    pw = torch.where(adaptive.unsqueeze(1), pw_adaptive, torch.full_like(pos, ell - 1))
    return (pw * y + 1 - y) / ell**2, pw * y / ell**2


def logistic_loss(S: torch.Tensor, tau: torch.Tensor, alpha: torch.Tensor, a: torch.Tensor,
                  b: torch.Tensor) -> torch.Tensor:
    """Sum over runs of E1's weighted logistic loss; S, a, b (R, ell, ell); tau (R,); alpha (R, 1, 1)."""
    z = alpha * (S - tau.view(-1, 1, 1))
    return (a * F.softplus(z) - b * z).sum()


def value_targets(labels: torch.Tensor, V_C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets and weights of E6's MSE: T (R, n, ell, d_msg) = message of each position's target;
    w (R, n, ell, 1) = 1 / (#valid d_msg) on valid positions (target in context), else 0."""
    T = labels.to(V_C.dtype) @ V_C  # (R, n, ell, d_msg): each row of labels has at most one 1
    valid = labels.any(-1, keepdim=True).to(V_C.dtype)  # (R, n, ell, 1)
    n_valid = valid.sum(-2, keepdim=True) * V_C.shape[-1]  # (R, n, 1, 1)
    return T, valid / n_valid.clamp_min(1)


def value_loss(S: torch.Tensor, V_C: torch.Tensor, T: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Sum over runs of E6's per-context MSE; S (R, ell, ell), V_C and T (R, ell, d_msg), w (R, ell, 1)."""
    return (w * (torch.bmm(S, V_C) - T).square()).sum()


# ---------------------------------------------------------------------------------------
# training and evaluation


def logistic_grads(
    S: torch.Tensor, tau: torch.Tensor, alpha: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of :func:`logistic_loss` with respect to S (R, ell, ell) and tau (R,), written out:
    dL/dS = alpha (a sigmoid(z) - b), dL/dtau = -sum_pq dL/dS."""
    gS = alpha * (a * torch.sigmoid(alpha * (S - tau.view(-1, 1, 1))) - b)
    return gS, -gS.sum((1, 2))


def value_grad(S: torch.Tensor, V_C: torch.Tensor, T: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Gradient of :func:`value_loss` with respect to S (R, ell, ell): 2 (w (S V_C - T)) V_C^T."""
    return 2 * torch.bmm(w * (torch.bmm(S, V_C) - T), V_C.transpose(1, 2))


def _body(st: Stack):
    """One step of the stack from one context per run: scores, the loss's gradient written out (no autograd
    graph), the hand-written backward of the scores, the fused Adam update."""
    model, opt, value = st.model, st.opt, st.cfgs[0].model == "value"

    def body(X_C: torch.Tensor, *rest: torch.Tensor) -> None:
        S, saved = model.scores_for_step(X_C.unsqueeze(1))  # (R, 1, ell, ell)
        S = S.squeeze(1)
        if value:
            gS = value_grad(S, *rest)
        else:
            gS, model.tau.grad = logistic_grads(S, model.tau.detach(), st.alpha, *rest)
        model.W_Q.grad, model.W_K.grad = model.grads(saved, gS.unsqueeze(1))
        opt.step()

    return body


def _program(st: Stack, examples: list[torch.Tensor]) -> StepProgram:
    """The stack's step as a program over one step's inputs: with ``st.graphed`` a CUDA graph on a GPU and its
    static-buffer twin elsewhere; otherwise plain eager steps."""
    capture = st.graphed and st.X.device.type == "cuda"
    return StepProgram(_body(st), examples, capture=capture, static=st.graphed)


def block_rows(X: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """Rows of ``X.view(-1, d_model)`` holding a block's context items, step-major: X (R, m, d_model) and
    items (R, B, ell) -> (B, R, ell), so step s's embeddings ``X[r, items[r, s]]`` are one ``index_select``."""
    R, m = X.shape[:2]
    return (torch.arange(R, device=X.device).view(R, 1, 1) * m + items).transpose(0, 1).contiguous()


def train_steps(st: Stack, t0: int, t1: int, block_elems: int) -> None:
    """Steps t0 .. t1-1 of every run in the stack (contexts drawn a block at a time)."""
    c0, R = st.cfgs[0], st.R
    dt, dev = st.X.dtype, st.X.device
    per_ctx = c0.d_model + (2 * c0.d_msg + 1 if c0.model == "value" else 2 * c0.ell)  # floats per position
    per_step = R * c0.ell * per_ctx
    size = max(1, min(t1 - t0, block_elems // per_step))
    model = st.model
    X_flat = st.X.view(-1, c0.d_model)  # (R m_max, d_model): run r's item i is row r m_max + i
    for a, b in blocks(t0, t1, size):
        index = torch.arange(a, b, device=dev).expand(R, -1)  # (R, B): context t at step t
        batch = sample_stacked(st.table, st.train_keys, index, c0.ell, c0.rho)
        if c0.model == "value":
            X_C = gather(st.X, batch.items)  # (R, B, ell, d_model)
            V_C = model.messages(X_C)  # (R, B, ell, d_msg)
            per = [X_C, V_C, *value_targets(batch.labels, V_C)]
        else:  # one step's embeddings are gathered at that step: a block's would not stay in cache
            rows = block_rows(st.X, batch.items)  # (B, R, ell)
            per = [batch.items, *logistic_coefficients(batch.labels, st.adaptive, dt)]
        for s in range(b - a):
            inputs = [x[:, s] for x in per]  # (R, ...) strided views of the block, no copy
            if c0.model != "value":  # (R, ell, d_model): a copy of rows, as X[r, items[r]] but cheaper
                inputs[0] = X_flat.index_select(0, rows[s].view(-1)).view(R, c0.ell, c0.d_model)
            if st.program is None:
                st.program = _program(st, inputs)
            st.program.step(*inputs)
