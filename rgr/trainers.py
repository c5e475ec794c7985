"""How each table of data/ trains, by name (:func:`trainer`): the engine and the other trainers, for the runner.

What a table is (:mod:`rgr.catalog`: name, schema, presets, planned runs) needs none of this, so a chapter that
reads tables never imports a trainer; only the command line (``python -m rgr sweep``) and a chapter's smoke
fallback (:func:`rgr.chapters.loading.load_experiment`, when a table is missing) import this module.

The peers' tables (chapter *the law beside other capacity results*) train here too, one run at a time, on the
re-implemented models (:func:`rgr.experiments.peers.aot.train_aot`, :func:`rgr.experiments.peers.pal.train_pal`):
:class:`_AoTTrainer`, :class:`_PalTrainer`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from .catalog import get
from .experiments.construction_table import ConstructionSweep
from .experiments.peers.aot import train_aot
from .experiments.peers.pal import train_pal
from .experiments.peers.reimplemented import AOT_PRESETS, AoTConfig, AoTSweep, PalConfig, PalSweep
from .experiments.planner import Experiment
from .experiments.runner import Sweepable
from .experiments.softmax_cells_table import SoftmaxCellsTable
from .experiments.trainer import ExperimentTrainer
from .gpt2.experiment import GPT2Sweep
from .gpt2.training import GPT2Trainer
from .studies.construction_trainer import ConstructionTrainer
from .studies.softmax_cells import SoftmaxCellsTrainer


@dataclass(frozen=True)
class _AoTTrainer(Sweepable):
    """The ``aot`` table as the runner trains it: each run alone."""

    table: AoTSweep

    def train_rows(self, configs: list[AoTConfig], preset: str, device: torch.device) -> list[dict]:
        question = {cfg: q for q, cfg in AOT_PRESETS[preset]}
        return [{**dataclasses.asdict(cfg), **train_aot(cfg), "question": question[cfg]} for cfg in configs]


@dataclass(frozen=True)
class _PalTrainer(Sweepable):
    """The ``pal`` table as the runner trains it: each run alone."""

    table: PalSweep

    def train_rows(self, configs: list[PalConfig], preset: str, device: torch.device) -> list[dict]:
        return [{**dataclasses.asdict(cfg), "x": cfg.x, **train_pal(cfg)} for cfg in configs]


_TRAINERS: tuple[tuple[type, type[Sweepable]], ...] = (
    (Experiment, ExperimentTrainer), (GPT2Sweep, GPT2Trainer), (ConstructionSweep, ConstructionTrainer),
    (AoTSweep, _AoTTrainer), (PalSweep, _PalTrainer), (SoftmaxCellsTable, SoftmaxCellsTrainer))


def trainer(name: str) -> Sweepable:
    """The table data/<name>.csv with its trainer (a ValueError names the tables when ``name`` is none of them)."""
    table = get(name)
    for kind, how in _TRAINERS:
        if isinstance(table, kind):
            return how(table)
    raise ValueError(f"table: no trainer for {type(table).__name__}")
