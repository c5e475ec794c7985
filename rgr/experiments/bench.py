"""``python -m rgr bench``: the paper's one-run-at-a-time loop against the stacked engine.

Both ways train the same configuration (protocol E1, chapter *permutation
sweeps*) in one process:

- **naive** (:func:`train_naive`): one run at a time with its own AdamW, one
  context per step, sampled at that step with :func:`rgr.task.contexts.sample`,
  scored by :func:`rgr.model.attention.scores` — the loop as one would first write it;
- **stacked** (:func:`rgr.experiments.train.train`): R runs as one program.

Only the training phase is timed (steps, per-step or per-block sampling, and
the validation checks every ``check_every`` steps); set-up and the test
evaluation are not. The naive way is timed on fewer runs and steps and
reported per model-step (one run advancing one step). FLOPs count the matmuls
(einsums) of the forward and backward passes only, and are set against a large
square matmul timed in the same process. The last line is ``speedup: <ratio>``
(stacked model-steps per second over naive).

``--threads`` defaults to 1: per-core throughput, the fair unit on a machine
where both ways would run one process per core.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..model.attention import QKWeights, scores
from ..task.contexts import sample
from ..task.metrics import counts
from .train import DTYPES, RunConfig, build_task, init_weights, resolve_device, train

__all__ = ["NaiveResult", "train_naive", "step_flops", "matmul_gflops", "main"]


@dataclass(frozen=True)
class NaiveResult:
    """What the naive loop produced: per-head weights, steps, validation curve, seconds spent training."""

    W_Q: torch.Tensor  # (h, d_model, d_k)
    W_K: torch.Tensor  # (h, d_model, d_k)
    tau: float
    steps: int
    stop_reason: str
    val_curve: tuple[tuple[int, float], ...]
    train_seconds: float


def train_naive(cfg: RunConfig, device: str | torch.device = "cpu") -> NaiveResult:
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

    start = time.perf_counter()
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
    seconds = time.perf_counter() - start
    return NaiveResult(W_Q.detach(), W_K.detach(), float(tau.detach()), step, reason, tuple(curve), seconds)


def step_flops(cfg: RunConfig) -> int:
    """Matmul FLOPs of one model-step (one run, one context): forward + backward.

    Forward: Q and K projections 2 * (2 ell d_model D_K), scores 2 ell^2 D_K.
    Backward: the weight gradients of both projections 2 * (2 ell d_model D_K)
    (X_C needs none), and dQ, dK from the scores 2 * (2 ell^2 D_K).
    """
    ell, d, D_K = cfg.ell, cfg.d_model, cfg.D_K
    return 8 * ell * d * D_K + 6 * ell * ell * D_K


def matmul_gflops(device: torch.device, dtype: torch.dtype, n: int = 2048, repeats: int = 3) -> float:
    """GFLOP/s of an n x n x n matmul (best of ``repeats``), the machine's practical ceiling."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    for _ in range(repeats + 1):  # the first call warms up
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t = time.perf_counter()
        a @ b
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - t)
    return 2 * n**3 / best / 1e9


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rgr bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=256, help="items (default 256)")
    p.add_argument("--d-model", type=int, default=32, help="embedding width (default 32)")
    p.add_argument("--heads", type=int, default=8, help="heads h (default 8)")
    p.add_argument("--dk-total", type=int, default=128, help="total key budget D_K = h d_k (default 128)")
    p.add_argument("--model", default="max", choices=("max", "softmax", "sum"), help="model kind (default max)")
    p.add_argument("--runs", type=int, default=64, help="stacked runs R (default 64)")
    p.add_argument("--steps", type=int, default=2000, help="steps of the stacked runs (default 2000)")
    p.add_argument("--naive-runs", type=int, default=4, help="runs timed the naive way (default 4)")
    p.add_argument("--naive-steps", type=int, default=500, help="steps of each naive run (default 500)")
    p.add_argument("--check-every", type=int, default=500, help="steps between validation checks (default 500)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default cpu)")
    p.add_argument("--dtype", default="float32", choices=tuple(DTYPES), help="default float32")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: per-core throughput)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.heads < 1 or args.dk_total % args.heads:
        raise SystemExit(f"bench: --dk-total ({args.dk_total}) must be a positive multiple of --heads ({args.heads})")
    for name in ("runs", "steps", "naive_runs", "naive_steps", "threads"):
        if getattr(args, name) < 1:
            raise SystemExit(f"bench: --{name.replace('_', '-')} must be >= 1")
    dev = resolve_device(args.device)
    dtype = DTYPES[args.dtype]
    threads_before = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        base = RunConfig(
            m=args.m, d_model=args.d_model, h=args.heads, d_k=args.dk_total // args.heads, seed=args.seed,
            model=args.model, check_every=args.check_every, dtype=args.dtype,
        )  # fmt: skip
        flops = step_flops(base)
        print(
            f"bench: m={base.m} d_model={base.d_model} h={base.h} D_K={base.D_K} (d_k={base.d_k}) ell={base.ell} "
            f"model={base.model} dtype={base.dtype} device={dev} threads={torch.get_num_threads()}"
        )
        peak = matmul_gflops(dev, dtype)
        print(f"matmul reference: 2048^3 {base.dtype} -> {peak:.1f} GFLOP/s")
        print(f"flops per model-step: {flops / 1e6:.3f} MFLOP (matmuls of forward + backward)")

        naive_s = 0.0
        for i in range(args.naive_runs):
            naive_s += train_naive(base.replace(seed=args.seed + i, max_steps=args.naive_steps), dev).train_seconds
        naive_rate = args.naive_runs * args.naive_steps / naive_s
        print(
            f"naive:   {args.naive_runs} runs x {args.naive_steps} steps, {naive_s:.2f} s -> "
            f"{naive_rate:.0f} model-steps/s, {naive_rate * flops / 1e9:.2f} GFLOP/s "
            f"({100 * naive_rate * flops / 1e9 / peak:.1f}% of matmul)"
        )

        timings: dict[str, float] = {}
        cfgs = [base.replace(seed=args.seed + i, max_steps=args.steps) for i in range(args.runs)]
        results = train(cfgs, device=dev, progress=False, timings=timings)
        model_steps = sum(r.steps for r in results)
        stacked_rate = model_steps / timings["train"]
        print(
            f"stacked: {args.runs} runs x {args.steps} steps, {timings['train']:.2f} s -> "
            f"{stacked_rate:.0f} model-steps/s, {stacked_rate * flops / 1e9:.2f} GFLOP/s "
            f"({100 * stacked_rate * flops / 1e9 / peak:.1f}% of matmul); "
            f"untimed set-up {timings['setup']:.2f} s, test {timings['test']:.2f} s"
        )
        print(f"speedup: {stacked_rate / naive_rate:.1f}")
    finally:
        torch.set_num_threads(threads_before)
    return 0
