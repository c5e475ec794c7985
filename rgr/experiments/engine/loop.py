"""The loop: the paper's training protocol, many runs stacked in one tensor program (chapter *permutation sweeps*).

The engine's last page (after :mod:`.config` and :mod:`.stack`): a stack's step (:func:`train_steps`), its
validation checks and test (:func:`check`, :func:`test`), and the loop over stacks (:func:`train`).

Protocol E1 (and its variants E4, E5, E6; see the book's *permutation sweeps*
chapter and the model in chapter *theory*), per run:

- a graph (random derangement, or directed r-regular) and frozen Gaussian
  unit-norm embeddings, both from the run's seed;
- W_Q, W_K ~ N(0, init_std^2) entrywise (default init_std = d_model^-1/2, i.e.
  variance 1/d_model: the protocol's "N(0, 1/sqrt(d_model))" read as a standard
  deviation), tau = 0; drawn from ``derive_seed(seed, "init")`` with a generator
  of the run's own, so a run's init never depends on the stack;
- one fresh context per AdamW step (lr 1e-3, betas (0.9, 0.999), eps 1e-8,
  weight decay 0); context ``t`` of stream "train" at step ``t``;
- loss on all ell^2 ordered pairs, the diagonal included (always a negative):
  ``z = alpha (S - tau)``,
  ``L = ell^-2 sum [posweight y softplus(-z) + (1 - y) softplus(z)]``,
  posweight = ell - 1 (permutations) or #negatives / #positives of the context
  (r-regular graphs, E4);
- "value" runs (E6): MSE between ``S_max V_C`` and the target's message over
  the positions whose target is in context (mean over those positions and the
  d_msg coordinates); no threshold;
- every ``check_every`` steps the validation metric on 500 fixed contexts
  (stream "val"): micro-F1 (stop after ``patience`` consecutive checks above
  ``f1_stop``) or MSE (stop after ``patience`` consecutive checks without a
  relative improvement of more than ``mse_tol`` over the best so far);
  otherwise stop at ``max_steps``; the parameters at the stop are final;
- test metric on 2,000 fixed contexts (stream "test") with the learned tau.

Stacking: :mod:`.stack`'s docstring (README *Running the experiments*). A run that stops is evaluated, recorded,
and dropped from the stack at once (the stack is compacted), so it is frozen exactly and costs nothing afterwards.

A step is drawn a block of contexts at a time for all runs (context ``t`` of stream "train" at step ``t``) and
runs as a program (:mod:`.graphed`: a CUDA graph on a GPU) of the scores, the loss's gradient written out
(:mod:`.stack`), the hand-written backward of the scores and the fused Adam update (:mod:`.adam`).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, Sequence

import torch
from tqdm import tqdm

from ...model.qk import QKModel, context_scores
from ...task.contexts import sample_stacked
from ...task.metrics import Counts, counts
from ..futility import futile
from .config import RunConfig, RunResult, check_int, resolve_device, stack_groups, sync
from .graphed import StepProgram, graphs_enabled
from .stack import (
    Stack,
    block_rows,
    blocks,
    build_stack,
    context_blocks,
    gather,
    logistic_coefficients,
    logistic_grads,
    stream_keys,
    value_grad,
    value_targets,
)

# ---------------------------------------------------------------------------------------
# a step of the stack


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
    capture = st.graphed and st.device.type == "cuda"
    return StepProgram(_body(st), examples, capture=capture, static=st.graphed)


def train_steps(st: Stack, t0: int, t1: int, block_elems: int) -> None:
    """Steps t0 .. t1-1 of every run in the stack (contexts drawn a block at a time)."""
    c0, R = st.cfgs[0], st.R
    dt, dev = st.X.dtype, st.device
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


# ---------------------------------------------------------------------------------------
# validation checks (early and futility stops) and the test


def _eval_chunk(R: int, ell: int, h: int, D_K: int, d: int, eval_elems: int) -> int:
    per_ctx = R * ell * max(h * ell, 2 * D_K, d, ell)
    return max(1, eval_elems // per_ctx)


@torch.no_grad()
def _evaluate_group(
    model: QKModel, X: torch.Tensor, items: torch.Tensor, labels: torch.Tensor, by_pairs: bool, eval_elems: int
) -> torch.Tensor:
    """Per-run sums over contexts (R, n, ...): (R, 3) [tp, fp, fn], or (R, 2) [sse, count] for "value"."""
    R, n, ell = items.shape
    if by_pairs:
        table = model.pair_scores(X)  # (R, m, m)
        score = lambda it: context_scores(table, it)
    else:
        tables = model.item_tables(X)  # every item projected once
        score = lambda it: model.scores_from_tables(tables, it)
    V = torch.bmm(X, model.W_V) if model.kind == "value" else None  # (R, m, d_msg) messages
    total = torch.zeros(R, 2 if V is not None else 3, dtype=torch.float64, device=X.device)
    for a, b in blocks(0, n, _eval_chunk(R, ell, model.h, model.D_K, model.d_model, eval_elems)):
        S = score(items[:, a:b])  # (R, c, ell, ell)
        y = labels[:, a:b]
        if V is not None:
            V_C = gather(V, items[:, a:b])  # (R, c, ell, d_msg)
            T = y.to(V_C.dtype) @ V_C
            valid = y.any(-1, keepdim=True)  # (R, c, ell, 1)
            total[:, 0] += ((S @ V_C - T).square() * valid).sum((1, 2, 3)).double()
            total[:, 1] += valid.sum((1, 2, 3)).double() * V_C.shape[-1]
        else:
            c = counts(model.predict_edges(S), y)
            total += torch.stack([c.tp, c.fp, c.fn], dim=1)
    return total


def _evaluate_runs(
    model: QKModel,
    X: torch.Tensor,
    ms: Sequence[int],
    items: torch.Tensor,
    labels: torch.Tensor,
    eval_elems: int,
    n_set: int,
) -> torch.Tensor:
    """Per-run sums over contexts, as :func:`_evaluate_group`, for runs with ``ms`` items each.

    A run's scores come from a table of all its item pairs when that is the
    cheaper way for its whole set of ``n_set`` contexts (a context-free
    aggregation, m^2 <= n_set ell^2, and m^2 <= 32 eval_elems), else from
    per-item queries and keys gathered per context. The choice depends on the
    run alone, never on the stack it is in.
    """
    R, n, ell = items.shape
    pairs = [model.aggregation != "softmax" and m * m <= min(n_set * ell * ell, 32 * eval_elems) for m in ms]
    groups: list[tuple[list[int], bool]] = [([i for i in range(R) if not pairs[i]], False)]
    by_pairs = [i for i in range(R) if pairs[i]]
    per = max(1, 32 * eval_elems // max([ms[i] ** 2 for i in by_pairs], default=1))  # runs per pair-table group
    groups += [(by_pairs[j : j + per], True) for j in range(0, len(by_pairs), per)]
    out = torch.zeros(R, 2 if model.kind == "value" else 3, dtype=torch.float64, device=X.device)
    for idx, use_pairs in groups:
        if not idx:
            continue
        m = max(ms[i] for i in idx)
        rows = torch.tensor(idx, device=X.device)
        if len(idx) == R and m == X.shape[1]:  # the whole stack, unpadded (idx is 0..R-1): its tensors as they are
            out[rows] = _evaluate_group(model, X, items, labels, use_pairs, eval_elems)
        else:
            sub = model.select(rows)
            out[rows] = _evaluate_group(sub, X[rows, :m], items[rows], labels[rows], use_pairs, eval_elems)
    return out


def _metric(model: QKModel, ev: torch.Tensor) -> list[float]:
    if model.kind == "value":
        return (ev[:, 0] / ev[:, 1].clamp_min(1)).tolist()
    return Counts(ev[:, 0], ev[:, 1], ev[:, 2]).f1.tolist()


def test(
    st: Stack, keep: list[int], block_elems: int, eval_elems: int, keep_weights: bool, reasons: dict[int, str]
) -> list[tuple[int, RunResult]]:
    """Evaluate runs ``keep`` of the stack on their test contexts and build their results."""
    sub = st.select(keep) if len(keep) < st.R else st
    c0, R, dev = sub.cfgs[0], sub.R, sub.device
    keys = stream_keys(sub.cfgs, "test", dev)
    total = None
    for a, b in context_blocks(R, c0.ell, c0.n_test, block_elems):
        batch = sample_stacked(sub.table, keys, torch.arange(a, b, device=dev).expand(R, -1), c0.ell, c0.rho)
        part = _evaluate_runs(sub.model, sub.X, [c.m for c in sub.cfgs], batch.items, batch.labels, eval_elems,
                             c0.n_test)
        total = part if total is None else total + part
    w = sub.model.weights()
    out = []
    for j, i in enumerate(keep):
        cfg = sub.cfgs[j]
        common = dict(config=cfg, steps=st.step, stop_reason=reasons[i], val_curve=tuple(st.tracks[i].curve))
        if cfg.model == "value":
            res = RunResult(**common, test_mse=float(total[j, 0] / total[j, 1].clamp_min(1)))
        else:
            c = Counts(total[j : j + 1, 0], total[j : j + 1, 1], total[j : j + 1, 2])
            res = RunResult(
                **common,
                test_f1=float(c.f1),
                test_precision=float(c.precision),
                test_recall=float(c.recall),
                tau=float(w.tau[j]),
            )
        if keep_weights:
            W_Q, W_K = sub.model.run_weights(j)  # the run's own (h, d_model, d_k): padding cut off
            weights = {"W_Q": W_Q.cpu(), "W_K": W_K.cpu(), "tau": w.tau[j].cpu().clone()}
            if sub.model.W_V is not None:
                weights["W_V"] = sub.model.W_V[j].cpu().clone()
            res = dataclasses.replace(res, weights=weights)
        out.append((sub.ids[j], res))
    return out


def check(st: Stack, due: list[int], eval_elems: int) -> dict[int, str]:
    """Validation check of runs ``due``; returns {position: stop reason} of the runs that stop now."""
    stops: dict[int, str] = {}
    if due:
        sub = st.select(due) if len(due) < st.R else st
        ev = _evaluate_runs(sub.model, sub.X, [c.m for c in sub.cfgs], sub.val_items, sub.val_labels, eval_elems,
                           sub.cfgs[0].n_val)
        values = _metric(st.model, ev)
        for i, v in zip(due, values):
            cfg, tr = st.cfgs[i], st.tracks[i]
            tr.curve.append((st.step, v))
            if cfg.metric == "f1":
                tr.streak = tr.streak + 1 if v > cfg.f1_stop else 0
            else:
                improved = v < tr.best * (1 - cfg.mse_tol)
                tr.best = min(tr.best, v)
                tr.streak = 0 if improved else tr.streak + 1
            if tr.streak >= cfg.patience:
                stops[i] = "converged"
            elif st.step < cfg.max_steps and futile(cfg.futility, tr.curve, cfg.max_steps):
                stops[i] = "futile"
    for i, cfg in enumerate(st.cfgs):
        if i not in stops and st.step >= cfg.max_steps:
            stops[i] = "cutoff"
    return stops


# ---------------------------------------------------------------------------------------
# the loop


_StepCallback = Callable[[int], None]


class _Clock:
    """Wall and process-CPU seconds since the last lap (CPU seconds are per-core work: steady on a busy machine)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self, into: dict[str, float], phase: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        into[phase] += wall - self.wall
        into[f"{phase}_cpu"] += cpu - self.cpu
        self.wall, self.cpu = wall, cpu


def _fit(st: Stack, keep_weights: bool, progress: bool, block_elems: int, eval_elems: int, timings: dict[str, float],
         on_steps: _StepCallback | None) -> list[tuple[int, RunResult]]:
    """Train the stack until every run has stopped; results tagged with the caller's positions."""
    results: list[tuple[int, RunResult]] = []
    clock = _Clock()
    every = st.cfgs[0].check_every
    bar = tqdm(total=max(c.max_steps for c in st.cfgs), desc="train", unit="step", disable=not progress,
               leave=False)
    with bar:
        while True:
            t0 = st.step
            t1 = min((t0 // every + 1) * every, min(c.max_steps for c in st.cfgs))
            train_steps(st, t0, t1, block_elems)
            st.step = t1
            bar.update(t1 - t0)
            if on_steps is not None:
                on_steps(st.R * (t1 - t0))  # model-steps just taken
            due = [i for i, c in enumerate(st.cfgs) if t1 % every == 0 or t1 == c.max_steps]
            stops = check(st, due, eval_elems)
            if progress:
                last = [tr.curve[-1][1] for tr in st.tracks if tr.curve]
                if last:
                    best = max(last) if st.cfgs[0].metric == "f1" else min(last)
                    bar.set_postfix(active=st.R, **{f"best_val_{st.cfgs[0].metric}": f"{best:.4f}"})
            if stops:
                sync(st.device)
                clock.lap(timings, "train")
                results += test(st, sorted(stops), block_elems, eval_elems, keep_weights, stops)
                sync(st.device)
                clock.lap(timings, "test")
                rest = [i for i in range(st.R) if i not in stops]
                if not rest:
                    break
                st = st.select(rest)  # compact: the stopped runs are gone, frozen as they were
    return results


def train(
    configs: Sequence[RunConfig],
    device: str | torch.device = "cpu",
    progress: bool = True,
    keep_weights: bool = False,
    max_stack: int | None = None,
    block_elems: int | None = None,
    eval_elems: int = 1 << 19,
    timings: dict[str, float] | None = None,
    on_steps: _StepCallback | None = None,
    cuda_graphs: bool | None = None,
) -> list[RunResult]:
    """Train every run of ``configs`` by protocol E1/E4/E5/E6, stacking whatever can stack.

    Results come back in the order of ``configs``, each equal (up to float
    rounding) to training that run alone. ``max_stack`` bounds the runs per
    program; ``block_elems`` (default 2^24 on a CPU, 2^27 on CUDA)/``eval_elems`` bound the elements of the
    tensors built per block of training contexts and per evaluation chunk (memory only:
    results do not depend on them). ``keep_weights`` attaches the final weights.
    ``timings``, when given, accumulates wall seconds per phase: "setup"
    (tasks, init, validation contexts), "train" (steps, including sampling and
    validation checks) and "test", and process-CPU seconds of each as
    "setup_cpu", "train_cpu", "test_cpu". ``on_steps``, when given, is called with the
    number of model-steps (runs x steps) after each stretch of training: a
    progress bar in model-steps (:func:`rgr.experiments.sizing.projection.model_steps_bound`
    gives its total). ``cuda_graphs`` (default: on CUDA) replays each stack's
    step from a captured CUDA graph (:mod:`.graphed`); True on a
    CPU runs its eager twin through the same static buffers. Left at None, the environment variable
    ``RGR_CUDA_GRAPHS=0`` turns the graphs off (a sweep's escape hatch should a GPU's graph capture fail).
    """
    configs = list(configs)
    for c in configs:
        if not isinstance(c, RunConfig):
            raise ValueError(f"configs must hold RunConfig values, got {type(c).__name__}")
    dev = resolve_device(device)
    if block_elems is None:  # a GPU stack of thousands of runs wants long blocks: sampling is launch-bound there
        block_elems = 1 << 27 if dev.type == "cuda" else 1 << 24
    check_int("block_elems", block_elems, 1)
    check_int("eval_elems", eval_elems, 1)
    clock = {k: 0.0 for k in ("setup", "train", "test", "setup_cpu", "train_cpu", "test_cpu")}
    out: list[RunResult | None] = [None] * len(configs)
    graphed = graphs_enabled(dev) if cuda_graphs is None else bool(cuda_graphs)
    for group in stack_groups(configs, max_stack, dev):
        t = _Clock()
        st = build_stack([configs[i] for i in group], group, dev, block_elems, graphed)
        sync(dev)
        t.lap(clock, "setup")
        for i, res in _fit(st, keep_weights, progress, block_elems, eval_elems, clock, on_steps):
            out[i] = res
    if timings is not None:
        for k, v in clock.items():
            timings[k] = timings.get(k, 0.0) + v
    return out  # type: ignore[return-value]


def train_run(cfg: RunConfig, device: str | torch.device = "cpu", progress: bool = True,
              keep_weights: bool = False) -> RunResult:
    """Train one run alone (a stack of one)."""
    return train([cfg], device=device, progress=progress, keep_weights=keep_weights)[0]
