"""One run at a time: the loops the stacked engine is measured against (chapter *permutation sweeps*).

Both train one run of protocol E1/E4/E5 (logistic kinds; no test evaluation)
and agree with :func:`rgr.experiments.engine.loop.train_run` (the tests check it):

- :func:`train_naive`, the loop as one would first write it: each step samples
  its context with :func:`rgr.task.contexts.sample` (which rebuilds the graph's
  table every call) and scores it with :func:`rgr.model.attention.scores`
  (per-head einsums, the weights wrapped and checked every step);
- :func:`train_baseline`, the loop a competent researcher would write for one
  run: still one context per step, but contexts are drawn with the same
  vectorized sampler a block of steps at a time from a graph table built once,
  the weights are two fused (d_model, D_K) matrices, the step is plain autograd
  on a few tensor operations, AdamW is PyTorch's fused kernel, and the
  validation set is gathered once. Nothing in it serves stacking.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ...model.attention import QKWeights, scores
from ...task.contexts import build_task, graph_table, sample, sample_stacked
from ...task.metrics import counts
from ...task.rng import stream_key
from ..engine.config import DTYPES, RunConfig, resolve_device
from ..engine.stack import init_weights


@dataclass(frozen=True)
class _NaiveResult:
    """What the naive loop produced: per-head weights, steps, validation curve, seconds spent training."""

    W_Q: torch.Tensor  # (h, d_model, d_k)
    W_K: torch.Tensor  # (h, d_model, d_k)
    tau: float
    steps: int
    stop_reason: str
    val_curve: tuple[tuple[int, float], ...]
    train_seconds: float
    train_cpu_seconds: float = 0.0  # process-CPU seconds of the same phase


def train_naive(cfg: RunConfig, device: str | torch.device = "cpu") -> _NaiveResult:
    """One run of protocol E1/E4/E5 the plain way (logistic kinds only; no test evaluation)."""
    if cfg.model not in ("max", "softmax", "sum"):
        raise ValueError(f"train_naive supports model 'max', 'softmax' or 'sum', got {cfg.model!r}")
    dev = resolve_device(device)
    dt = DTYPES[cfg.dtype]
    graph, X = build_task(cfg)
    X = X.to(dev, dt)
    init = init_weights(cfg)
    h, d, d_k, ell = cfg.h, cfg.d_model, cfg.d_k, cfg.ell
    per_head = lambda W: W.view(d, h, d_k).permute(1, 0, 2).contiguous().to(dev)  # (h, d_model, d_k)
    W_Q = per_head(init["W_Q"]).requires_grad_()
    W_K = per_head(init["W_K"]).requires_grad_()
    tau = init["tau"].to(dev).requires_grad_()
    opt = torch.optim.AdamW([W_Q, W_K, tau], lr=cfg.lr, weight_decay=0.0)
    val = sample(graph, cfg.seed, cfg.n_val, ell, cfg.rho, "val", device=dev)

    start, start_cpu = time.perf_counter(), time.process_time()
    streak, curve, step, reason = 0, [], 0, "cutoff"
    while step < cfg.max_steps:
        ctx = sample(graph, cfg.seed, 1, ell, cfg.rho, "train", start=step, device=dev)  # context `step`
        X_C = X[ctx.items]  # (1, ell, d_model)
        S = scores(X_C.unsqueeze(0), QKWeights(W_Q[None], W_K[None], tau[None]), cfg.model)[0, 0]  # (ell, ell)
        y = ctx.labels[0].to(dt)  # (ell, ell)
        if cfg.adaptive_posweight:
            pos = y.sum()
            posweight = (ell * ell - pos) / pos if pos > 0 else torch.ones((), dtype=dt, device=dev)
        else:
            posweight = ell - 1
        z = cfg.alpha * (S - tau)
        loss = (posweight * y * F.softplus(-z) + (1 - y) * F.softplus(z)).sum() / ell**2
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
        if step % cfg.check_every == 0 or step == cfg.max_steps:
            with torch.no_grad():
                S_val = scores(X[val.items].unsqueeze(0), QKWeights(W_Q[None], W_K[None], tau[None]), cfg.model)
                f1 = float(counts(S_val > tau, val.labels.unsqueeze(0)).f1[0])
            curve.append((step, f1))
            streak = streak + 1 if f1 > cfg.f1_stop else 0
            if streak >= cfg.patience:
                reason = "converged"
                break
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    return _NaiveResult(W_Q=W_Q.detach(), W_K=W_K.detach(), tau=float(tau.detach()), steps=step, stop_reason=reason,
                       val_curve=tuple(curve), train_seconds=seconds, train_cpu_seconds=cpu)


def train_baseline(cfg: RunConfig, device: str | torch.device = "cpu", block: int = 500) -> _NaiveResult:
    """One run of protocol E1/E4/E5, written well for one run (see the module docstring).

    ``block`` contexts are drawn at a time (context ``t`` of stream "train" at
    step ``t``, as the protocol and the engine have it); results do not depend on it.
    """
    if cfg.model not in ("max", "softmax", "sum"):
        raise ValueError(f"train_baseline supports model 'max', 'softmax' or 'sum', got {cfg.model!r}")
    if not isinstance(block, int) or block < 1:
        raise ValueError(f"block must be an integer >= 1, got {block!r}")
    dev, dt = resolve_device(device), DTYPES[cfg.dtype]
    graph, X = build_task(cfg)
    X = X.to(dev, dt)
    init = init_weights(cfg)
    h, d_k, ell = cfg.h, cfg.d_k, cfg.ell
    W_Q = init["W_Q"].to(dev).requires_grad_()  # (d_model, D_K), heads side by side
    W_K = init["W_K"].to(dev).requires_grad_()
    tau = init["tau"].to(dev).requires_grad_()
    opt = torch.optim.AdamW([W_Q, W_K, tau], lr=cfg.lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, fused=True)
    table = graph_table([graph], dev)
    key = lambda stream: torch.tensor([stream_key(cfg.seed, stream)], dtype=torch.long, device=dev)
    draw = lambda stream, a, b: sample_stacked(table, key(stream), torch.arange(a, b, device=dev)[None], ell, cfg.rho)
    val = draw("val", 0, cfg.n_val)
    X_val, y_val = X[val.items[0]], val.labels[0]  # (n_val, ell, d_model), (n_val, ell, ell)

    def score(X_C: torch.Tensor) -> torch.Tensor:  # (..., ell, d_model) -> (..., ell, ell)
        q = (X_C @ W_Q).unflatten(-1, (h, d_k)).transpose(-2, -3)  # (..., h, ell, d_k)
        k = (X_C @ W_K).unflatten(-1, (h, d_k)).transpose(-2, -3)
        S = q @ k.transpose(-1, -2)  # (..., h, ell, ell)
        if cfg.model == "max":
            return S.amax(-3)
        if cfg.model == "sum":
            return S.sum(-3)
        return torch.softmax(S * d_k**-0.5, dim=-1).sum(-3)

    start, start_cpu = time.perf_counter(), time.process_time()
    streak, curve, step, reason = 0, [], 0, "cutoff"
    while step < cfg.max_steps and reason == "cutoff":
        ctx = draw("train", step, min(step + block, cfg.max_steps))
        X_B, y_B = X[ctx.items[0]], ctx.labels[0].to(dt)  # (B, ell, d_model), (B, ell, ell)
        if cfg.adaptive_posweight:
            pos = y_B.sum((-1, -2), keepdim=True)
            pw_B = torch.where(pos > 0, (ell * ell - pos) / pos.clamp_min(1), torch.ones_like(pos))
        else:
            pw_B = torch.full((len(y_B), 1, 1), float(ell - 1), dtype=dt, device=dev)
        for s in range(len(y_B)):
            z = cfg.alpha * (score(X_B[s]) - tau)
            y, pw = y_B[s], pw_B[s]
            loss = (pw * y * F.softplus(-z) + (1 - y) * F.softplus(z)).sum() / ell**2
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            if step % cfg.check_every == 0 or step == cfg.max_steps:
                with torch.no_grad():
                    f1 = float(counts((score(X_val) > tau)[None], y_val[None]).f1[0])
                curve.append((step, f1))
                streak = streak + 1 if f1 > cfg.f1_stop else 0
                if streak >= cfg.patience:
                    reason = "converged"
                    break
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    split = lambda W: W.detach().view(cfg.d_model, h, d_k).permute(1, 0, 2).contiguous()  # (h, d_model, d_k)
    return _NaiveResult(W_Q=split(W_Q), W_K=split(W_K), tau=float(tau.detach()), steps=step, stop_reason=reason,
                       val_curve=tuple(curve), train_seconds=seconds, train_cpu_seconds=cpu)
