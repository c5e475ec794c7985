"""How the peers' tables train (chapter *the law beside other capacity results*): one run at a time, on the
re-implemented models (:func:`rgr.experiments.peers.aot.train_aot`, :func:`rgr.experiments.peers.pal.train_pal`).

What the tables are is :data:`rgr.experiments.peers.aot_sweep.AOT` and :data:`rgr.experiments.peers.pal_sweep.PAL`;
this module is imported by :mod:`rgr.trainers` alone.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ..runner import Sweepable
from .aot import AoTConfig, train_aot
from .aot_sweep import PRESETS as AOT_PRESETS
from .aot_sweep import AoTSweep
from .pal import PalConfig, law_x, train_pal
from .pal_sweep import PalSweep

__all__ = ["AoTTrainer", "PalTrainer"]


@dataclass(frozen=True)
class AoTTrainer(Sweepable):
    """The ``aot`` table as the runner trains it: each run alone."""

    table: AoTSweep

    def train_rows(self, configs: list[AoTConfig], preset: str, device: torch.device) -> list[dict]:
        question = {cfg: q for q, cfg in AOT_PRESETS[preset]}
        return [{**dataclasses.asdict(cfg), **train_aot(cfg), "question": question[cfg]} for cfg in configs]


@dataclass(frozen=True)
class PalTrainer(Sweepable):
    """The ``pal`` table as the runner trains it: each run alone."""

    table: PalSweep

    def train_rows(self, configs: list[PalConfig], preset: str, device: torch.device) -> list[dict]:
        return [{**dataclasses.asdict(cfg), "x": law_x(cfg.N, cfg.d), **train_pal(cfg)} for cfg in configs]
