"""The stack: R runs as one tensor program, how it is built, and its loss (chapter *permutation sweeps*).

The engine's second page (after :mod:`.config`, before :mod:`.loop`). A stack (:class:`Stack`) holds everything
R runs share in one program, each tensor with a leading run axis on the stack's one device: the model's parameters
(:mod:`rgr.model.qk`), the optimizer state (:mod:`.adam`), the frozen embeddings and graphs, the stream keys of each
run's contexts, the fixed validation contexts, and each run's early-stopping record (:class:`_Track`).

Which runs may share a stack is :func:`rgr.experiments.engine.config.stack_groups`; a run narrower than its stack is
padded (:func:`_pad_heads`) with zero columns and masked heads. A run's task and initial weights
(:func:`rgr.task.contexts.build_task`, :func:`init_weights`) come from its own seed, never from the stack. The loss
is summed over runs, so each run's gradient and its AdamW update are exactly its own: the losses of protocol
E1/E4/E5/E6 and their gradients, written out, close this page; contexts are drawn for all runs at once
(:func:`rgr.task.contexts.sample_stacked`; a run's contexts depend on its seed and the step only).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import torch

from ...model.qk import QKModel
from ...task.contexts import GraphTable, build_task, graph_table, sample_stacked
from ...task.embeddings import value_projection
from ...task.rng import derive_seed, stream_key
from .adam import StackAdam
from .config import DTYPES, RunConfig, stack_shape
from .graphed import StepProgram


def init_weights(cfg: RunConfig) -> dict[str, torch.Tensor]:
    """Initial W_Q, W_K (d_model, D_K), tau () and, for "value", the frozen W_V (d_model, d_msg).

    Drawn in float64 from the run's own generators (streams "init" and
    "value"), then cast to the run's dtype: independent of any stack.
    """
    dt = DTYPES[cfg.dtype]
    g = torch.Generator().manual_seed(derive_seed(cfg.seed, "init"))
    W_Q = torch.randn(cfg.d_model, cfg.D_K, generator=g, dtype=torch.float64) * cfg.init_std
    W_K = torch.randn(cfg.d_model, cfg.D_K, generator=g, dtype=torch.float64) * cfg.init_std
    out = {"W_Q": W_Q.to(dt), "W_K": W_K.to(dt), "tau": torch.zeros((), dtype=dt)}
    if cfg.model == "value":
        out["W_V"] = value_projection(cfg.d_model, cfg.d_msg, cfg.seed).to(dt)
    return out


def _pad_heads(W: torch.Tensor, h: int, d_k: int, H: int, w: int) -> torch.Tensor:
    """(d_model, h d_k) in heads-side-by-side layout -> (d_model, H w): head k's columns first, zeros after."""
    d = W.shape[0]
    out = torch.zeros(d, H, w, dtype=W.dtype)
    out[:, :h, :d_k] = W.view(d, h, d_k)
    return out.view(d, H * w)


@dataclass
class _Track:
    """Early-stopping record of one run: its validation curve, the checks in a row that count towards its
    stop, and (for "value") its best validation MSE so far."""

    streak: int = 0
    best: float = math.inf
    curve: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class Stack:
    """The state of R active runs trained as one program; every tensor has a leading run axis R.

    Built by :func:`build_stack`; the loop (:mod:`rgr.experiments.engine.loop`) advances it (``train_steps``
    sets ``program`` at its first step, ``check`` appends to ``tracks``), sets ``step`` and compacts it with
    :meth:`select` when runs stop. Mutable on purpose: the parameters and optimizer moments change in place.
    """

    cfgs: list[RunConfig]  # the runs, in stack order; they share a stack key
    ids: list[int]  # positions in the caller's list
    tracks: list[_Track]  # early-stopping record per run
    model: QKModel  # the runs' W_Q, W_K (R, d_model, H w), tau (R,) and frozen W_V; padded heads masked
    opt: StackAdam  # AdamW moments per run, one step count for the stack
    X: torch.Tensor  # (R, m_max, d_model) embeddings, zero padded
    table: GraphTable  # graphs, (R, m_max, r_max)
    train_keys: torch.Tensor  # (R,) stream keys of "train"
    val_items: torch.Tensor  # (R, n_val, ell)
    val_labels: torch.Tensor  # (R, n_val, ell, ell)
    alpha: torch.Tensor  # (R, 1, 1)
    adaptive: torch.Tensor  # (R, 1, 1) bool: E4's adaptive posweight
    step: int = 0  # steps every run of the stack has taken
    graphed: bool = False  # train through a captured CUDA graph (rgr.experiments.engine.graphed)
    program: StepProgram | None = None  # the step program of this R (made at the first step; None after compaction)

    @property
    def R(self) -> int:
        return len(self.cfgs)

    @property
    def device(self) -> torch.device:
        """Where every tensor of the stack lives (set once, by :func:`build_stack`)."""
        return self.X.device

    def select(self, keep: list[int]) -> Stack:
        """The stack restricted to runs ``keep`` (positions in this stack); optimizer state carried over."""
        idx = torch.tensor(keep, dtype=torch.long, device=self.device)
        model = self.model.select(idx)
        opt = _optimizer(model, self.cfgs[0].lr)
        opt.carry(self.opt, idx)  # exp_avg, exp_avg_sq are per run; the step count is shared by the stack
        return Stack(
            cfgs=[self.cfgs[i] for i in keep],
            ids=[self.ids[i] for i in keep],
            tracks=[self.tracks[i] for i in keep],
            model=model,
            opt=opt,
            X=self.X[idx],
            table=GraphTable(self.table.out[idx], self.table.m[idx]),
            train_keys=self.train_keys[idx],
            val_items=self.val_items[idx],
            val_labels=self.val_labels[idx],
            alpha=self.alpha[idx],
            adaptive=self.adaptive[idx],
            step=self.step,
            graphed=self.graphed,
        )


def _optimizer(model: QKModel, lr: float) -> StackAdam:
    # weight decay 0: AdamW is Adam; PyTorch's fused kernel, elementwise, so runs never mix.
    return StackAdam([p for p in model.parameters() if p.requires_grad], lr=lr)


def stream_keys(cfgs: Sequence[RunConfig], stream: str, device: torch.device) -> torch.Tensor:
    """(R,) keys of each run's context stream ``stream`` ("train", "val", "test") on ``device``."""
    return torch.tensor([stream_key(c.seed, stream) for c in cfgs], dtype=torch.long, device=device)


def context_blocks(R: int, ell: int, n: int, block_elems: int) -> Iterator[tuple[int, int]]:
    """Blocks of context indices 0..n-1 small enough to sample for R runs at once."""
    return blocks(0, n, max(1, block_elems // (4 * R * ell * ell)))


def build_stack(cfgs: list[RunConfig], ids: list[int], device: torch.device, block_elems: int,
                graphed: bool = False) -> Stack:
    """The stack of runs ``cfgs`` (tagged with the caller's positions ``ids``) on ``device``, at step 0.

    ``block_elems`` bounds the tensors built per block of validation contexts (memory only);
    ``graphed``: train through a captured CUDA graph (:mod:`.graphed`). The only place the engine passes a device
    to: everything after reads :attr:`Stack.device`.
    """
    c0 = cfgs[0]
    if any(c.stack_key() != c0.stack_key() for c in cfgs):
        raise ValueError("configs of one stack must share a stack key "
                         "(model, d_model, ell, rho, lr, checks, dtype)")
    dt = DTYPES[c0.dtype]
    H, w = stack_shape(cfgs)
    tasks = [build_task(c) for c in cfgs]
    m_max = max(c.m for c in cfgs)
    X = torch.zeros(len(cfgs), m_max, c0.d_model, dtype=dt)
    for i, (_, x) in enumerate(tasks):
        X[i, : x.shape[0]] = x.to(dt)
    inits = [init_weights(c) for c in cfgs]
    W_V = torch.stack([i["W_V"] for i in inits]).to(device) if c0.model == "value" else None
    padded = lambda name: torch.stack([_pad_heads(i[name], c.h, c.d_k, H, w)
                                       for i, c in zip(inits, cfgs)]).to(device)
    model = QKModel(
        W_Q=padded("W_Q"),  # (R, d_model, H w)
        W_K=padded("W_K"),
        tau=torch.stack([i["tau"] for i in inits]).to(device),  # (R,)
        h=H,
        kind=c0.model,
        W_V=W_V,
        heads=torch.tensor([c.h for c in cfgs]),
        d_ks=torch.tensor([c.d_k for c in cfgs]),
    )
    table = graph_table([g for g, _ in tasks], device)
    R = len(cfgs)
    keys = stream_keys(cfgs, "val", device)
    val = [
        sample_stacked(table, keys, torch.arange(a, b, device=device).expand(R, -1), c0.ell, c0.rho)
        for a, b in context_blocks(R, c0.ell, c0.n_val, block_elems)
    ]
    return Stack(
        cfgs=list(cfgs),
        ids=list(ids),
        tracks=[_Track() for _ in cfgs],
        model=model,
        opt=_optimizer(model, c0.lr),
        X=X.to(device),
        table=table,
        train_keys=stream_keys(cfgs, "train", device),
        val_items=torch.cat([v.items for v in val], dim=1),  # (R, n_val, ell)
        val_labels=torch.cat([v.labels for v in val], dim=1),  # (R, n_val, ell, ell)
        alpha=torch.tensor([c.alpha for c in cfgs], dtype=dt, device=device).view(R, 1, 1),
        adaptive=torch.tensor([c.adaptive_posweight for c in cfgs], device=device).view(R, 1, 1),
        graphed=graphed,
    )


def gather(X: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """Embeddings of contexts: X (R, m, d) and items (R, n, ell) -> X_C (R, n, ell, d)."""
    R = X.shape[0]
    return X[torch.arange(R, device=X.device).view(R, 1, 1), items]


def block_rows(X: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """Rows of ``X.view(-1, d_model)`` holding a block's context items, step-major: X (R, m, d_model) and
    items (R, B, ell) -> (B, R, ell), so step s's embeddings ``X[r, items[r, s]]`` are one ``index_select``."""
    R, m = X.shape[:2]
    return (torch.arange(R, device=X.device).view(R, 1, 1) * m + items).transpose(0, 1).contiguous()


def blocks(t0: int, t1: int, size: int) -> Iterator[tuple[int, int]]:
    """Consecutive (a, b) ranges of at most ``size`` covering t0 .. t1-1."""
    for a in range(t0, t1, size):
        yield a, min(a + size, t1)


# ---------------------------------------------------------------------------------------
# the loss of a stack (summed over runs) and its gradient, written out (no autograd graph in a step)


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


def value_targets(labels: torch.Tensor, V_C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets and weights of E6's MSE: T (R, n, ell, d_msg) = message of each position's target;
    w (R, n, ell, 1) = 1 / (#valid d_msg) on valid positions (target in context), else 0."""
    T = labels.to(V_C.dtype) @ V_C  # (R, n, ell, d_msg): each row of labels has at most one 1
    valid = labels.any(-1, keepdim=True).to(V_C.dtype)  # (R, n, ell, 1)
    n_valid = valid.sum(-2, keepdim=True) * V_C.shape[-1]  # (R, n, 1, 1)
    return T, valid / n_valid.clamp_min(1)


def logistic_grads(
    S: torch.Tensor, tau: torch.Tensor, alpha: torch.Tensor, a: torch.Tensor, b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of E1's loss ``L = sum(a softplus(z) - b z)``, ``z = alpha (S - tau)`` (a, b:
    :func:`logistic_coefficients`), with respect to S (R, ell, ell) and tau (R,), written out:
    dL/dS = alpha (a sigmoid(z) - b), dL/dtau = -sum_pq dL/dS."""
    gS = alpha * (a * torch.sigmoid(alpha * (S - tau.view(-1, 1, 1))) - b)
    return gS, -gS.sum((1, 2))


def value_grad(S: torch.Tensor, V_C: torch.Tensor, T: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Gradient of E6's loss ``sum(w (S V_C - T)^2)`` with respect to S (R, ell, ell): 2 (w (S V_C - T)) V_C^T."""
    return 2 * torch.bmm(w * (torch.bmm(S, V_C) - T), V_C.transpose(1, 2))
