"""``python -m rgr bench --gpt2 PRESET``: the E7 block's training step on this device, and what a preset costs
at that pace (chapter *GPT-2 block*; README *Performance*).

A preset's stacks are its (D_K, h) shapes with every seed (:class:`rgr.gpt2.experiment.GPT2Sweep`). The bench
trains, for a few of those shapes, one whole stack for ``warmup + steps`` steps through the very loop a sweep
runs (:func:`rgr.gpt2.training.train_runs`: sampling, bf16 autocast on CUDA, AdamW) and times the last
``steps`` of them; the validation set and test set are cut to a few examples and left out of the clock. It
reports milliseconds per stacked step, model-steps per second (runs x steps), the matmul FLOP rate of the
runs' own shapes (:func:`rgr.gpt2.experiment.step_flops`) and its share of a large square matmul timed on the same
device in the same precision (the card's practical peak, measured here). The projection prices every stack of
the preset at the measured pace of the nearest timed shape by FLOPs (linear in step FLOPs between the two
timed ends), adding its validation checks and test at a third of a step per example (forward only): one
process, nothing else on the device. An estimate from a measurement, not a measurement of the preset.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from ..experiments.engine.config import resolve_device
from ..experiments.sizing.bench import matmul_gflops
from .experiment import PRESETS, Config, experiment_grid, step_flops
from .training import item_table, resolve_precision, train_runs


@dataclass(frozen=True)
class _StackPace:
    """One stack's measured pace: ``runs`` stacked runs of ``cfg``'s shape, ``seconds`` for ``steps`` steps."""

    cfg: Config
    runs: int
    steps: int
    seconds: float

    @property
    def ms_per_step(self) -> float:
        return 1e3 * self.seconds / self.steps

    @property
    def model_steps_per_s(self) -> float:
        return self.runs * self.steps / self.seconds

    @property
    def tflops(self) -> float:
        """Matmul TFLOP/s of the runs' own shapes (forward and backward)."""
        return self.runs * step_flops(self.cfg) * self.steps / self.seconds / 1e12


def time_stack(cfg: Config, runs: int, device: torch.device, steps: int = 200, warmup: int = 30,
               precision: str = "auto") -> _StackPace:
    """Time ``steps`` training steps of a stack of ``runs`` seeds of ``cfg`` after ``warmup`` steps."""
    if steps < 1 or warmup < 1 or runs < 1:
        raise ValueError(f"steps, warmup and runs must be >= 1, got {steps}, {warmup}, {runs}")
    short = replace(cfg, steps=warmup + steps, eval_interval=warmup + steps, n_val=64, n_test=64)
    configs = [replace(short, seed=s) for s in range(runs)]
    marks: dict[int, float] = {}

    def tick(done: int, total: int) -> None:
        if done in (warmup, warmup + steps):
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            marks[done] = time.perf_counter()

    train_runs(configs, device=device, progress=tick, max_stack=runs, table=item_table(short), precision=precision)
    return _StackPace(cfg, runs, steps, marks[warmup + steps] - marks[warmup])


def project_minutes(preset: str, paces: list[_StackPace]) -> float:
    """Minutes of one process to train every stack of ``preset`` at the measured ``paces`` (see the module doc)."""
    grid = experiment_grid(preset, "stand-in")
    flops = np.array([step_flops(p.cfg) for p in paces], dtype=float)
    ms = np.array([p.ms_per_step for p in paces])
    order = np.argsort(flops)
    total = 0.0
    for key in dict.fromkeys(c.shape_key() for c in grid):
        per_step = float(np.interp(step_flops(key), flops[order], ms[order])) / 1e3
        checks = key.steps // key.eval_interval + 1
        eval_steps = (checks * key.n_val + key.n_test) / (3 * key.batch_size)
        total += per_step * (key.steps + eval_steps)
    return total / 60


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rgr bench --gpt2", description=__doc__.split("\n\n")[0])
    p.add_argument("--gpt2", required=True, choices=sorted(PRESETS), help="the E7 preset whose stacks are timed")
    p.add_argument("--device", default="auto", help="cpu, cuda or auto (default auto)")
    p.add_argument("--steps", type=int, default=200, help="timed steps per stack (default 200)")
    p.add_argument("--warmup", type=int, default=30, help="untimed steps first (default 30)")
    p.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                   help="auto: bf16 autocast on CUDA, fp32 on a CPU (default)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    for flag in ("steps", "warmup", "threads"):
        if getattr(a, flag) < 1:
            parser().error(f"--{flag} must be >= 1, got {getattr(a, flag)}")
    torch.set_num_threads(a.threads)
    dev = resolve_device(a.device)
    precision = resolve_precision(a.precision, dev)
    grid = experiment_grid(a.gpt2, "stand-in")
    shapes = list(dict.fromkeys(c.shape_key() for c in grid))
    runs = sum(c.shape_key() == shapes[0] for c in grid)
    ends = sorted({min(shapes, key=step_flops), max(shapes, key=lambda c: (step_flops(c), c.h))}, key=step_flops)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    peak = matmul_gflops(dev, dtype, n=8192 if dev.type == "cuda" else 1024) / 1e3
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"E7 {a.gpt2} preset on {name} ({precision}); matmul reference {peak:,.1f} TFLOP/s "
          f"({'8192' if dev.type == 'cuda' else '1024'}^3, {dtype})", flush=True)
    paces = []
    for cfg in ends:
        pace = time_stack(cfg, runs, dev, a.steps, a.warmup, a.precision)
        paces.append(pace)
        print(f"  D_K = {cfg.D_K}, h = {cfg.h}, R = {runs}, batch {cfg.batch_size}, m = {cfg.m}, ell = {cfg.ell}: "
              f"{pace.ms_per_step:.2f} ms/step, {pace.model_steps_per_s:,.0f} model-steps/s, "
              f"{pace.tflops:,.2f} TFLOP/s ({100 * pace.tflops / peak:.1f}% of the reference)", flush=True)
    minutes = project_minutes(a.gpt2, paces)
    print(f"projection: the whole {a.gpt2} preset ({len(grid)} runs in {len(shapes)} stacks of {runs}, "
          f"{grid[0].steps:,} steps each) {minutes:,.1f} minutes of one process here", flush=True)
    return 0
