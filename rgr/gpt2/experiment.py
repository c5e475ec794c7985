"""E7 as an experiment of the one runner (chapter *GPT-2 block*).

:data:`GPT2` is a :class:`rgr.experiments.runner.Sweepable`:
``python -m rgr sweep gpt2 --preset book`` (local or ``--executor dask``) trains
:func:`rgr.gpt2.training.experiment_grid`'s runs stack by stack (seeds of one
(D_K, h) train as one program) and writes each stack's rows atomically to
``data/gpt2.csv``, keyed by a hash of the run's config and preset, so an
interrupted sweep resumes where it stopped. Every row records
``embedding_source``: a stand-in table is never mistaken for GPT-2.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd
import torch

from ..experiments.tables import load_results, table_path
from ..store import Column, RowKey, Schema, TableError, load_table, provenance
from .block import PRESETS, Config, Preset
from .items import items_available
from .table import STAND_IN_SOURCE
from .training import experiment_grid, train_runs

__all__ = ["SCHEMA", "GPT2", "GPT2Sweep", "run_key", "load_gpt2_results", "preset_rows", "embeddings_banner",
           "OPEN_CHOICES"]

_TYPES = {int: "int", float: "float", str: "str", bool: "bool"}
_POSITIVE = ("m", "ell", "d_model", "D_K", "h", "d_ff", "steps", "batch_size", "eval_interval", "n_val", "n_test")


def _config_column(f: dataclasses.Field) -> Column:
    kind = _TYPES[type(f.default)]
    low = 1 if f.name in _POSITIVE else (0 if f.name == "seed" else None)
    return Column(f.name, kind, f"Config.{f.name} (rgr.gpt2.block)", low=low)


def _schema() -> Schema:
    acc = dict(low=0, high=1)
    cols = [_config_column(f) for f in dataclasses.fields(Config)]
    cols += [
        Column("d_k", "int", "per-head key width D_K / h", low=1),
        Column("test_acc", "float", "test accuracy of the best-validation checkpoint", **acc),
        Column("best_val_acc", "float", "best validation accuracy", **acc),
        Column("best_step", "int", "step of the best validation check", low=0),
        Column("steps_done", "int", "optimisation steps taken", low=0),
        Column("final_train_loss", "float", "mean training loss over the last 100 steps", low=0),
        Column("embedding_source", "str",
               "where the frozen table came from; 'stand-in (not GPT-2)' when it is not GPT-2"),
        Column("precision", "str", "float32, or bf16 autocast on a GPU"),
        Column("stack_size", "int", "runs trained together in the stack that held this run", low=1),
        Column("wall_time_s", "float", "wall time of the stack divided by its size", low=0),
    ]
    fields = tuple(f.name for f in dataclasses.fields(Config))
    key = RowKey.per_row((*fields, "preset"), lambda r: run_key(Config(**{f: r[f] for f in fields}), r["preset"]))
    return Schema("gpt2", tuple(cols), key=key)


SCHEMA = _schema()


def run_key(cfg: Config, preset: str) -> str:
    text = json.dumps({**dataclasses.asdict(cfg), "preset": preset}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class GPT2Sweep:
    """E7 for :func:`rgr.experiments.runner.run_sweep`; ``embeddings``: "auto", "gpt2" or "stand-in"."""

    embeddings: str = "auto"
    name: str = "gpt2"
    spec: str = "E7"
    description: str = "one pre-LN Transformer block on frozen GPT-2 embeddings"
    shardable: bool = True  # whole stacks (a (D_K, h) shape, all its seeds) dealt round-robin: see planned_runs
    honours_deadline: bool = True  # a stack projects itself after its first steps (rgr.gpt2.training)
    book_scope: str = "a smaller task than the paper's, with fewer items, pairs, steps and seeds"

    @property
    def presets(self) -> Mapping[str, Preset]:
        return PRESETS

    @property
    def schema(self) -> Schema:
        return SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[Config]:
        """The preset's grid; shard i of n holds the i-th, (i + n)-th, ... of its (D_K, h) shapes in the grid's
        order (D_K, then h: balanced, where a hash can leave a shard empty), each with every seed."""
        grid = experiment_grid(preset, embeddings=self.embeddings)
        i, n = shard
        shapes = list(dict.fromkeys(c.shape_key() for c in grid))
        mine = {k for j, k in enumerate(shapes) if j % n == i}
        return [c for c in grid if c.shape_key() in mine]

    def run_key(self, cfg: Config, preset: str) -> str:
        return run_key(cfg, preset)

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

    def stack_groups(self, configs: Sequence[Config], max_stack: int | None) -> list[list[int]]:
        groups: dict[Config, list[int]] = {}
        for i, c in enumerate(configs):
            groups.setdefault(c.shape_key(), []).append(i)
        size = max_stack or max(1, len(configs))
        return [g[j : j + size] for g in groups.values() for j in range(0, len(g), size)]

    def train_stack(self, configs: Sequence[Config], preset: str, device: torch.device,
                    deadline: float | None = None) -> list[dict]:
        """One stack's rows; bf16 autocast on CUDA, fp32 on a CPU (the ``precision`` column says which)."""
        t0 = time.perf_counter()
        results = train_runs(list(configs), device=device, max_stack=len(configs), deadline=deadline)
        wall = time.perf_counter() - t0
        prov = provenance(preset, device)
        rows = []
        for res, cfg in zip(results, configs):
            row = {c.name: res.get(c.name) for c in SCHEMA.columns}
            row.update(dataclasses.asdict(cfg), d_k=cfg.d_k, stack_size=len(configs), wall_time_s=wall / len(configs),
                       run_key=run_key(cfg, preset), **prov)
            rows.append(row)
        return rows


GPT2 = GPT2Sweep()


def load_gpt2_results(preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """The E7 table (strictly validated), optionally one preset's rows."""
    return load_results(SCHEMA, preset, root)


def preset_rows(preset: str, root: Path | None = None) -> pd.DataFrame:
    """One preset's rows of the E7 table, none where data/ has no table (the chapter then runs on smoke data); a
    table that is there but unreadable is an error, never read as empty (chapter *GPT-2 block*)."""
    try:
        return load_gpt2_results(preset, root)
    except TableError:
        if table_path(GPT2.name, root=root).is_file():
            raise
        return pd.DataFrame(columns=[c.name for c in SCHEMA.all_columns])


# the Config fields the protocol leaves open, as the chapter reports them
OPEN_CHOICES = ("m", "ell", "steps", "batch_size", "lr", "beta2", "weight_decay", "causal", "final_ln", "d_ff",
                "init_std", "eval_interval", "n_val", "n_test", "precision")


def embeddings_banner(root: Path | None = None) -> str:
    """Markdown for the top of the chapter: which embeddings the committed rows used, loudly when
    any are the stand-in, and how to run with GPT-2's own."""
    how = ("To use GPT-2's embeddings: on a machine with internet run `python -m rgr gpt2 build --hub` once (or point "
           "`RGR_GPT2_DIR` at a local copy of the `openai-community/gpt2` checkpoint and tokenizer), then "
           "`python -m rgr sweep gpt2 --preset book` (CPU) or `--preset paper --device cuda` (GPU).")
    path = table_path("gpt2", root=root)
    if not path.is_file():
        return f"> **No E7 table yet.** {how}"
    rows = load_table(path, SCHEMA)  # present but unreadable is an error, as everywhere else
    stand_in = rows[rows["embedding_source"] == STAND_IN_SOURCE]
    real_here = items_available()
    if len(stand_in):
        presets = ", ".join(f"`{p}`" for p in sorted(stand_in["preset"].unique()))
        return (f"> **These are not GPT-2's embeddings.** {len(stand_in)} of the {len(rows)} rows in "
                f"`data/{path.name}` (preset {presets}) were trained on a seeded *stand-in* table with GPT-2-like "
                f"geometry, because neither the model hub nor a local GPT-2 checkpoint was reachable where they ran"
                + ("" if real_here else " (nor is one on this machine)")
                + f". Every figure below says so in its title. {how}")
    return (f"> **Embeddings:** every row in `data/{path.name}` used "
            f"{', '.join(sorted(rows['embedding_source'].unique()))}.")
