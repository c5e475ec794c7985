"""How the peers' tables train (chapter *the law beside other capacity results*): one run at a time, on the
re-implemented models (:func:`rgr.experiments.peers.aot.train_aot`, :func:`rgr.experiments.peers.pal.train_pal`).

What the tables are is :data:`rgr.experiments.peers.aot_sweep.AOT` and :data:`rgr.experiments.peers.pal_sweep.PAL`;
this module is imported by :mod:`rgr.trainers` alone.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import torch

from ...store import provenance
from ..runner import Sweepable
from .aot import AoTConfig, train_aot
from .aot_sweep import PRESETS as AOT_PRESETS
from .aot_sweep import AoTSweep
from .aot_sweep import run_key as aot_key
from .pal import PalConfig, law_x, train_pal
from .pal_sweep import PalSweep
from .pal_sweep import run_key as pal_key

__all__ = ["AoTTrainer", "PalTrainer"]


@dataclass(frozen=True)
class AoTTrainer(Sweepable):
    """The ``aot`` table as the runner trains it: each run alone."""

    table: AoTSweep

    def train_stack(self, configs: Sequence[AoTConfig], preset: str, device: torch.device) -> list[dict]:
        question = {cfg: q for q, cfg in AOT_PRESETS[preset]}
        rows = []
        for cfg in configs:
            t0 = time.perf_counter()
            res = train_aot(cfg)
            rows.append({**dataclasses.asdict(cfg), **res, "question": question[cfg], "stack_size": 1,
                         "wall_time_s": time.perf_counter() - t0, "run_key": aot_key(cfg, preset),
                         **provenance(preset, device)})
        return rows


@dataclass(frozen=True)
class PalTrainer(Sweepable):
    """The ``pal`` table as the runner trains it: each run alone."""

    table: PalSweep

    def train_stack(self, configs: Sequence[PalConfig], preset: str, device: torch.device) -> list[dict]:
        rows = []
        for cfg in configs:
            t0 = time.perf_counter()
            res = train_pal(cfg)
            rows.append({**dataclasses.asdict(cfg), "x": law_x(cfg.N, cfg.d), **res, "stack_size": 1,
                         "wall_time_s": time.perf_counter() - t0, "run_key": pal_key(cfg, preset),
                         **provenance(preset, device)})
        return rows
