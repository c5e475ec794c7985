"""How each table of data/ trains, by name (:func:`trainer`): the engine and the other trainers, for the runner.

What a table is (:mod:`rgr.catalog`: name, schema, presets, planned runs) needs none of this, so a chapter that
reads tables never imports a trainer; only the command line (``python -m rgr sweep``) and a chapter's smoke
fallback (:func:`rgr.chapters.loading.load_experiment`, when a table is missing) import this module.
"""

from __future__ import annotations

from .catalog import get
from .experiments.peers.aot_sweep import AoTSweep
from .experiments.peers.pal_sweep import PalSweep
from .experiments.peers.trainers import AoTTrainer, PalTrainer
from .experiments.registry import Experiment
from .experiments.runner import Sweepable
from .experiments.trainer import ExperimentTrainer
from .gpt2.experiment import GPT2Sweep
from .gpt2.trainer import GPT2Trainer
from .studies.construction_table import ConstructionSweep
from .studies.construction_trainer import ConstructionTrainer

__all__ = ["trainer", "trains"]

TRAINERS: tuple[tuple[type, type[Sweepable]], ...] = (
    (Experiment, ExperimentTrainer), (GPT2Sweep, GPT2Trainer), (ConstructionSweep, ConstructionTrainer),
    (AoTSweep, AoTTrainer), (PalSweep, PalTrainer))


def trains(table: object) -> Sweepable:
    """``table`` (one of :data:`rgr.catalog.NAMES`, or a variant of one) with its trainer: the runner's unit."""
    for kind, how in TRAINERS:
        if isinstance(table, kind):
            return how(table)
    raise ValueError(f"table: no trainer for {type(table).__name__}")


def trainer(name: str) -> Sweepable:
    """The table data/<name>.csv with its trainer (a ValueError names the tables when ``name`` is none of them)."""
    return trains(get(name))
