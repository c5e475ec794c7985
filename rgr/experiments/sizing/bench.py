"""``python -m rgr bench``: the stacked engine against one-run loops, and on a sweep's real stacks.

Same-shape mode (the default) trains one configuration (protocol E1, chapter
*permutation sweeps*) three ways in one process:

- **naive** (:func:`rgr.experiments.sizing.loops.train_naive`): the loop as one
  would first write it;
- **baseline** (:func:`rgr.experiments.sizing.loops.train_baseline`): the one-run
  loop a competent researcher would write (one context per step, sampled a
  block at a time, fused weights, fused AdamW);
- **stacked** (:func:`rgr.experiments.engine.loop.train`): R runs as one program.

Sweep mode (``--sweep <experiment> --preset <p>``) trains the first round's
actual stacks (as :func:`rgr.experiments.engine.config.stack_groups` forms them),
each run cut at ``--sweep-steps`` steps, stacks in a fixed shuffled order until
``--budget`` seconds have passed, and reports model-steps per second per
worker beside the same-shape figure (``--padding 1`` forms exact-shape stacks,
as the engine did before mixed stacks).

Wide-cell mode (``--cell 4096x512``; also ``1024x128``, ``2048x256``, ``1024x32``) trains one of
the ``paper`` preset's first-round stacks of that (m, d_model) cell as the engine forms it (the stack
of ``--heads`` heads at the cell's largest D_K), each run cut at ``--cell-steps`` steps, against the
one-run baseline loop on the very same runs, interleaved ``--cell-repeats`` times; it replaces the
same-shape figures (the matmul reference is still measured).

Only the training phase is timed (steps, sampling, the validation checks);
set-up and the test evaluation are not. On a CPU the rates are per
process-CPU second (one thread: per-core work, steady on a machine other jobs
share; wall seconds are printed beside them); on CUDA, per wall second. FLOPs count the matmuls of the forward
and backward passes of each run's own shape ("useful"; a mixed stack's padding
is not counted), set against a large square matmul timed in the same process.
``--threads`` defaults to 1: per-core throughput, the fair unit on a machine
where every way would run one process per core.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from typing import Sequence

import torch

from ..engine.config import DTYPES, MAX_PADDING, RunConfig, resolve_device, stack_groups
from ..engine.loop import train
from .calibration import features
from .loops import train_baseline, train_naive


def matmul_gflops(device: torch.device, dtype: torch.dtype, n: int = 2048, repeats: int = 3) -> float:
    """GFLOP/s of an n x n x n matmul (best of ``repeats``; per CPU second on a CPU), the practical ceiling."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    best = float("inf")
    clock = time.process_time if device.type == "cpu" else time.perf_counter
    for _ in range(repeats + 1):  # the first call warms up
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t = clock()
        a @ b
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, clock() - t)
    return 2 * n**3 / best / 1e9


@dataclass(frozen=True)
class _SweepBench:
    """Training throughput on a sweep's real stacks (see the module docstring)."""

    stacks: int  # stacks trained
    stacks_total: int  # stacks in the first round
    runs: int  # runs trained
    model_steps: int
    train_seconds: float  # CPU seconds on a CPU, wall seconds on CUDA
    wall_seconds: float
    useful_flops: float  # matmul FLOPs of the runs' own shapes

    @property
    def rate(self) -> float:
        return self.model_steps / max(self.train_seconds, 1e-12)

    @property
    def gflops(self) -> float:
        return self.useful_flops / max(self.train_seconds, 1e-12) / 1e9


def _bench_sweep(
    configs: Sequence[RunConfig], device: str | torch.device = "cpu", budget: float = 60.0, steps: int = 500,
    max_padding: float = MAX_PADDING, seed: int = 0,
) -> _SweepBench:
    """Train the stacks of ``configs``, each run cut at ``steps`` steps, in a shuffled order (``seed``) until
    ``budget`` seconds have passed (at least one stack); only training is timed."""
    dev = resolve_device(device)
    groups = stack_groups(configs, None, dev, max_padding)
    order = torch.randperm(len(groups), generator=torch.Generator().manual_seed(seed)).tolist()
    start = time.perf_counter()
    n_stacks = n_runs = model_steps = 0
    seconds = wall = flops = 0.0
    key = "train_cpu" if dev.type == "cpu" else "train"
    for j in order:
        cfgs = [configs[i].replace(max_steps=min(configs[i].max_steps, steps), n_test=1) for i in groups[j]]
        timings: dict[str, float] = {}
        results = train(cfgs, device=dev, progress=False, timings=timings)
        n_stacks, n_runs = n_stacks + 1, n_runs + len(cfgs)
        model_steps += sum(r.steps for r in results)
        flops += sum(r.steps * features([r.config], 1)[0] for r in results)
        seconds += timings[key]
        wall += timings["train"]
        if time.perf_counter() - start > budget:
            break
    return _SweepBench(stacks=n_stacks, stacks_total=len(groups), runs=n_runs, model_steps=model_steps,
                      train_seconds=seconds, wall_seconds=wall, useful_flops=flops)


# the paper's wide cells: name -> (experiment, m, d_model)
CELLS: dict[str, tuple[str, int, int]] = {
    "1024x128": ("lambda8", 1024, 128),
    "2048x256": ("lambda8", 2048, 256),
    "4096x512": ("lambda8", 4096, 512),
    "1024x32": ("lambda32", 1024, 32),
}


def cell_stack(name: str, heads: int, device: str | torch.device = "cpu") -> list[RunConfig]:
    """The ``paper`` preset's first-round stack of cell ``name`` (:data:`CELLS`) with ``heads`` heads and the
    cell's largest D_K, as :func:`rgr.experiments.engine.config.stack_groups` forms it on ``device``."""
    if name not in CELLS:
        raise ValueError(f"--cell must be one of {sorted(CELLS)}, got {name!r}")
    exp, m, d = CELLS[name]
    runs = [c for c in _sweep_configs(exp, "paper") if (c.m, c.d_model, c.h) == (m, d, heads)]
    if not runs:
        raise ValueError(f"--heads {heads}: the paper preset has no such runs in cell {name}")
    groups = stack_groups(runs, None, resolve_device(device))
    top = max(groups, key=lambda g: max(runs[i].D_K for i in g))
    return [runs[i] for i in top]


@dataclass(frozen=True)
class _CellBench:
    """A wide cell's real stack against the one-run baseline on the same runs (see the module docstring)."""

    runs: int  # R, the stack's runs
    stacked_steps: int  # model-steps the stack trained (all repeats)
    stacked_seconds: float  # CPU seconds on a CPU, wall on CUDA (training phase: steps and checks)
    baseline_steps: int
    baseline_seconds: float
    flops_per_run_step: float  # mean useful matmul FLOPs of one model-step of the stack's runs

    @property
    def stacked_rate(self) -> float:
        return self.stacked_steps / max(self.stacked_seconds, 1e-12)

    @property
    def baseline_rate(self) -> float:
        return self.baseline_steps / max(self.baseline_seconds, 1e-12)

    @property
    def ratio(self) -> float:
        return self.stacked_rate / max(self.baseline_rate, 1e-12)


def _bench_cell(
    cfgs: Sequence[RunConfig], device: str | torch.device = "cpu", steps: int = 1000, baseline_steps: int = 500,
    repeats: int = 1,
) -> _CellBench:
    """Train the stack ``cfgs`` (each run cut at ``steps``) and each of its runs alone by
    :func:`train_baseline` (cut at ``baseline_steps``), alternating ``repeats`` times; only training is timed."""
    dev = resolve_device(device)
    cpu = dev.type == "cpu"
    stack = [c.replace(max_steps=min(c.max_steps, steps), n_test=1) for c in cfgs]
    alone = [c.replace(max_steps=min(c.max_steps, baseline_steps)) for c in cfgs]
    s_steps = b_steps = 0
    s_secs = b_secs = 0.0
    for rep in range(repeats):
        for way in ("stacked", "baseline") if rep % 2 == 0 else ("baseline", "stacked"):
            if way == "stacked":
                timings: dict[str, float] = {}
                s_steps += sum(r.steps for r in train(stack, device=dev, progress=False, timings=timings))
                s_secs += timings["train_cpu" if cpu else "train"]
            else:
                res = [train_baseline(c, dev) for c in alone]
                b_steps += sum(r.steps for r in res)
                b_secs += sum(r.train_cpu_seconds if cpu else r.train_seconds for r in res)
    flops = sum(features([c], 1)[0] for c in cfgs) / len(cfgs)
    return _CellBench(runs=len(cfgs), stacked_steps=s_steps, stacked_seconds=s_secs, baseline_steps=b_steps,
                     baseline_seconds=b_secs, flops_per_run_step=flops)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rgr bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--m", type=int, default=256, help="items (default 256)")
    p.add_argument("--d-model", type=int, default=32, help="embedding width (default 32)")
    p.add_argument("--heads", type=int, default=8, help="heads h (default 8)")
    p.add_argument("--dk-total", type=int, default=128, help="total key budget D_K = h d_k (default 128)")
    p.add_argument("--model", default="max", choices=("max", "softmax", "sum"), help="model kind (default max)")
    p.add_argument("--runs", type=int, default=64, help="stacked runs R (default 64)")
    p.add_argument("--steps", type=int, default=2000, help="steps of the stacked runs (default 2000)")
    p.add_argument("--naive-runs", type=int, default=4, help="runs timed each one-run way (default 4)")
    p.add_argument("--naive-steps", type=int, default=500, help="steps of each one-run run (default 500)")
    p.add_argument("--check-every", type=int, default=500, help="steps between validation checks (default 500)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (default cpu)")
    p.add_argument("--dtype", default="float32", choices=tuple(DTYPES), help="default float32")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1: per-core throughput)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    s = p.add_argument_group("real sweep stacks")
    s.add_argument("--sweep", default=None, metavar="EXPERIMENT", help="also time this experiment's first-round stacks")
    s.add_argument("--preset", default="book", help="the sweep's preset (default book)")
    s.add_argument("--budget", type=float, default=60.0, help="wall seconds for the sweep's stacks (default 60)")
    s.add_argument("--sweep-steps", type=int, default=500, help="steps per run of the sweep's stacks (default 500)")
    s.add_argument("--padding", type=float, default=MAX_PADDING,
                   help=f"most padding of a run in a mixed stack (default {MAX_PADDING:g}; 1: exact shapes only)")
    c = p.add_argument_group("the paper's wide cells")
    c.add_argument("--cell", default=None, choices=tuple(CELLS),
                   help="time a paper first-round stack of this (m x d_model) cell (--heads heads, its largest D_K) "
                        "against the one-run baseline on the same runs, instead of the same-shape figures")
    c.add_argument("--cell-steps", type=int, default=1000, help="steps per stacked run (default 1000: two checks)")
    c.add_argument("--cell-repeats", type=int, default=1, help="stacked/baseline alternations (default 1)")
    return p


def _sweep_configs(name: str, preset: str) -> list[RunConfig]:
    """The first round's runs of an experiment's preset (the sweep registry is imported here, not above)."""
    from ..registry import get_experiment

    return get_experiment(name).planned_runs(preset)


def _line(label: str, rate: float, flops: float, peak: float, extra: str = "") -> str:
    gf = rate * flops / 1e9 if flops else 0.0
    return f"{label} {rate:.0f} model-steps/s, {gf:.2f} GFLOP/s ({100 * gf / peak:.1f}% of matmul){extra}"


_MAX_GIB = 4  # a benchmark's embeddings may take at most this much memory: a size check before any work
_FLAGS = {"m": "--m", "d_model": "--d-model", "h": "--heads", "d_k": "--dk-total", "seed": "--seed",
          "check_every": "--check-every", "dtype": "--dtype", "model": "--model"}


def _checked(
    args: argparse.Namespace,
) -> tuple[RunConfig, torch.device, list[RunConfig] | None, list[RunConfig] | None]:
    """Every input checked before any work; a ValueError names the parameter."""
    for name in ("heads", "dk_total", "runs", "steps", "naive_runs", "naive_steps", "threads", "check_every",
                 "sweep_steps", "cell_steps", "cell_repeats"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if args.dk_total % args.heads:
        raise ValueError(f"--dk-total must be a multiple of --heads ({args.heads}), got {args.dk_total}")
    if not args.budget > 0:
        raise ValueError(f"--budget must be > 0, got {args.budget}")
    if not args.padding >= 1:
        raise ValueError(f"--padding must be >= 1, got {args.padding}")
    try:
        base = RunConfig(
            m=args.m, d_model=args.d_model, h=args.heads, d_k=args.dk_total // args.heads, seed=args.seed,
            model=args.model, check_every=args.check_every, dtype=args.dtype,
        )  # fmt: skip
    except ValueError as e:
        field = str(e).split()[0]
        if field == "ell":  # bench has no --ell: the context length (16) bounds --m from below
            raise ValueError(f"--m must be at least the context length ell = 16, got {args.m}") from None
        raise ValueError(f"{_FLAGS.get(field, field)}: {e}") from None
    gib = (args.runs * args.m * args.d_model * (8 if args.dtype == "float64" else 4)) / 2**30
    if gib > _MAX_GIB:
        raise ValueError(f"--m x --d-model: {args.runs} runs' embeddings alone take {gib:,.0f} GiB (at most "
                         f"{_MAX_GIB} GiB here); choose smaller --m, --d-model or --runs")
    try:
        dev = resolve_device(args.device)
    except ValueError as e:
        raise ValueError(f"--device: {e}") from None
    sweep = _sweep_configs(args.sweep, args.preset) if args.sweep else None
    cell = cell_stack(args.cell, args.heads, dev) if args.cell else None
    return base, dev, sweep, cell


def _report_cell(args: argparse.Namespace, cfgs: list[RunConfig], dev: torch.device, dtype: torch.dtype) -> int:
    print(f"bench: cell {args.cell} ell={cfgs[0].ell} model={cfgs[0].model} dtype={args.dtype} device={dev} "
          f"threads={torch.get_num_threads()}")
    peak = matmul_gflops(dev, dtype)
    print(f"matmul reference: 2048^3 {args.dtype} -> {peak:.1f} GFLOP/s")
    cb = _bench_cell([c.replace(dtype=args.dtype) for c in cfgs], dev, args.cell_steps, args.naive_steps,
                    args.cell_repeats)
    unit = "CPU-s" if dev.type == "cpu" else "s"
    print(f"cell {args.cell}: {CELLS[args.cell][0]}/paper first-round stack, R = {cb.runs} runs, h = {cfgs[0].h}, "
          f"D_K {sorted({c.D_K for c in cfgs})}; {cb.flops_per_run_step / 1e6:.3f} MFLOP per model-step (mean)")
    print(_line(f"stacked:  {cb.stacked_steps} model-steps, {cb.stacked_seconds:.2f} {unit} ->", cb.stacked_rate,
                cb.flops_per_run_step, peak))
    print(_line(f"baseline: {cb.baseline_steps} model-steps (one run at a time), {cb.baseline_seconds:.2f} {unit} ->",
                cb.baseline_rate, cb.flops_per_run_step, peak))
    print(f"stacked / baseline: {cb.ratio:.2f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    import sys

    args = parser().parse_args(argv)
    try:
        base, dev, sweep, cell = _checked(args)
    except ValueError as e:
        print(f"rgr bench: {e}", file=sys.stderr)
        return 2
    dtype = DTYPES[args.dtype]
    threads_before = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    try:
        flops = features([base], 1)[0]
        if cell is not None:
            return _report_cell(args, cell, dev, dtype)
        print(
            f"bench: m={base.m} d_model={base.d_model} h={base.h} D_K={base.D_K} (d_k={base.d_k}) ell={base.ell} "
            f"model={base.model} dtype={base.dtype} device={dev} threads={torch.get_num_threads()}"
        )
        peak = matmul_gflops(dev, dtype)
        print(f"matmul reference: 2048^3 {base.dtype} -> {peak:.1f} GFLOP/s")
        print(f"flops per model-step: {flops / 1e6:.3f} MFLOP (matmuls of forward + backward)")

        rates = {}
        cpu = dev.type == "cpu"
        unit = "CPU-s" if cpu else "s"
        for name, fn in (("naive", train_naive), ("baseline", train_baseline)):
            res = [fn(base.replace(seed=args.seed + i, max_steps=args.naive_steps), dev)
                   for i in range(args.naive_runs)]
            secs = sum(r.train_cpu_seconds if cpu else r.train_seconds for r in res)
            rates[name] = args.naive_runs * args.naive_steps / secs
            print(_line(f"{name + ':':<9} {args.naive_runs} runs x {args.naive_steps} steps, {secs:.2f} {unit} "
                        f"({sum(r.train_seconds for r in res):.2f} s wall) ->", rates[name], flops, peak))

        timings: dict[str, float] = {}
        cfgs = [base.replace(seed=args.seed + i, max_steps=args.steps) for i in range(args.runs)]
        results = train(cfgs, device=dev, progress=False, timings=timings)
        secs = timings["train_cpu" if cpu else "train"]
        stacked = sum(r.steps for r in results) / secs
        print(_line(f"stacked:  {args.runs} runs x {args.steps} steps, {secs:.2f} {unit} "
                    f"({timings['train']:.2f} s wall) ->", stacked, flops, peak,
                    f"; untimed set-up {timings['setup']:.2f} s, test {timings['test']:.2f} s"))
        if sweep is not None:
            sb = _bench_sweep(sweep, dev, args.budget, args.sweep_steps, args.padding, args.seed)
            print(f"sweep:    {args.sweep}/{args.preset}: {sb.stacks} of {sb.stacks_total} first-round stacks "
                  f"({sb.runs} runs, <= {args.sweep_steps} steps each, padding <= {args.padding:g}x), "
                  f"{sb.train_seconds:.2f} {unit} ({sb.wall_seconds:.2f} s wall) -> {sb.rate:.0f} model-steps/s per "
                  f"worker, {sb.gflops:.2f} useful GFLOP/s "
                  f"({100 * sb.gflops / peak:.1f}% of matmul); {100 * sb.rate / stacked:.0f}% of the same-shape rate")
        print(f"speedup over baseline: {stacked / rates['baseline']:.1f}")
        print(f"speedup: {stacked / rates['naive']:.1f}")
    finally:
        torch.set_num_threads(threads_before)
    return 0
