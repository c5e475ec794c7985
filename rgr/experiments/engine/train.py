"""The paper's training protocol, many runs stacked in one tensor program (chapter *permutation sweeps*).

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

Stacking (:mod:`rgr.experiments.engine.groups`, :mod:`rgr.experiments.engine.stack`). Runs with the same
:meth:`RunConfig.stack_key` train together, whatever their h, d_k, m or seed:
parameters get a leading run axis R, padded to the stack's widest heads with
zero columns and masked heads, the loss is *summed* over runs (so each run's
gradient, and its AdamW update, is exactly its own), contexts are drawn for all
runs in blocks by :func:`rgr.task.contexts.sample_stacked` (a run's contexts
depend on its seed and the step only). A run that stops is evaluated, recorded,
and dropped from the stack at once (the stack is compacted), so a finished run
is frozen exactly and costs nothing afterwards.

This module holds the loop; the configuration is in
:mod:`rgr.experiments.engine.config`, the stack's state in :mod:`rgr.experiments.engine.stack`,
the step and losses in :mod:`rgr.experiments.engine.step`, the checks and test in
:mod:`rgr.experiments.engine.evaluate`.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Sequence

import torch
from tqdm import tqdm

from .config import RunConfig, RunResult, check_int
from .device import resolve_device, sync
from .evaluate import check, test
from .groups import stack_groups
from .stack import Stack, build_stack
from .step import train_steps

__all__ = ["StepCallback", "train", "train_run", "graphs_enabled"]

StepCallback = Callable[[int], None]


class _Clock:
    """Wall and process-CPU seconds since the last lap (CPU seconds are per-core work: steady on a busy machine)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def lap(self, into: dict[str, float], phase: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        into[phase] += wall - self.wall
        into[f"{phase}_cpu"] += cpu - self.cpu
        self.wall, self.cpu = wall, cpu


def _fit(
    st: Stack,
    keep_weights: bool,
    progress: bool,
    block_elems: int,
    eval_elems: int,
    timings: dict[str, float],
    on_steps: StepCallback | None,
) -> list[tuple[int, RunResult]]:
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
                sync(st.X.device)
                clock.lap(timings, "train")
                results += test(st, sorted(stops), block_elems, eval_elems, keep_weights, stops)
                sync(st.X.device)
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
    on_steps: StepCallback | None = None,
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
    step from a captured CUDA graph (:mod:`rgr.experiments.engine.graphed`); True on a
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
    for group in stack_groups(configs, max_stack, dev):
        t = _Clock()
        graphed = graphs_enabled(dev) if cuda_graphs is None else bool(cuda_graphs)
        st = build_stack([configs[i] for i in group], group, dev, block_elems, graphed)
        sync(dev)
        t.lap(clock, "setup")
        for i, res in _fit(st, keep_weights, progress, block_elems, eval_elems, clock, on_steps):
            out[i] = res
    if timings is not None:
        for k, v in clock.items():
            timings[k] = timings.get(k, 0.0) + v
    return out  # type: ignore[return-value]


def graphs_enabled(dev: torch.device) -> bool:
    """CUDA graphs on a GPU unless ``RGR_CUDA_GRAPHS=0``; never on a CPU by default."""
    return dev.type == "cuda" and os.environ.get("RGR_CUDA_GRAPHS", "1") != "0"


def train_run(cfg: RunConfig, device: str | torch.device = "cpu", progress: bool = True,
              keep_weights: bool = False) -> RunResult:
    """Train one run alone (a stack of one)."""
    return train([cfg], device=device, progress=progress, keep_weights=keep_weights)[0]
