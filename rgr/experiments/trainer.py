"""How an experiment E1-E6 trains (:class:`ExperimentTrainer`): stacks of the engine, written as rows of its table.

What the experiment is (its grids, planned runs and keys) is :class:`rgr.experiments.planner.Experiment`, which a
chapter reads without importing the engine; this module is imported by :mod:`rgr.trainers` alone (the runner's
callers: the command line, a chapter's smoke fallback).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import pandas as pd
import torch

from ..store import load_results
from . import futility, planner, reuse
from .engine.config import RunConfig, stack_groups
from .engine.loop import train
from .planner import SCHEMA, Experiment
from .runner import Sweepable
from .settled import SettledSweep
from .sizing.projection import dry_run_report, model_steps_bound

_FUTILITY_BASIS = ("base", "paper")  # the table and preset the rule was chosen on; a dry run's kept share comes from it

_STACK_RUNS = 40  # most runs a stack holds, so a 16x stack ends within a session (about 1.5 h at the widest cell)


def _unit_groups(configs: Sequence[RunConfig], max_stack: int | None = None) -> list[list[int]]:
    """Stacks within one (cell, budget): the engine's padding rule (:func:`rgr.experiments.engine.config.stack_groups`)
    with at most ``max_stack`` (default :data:`_STACK_RUNS`) runs, families in the configs' order (4x first)."""
    families: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        families.setdefault((c.m, c.d_model, c.max_steps), []).append(i)
    out = []
    for members in families.values():
        out += [[members[j] for j in g] for g in stack_groups([configs[i] for i in members], max_stack or _STACK_RUNS)]
    return out


@dataclass(frozen=True)
class ExperimentTrainer(Sweepable):
    """An :class:`rgr.experiments.planner.Experiment` as the runner trains it."""

    table: Experiment

    def stack_groups(self, configs: Sequence[RunConfig], max_stack: int | None) -> list[list[int]]:
        if isinstance(self.table, SettledSweep):  # whole (cell, h) units
            return _unit_groups(configs, max_stack)
        return stack_groups(configs, max_stack)

    def steps_bound(self, configs: Sequence[RunConfig]) -> int:
        """Upper bound on the model-steps of training ``configs`` (the progress bar's total)."""
        return model_steps_bound(configs)

    def dry_run_report(self, preset: str, device: str | torch.device, workers: int = 1,
                       shard: tuple[int, int] = (0, 1), done: pd.DataFrame | None = None,
                       max_stack: int | None = None, root: Path | None = None) -> list[str]:
        """What ``sweep --dry-run`` prints: runs, an upper bound on model-steps and a projected wall time
        from a short calibration here (:func:`rgr.experiments.sizing.projection.dry_run_report`). ``done``: this
        preset's rows already in the table; then the current round's pending runs are what is projected.
        ``max_stack``: the sweep's ``--max-stack``, so its stacks are projected as they will train. ``root``: the
        folder the sweep writes (``--data``), where it looks for rows to reuse, as the sweep does."""
        runs = self.planned_runs(preset, None, shard)
        grid = self.table.grid(preset)
        rounds = grid.refine_rounds if self.table.refine else 0
        head = (f"{self.name}/{preset}: {len(runs)} runs in the first round, "
                f"at most {model_steps_bound(runs):,} model-steps")
        pending = None
        if done is not None and len(done):
            have = set(done["run_key"])
            pending = [c for c in self.planned_runs(preset, done, shard) if self.run_key(c, preset) not in have]
            head += f"; {len(done)} runs already in the table, {len(pending)} pending in this round"
            rounds = planner.rounds_left(grid, done, pending) if self.table.refine else 0
        copied = {r["run_key"] for r in self.reusable_rows(runs if pending is None else pending, preset, root)}
        if copied:
            head += f"; {len(copied)} of them reused from other tables (not projected)"
            kept = [c for c in (runs if pending is None else pending) if self.run_key(c, preset) not in copied]
            runs, pending = (kept, None) if pending is None else (runs, kept)
        share = None
        if any(c.futility for c in runs):
            basis, basis_preset = _FUTILITY_BASIS
            rows = load_results(SCHEMA.renamed(basis), basis_preset)
            share = futility.kept_share(rows, futility.rule_named(grid.futility))
        if not runs:
            return [head, "nothing to train: every run is reused"]
        return [head, *dry_run_report(runs, device, workers, rounds, pending=pending, dk_max=grid.dk_max,
                                      futility_share=share, history=done, max_stack=max_stack)]

    def reusable_rows(self, todo: Sequence[RunConfig], preset: str, root: Path | None = None) -> list[dict]:
        """Rows for the runs of ``todo`` that already trained with the same config elsewhere (:mod:`.reuse`)."""
        others = [SCHEMA.renamed(n) for n in self.table.reuse_from]
        sources = reuse.source_rows(self.schema, others, preset, root)
        return reuse.reused_rows(todo, [self.run_key(c, preset) for c in todo], self.name, preset, sources)

    def train_rows(self, configs: list[RunConfig], preset: str, device: torch.device,
                   on_steps: Callable[[int], None] | None = None) -> list[dict]:
        rows = []
        for res in train(configs, device=device, progress=False, on_steps=on_steps):
            r = res.row()
            r["config_key"] = r.pop("key")
            rows.append({**r, "experiment": self.name, "reused_from": None})
        return rows
