"""How E7 trains for the runner (:class:`GPT2Trainer`): seeds of one (D_K, h) shape as one stack
(:func:`rgr.gpt2.training.train_runs`), written as rows of data/gpt2.csv.

What the table is (grid, schema, keys) is :data:`rgr.gpt2.experiment.GPT2`; this module is imported by
:mod:`rgr.trainers` alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch

from ..experiments.runner import Sweepable
from .block import Config
from .experiment import SCHEMA, GPT2Sweep
from .training import train_runs

__all__ = ["GPT2Trainer"]


@dataclass(frozen=True)
class GPT2Trainer(Sweepable):
    """E7 as :func:`rgr.experiments.runner.run_sweep` trains it."""

    table: GPT2Sweep
    honours_deadline: bool = True  # a stack projects itself after its first steps (rgr.gpt2.training)

    def dry_run_report(self, preset: str, device, workers: int = 1, shard: tuple[int, int] = (0, 1),
                       done: pd.DataFrame | None = None, max_stack: int | None = None,
                       root: Path | None = None) -> list[str]:
        """What ``sweep gpt2 --dry-run`` prints: the runs, and their time from a short bench of the preset's cheapest
        and costliest stacks here (:mod:`rgr.gpt2.bench`: measured pace, one process per worker)."""
        from .bench import project_minutes, time_stack

        runs = self.planned_runs(preset, None, shard)
        have = set() if done is None or not len(done) else set(done["run_key"])
        pending = [c for c in runs if self.run_key(c, preset) not in have]
        head = f"gpt2/{preset}: {len(runs)} runs of {runs[0].steps:,} steps; {len(pending)} pending"
        if not pending:
            return [head, "nothing to train"]
        shapes = sorted({c.shape_key() for c in runs}, key=lambda c: (c.D_K, c.h))
        size = sum(c.shape_key() == shapes[0] for c in runs)
        dev = torch.device(device if isinstance(device, str) else device.type)
        paces = [time_stack(c, size, dev, steps=20, warmup=3) for c in (shapes[0], shapes[-1])]
        minutes = project_minutes(preset, paces) * len(pending) / len(runs) / max(1, workers)
        return [head, f"projected {minutes / 60:.1f} h on {workers} worker(s) ({dev.type}; stacks of {size} timed "
                      f"here for 20 steps at D_K = {shapes[0].D_K} and {shapes[-1].D_K}: "
                      f"{paces[0].ms_per_step:.0f}-{paces[1].ms_per_step:.0f} ms per stacked step)"]

    def stack_key(self, cfg: Config) -> Config:
        return cfg.shape_key()  # the seeds of one (D_K, h) shape

    def train_rows(self, configs: list[Config], preset: str, device: torch.device,
                   deadline: float | None = None) -> list[dict]:
        """One stack's rows; bf16 autocast on CUDA, fp32 on a CPU (the ``precision`` column says which)."""
        results = train_runs(configs, device=device, max_stack=len(configs), deadline=deadline)
        return [{**{c.name: res.get(c.name) for c in SCHEMA.columns}, **dataclasses.asdict(cfg), "d_k": cfg.d_k}
                for res, cfg in zip(results, configs)]
