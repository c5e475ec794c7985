"""The E7 grid through the same resumable store as every other sweep (chapter *GPT-2 block*).

``python -m rgr sweep gpt2 --preset book`` trains :func:`rgr.gpt2.block.experiment_grid`'s
runs stack by stack (seeds of one (D_K, h) train as one program) and writes each
stack's rows atomically to ``data/gpt2.csv``, keyed by a hash of the run's config
and preset, so an interrupted sweep resumes where it stopped. Every row records
``embedding_source``: a stand-in table is never mistaken for GPT-2.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from pathlib import Path
from typing import Callable

import pandas as pd
import torch
from tqdm import tqdm

from .items import STAND_IN_SOURCE, items_available
from ..paths import data_dir
from ..store import Column, Schema, load_table, provenance, write_rows
from .block import Config, experiment_grid, train_runs

__all__ = ["SCHEMA", "run_key", "table_path", "load_gpt2_results", "run_gpt2_sweep", "embeddings_banner", "OPEN_CHOICES"]

_TYPES = {int: "int", float: "float", str: "str", bool: "bool"}


def _schema() -> Schema:
    cols = [Column(f.name, _TYPES[type(f.default)], f"Config.{f.name} (rgr.gpt2.block)") for f in dataclasses.fields(Config)]
    cols += [
        Column("d_k", "int", "per-head key width D_K / h"),
        Column("test_acc", "float", "test accuracy of the best-validation checkpoint"),
        Column("best_val_acc", "float", "best validation accuracy"),
        Column("best_step", "int", "step of the best validation check"),
        Column("steps_done", "int", "optimisation steps taken"),
        Column("final_train_loss", "float", "mean training loss over the last 100 steps"),
        Column("embedding_source", "str", "where the frozen table came from; 'stand-in (not GPT-2)' when it is not GPT-2"),
        Column("precision", "str", "float32, or bf16 autocast on a GPU"),
        Column("stack_size", "int", "runs trained together in the stack that held this run"),
        Column("wall_time_s", "float", "wall time of the stack divided by its size"),
    ]
    return Schema("gpt2", tuple(cols))


SCHEMA = _schema()


def run_key(cfg: Config, preset: str) -> str:
    text = json.dumps({**dataclasses.asdict(cfg), "preset": preset}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def table_path(root: Path | None = None) -> Path:
    return (root or data_dir()) / "gpt2.csv"


def load_gpt2_results(preset: str | None = None, root: Path | None = None) -> pd.DataFrame:
    """The E7 table (strictly validated), optionally one preset's rows."""
    df = load_table(table_path(root), SCHEMA)
    return df if preset is None else df[df["preset"] == preset].reset_index(drop=True)


def _row(res: dict, cfg: Config, preset: str, prov: dict, wall: float, size: int) -> dict:
    row = {c.name: res.get(c.name) for c in SCHEMA.columns}
    row.update(dataclasses.asdict(cfg), d_k=cfg.d_k, stack_size=size, wall_time_s=wall / size, run_key=run_key(cfg, preset), **prov)
    return row


def run_gpt2_sweep(
    preset: str,
    device: str | torch.device = "cpu",
    root: Path | None = None,
    progress: bool = True,
    embeddings: str = "auto",
    log: Callable[[str], None] = print,
) -> pd.DataFrame:
    """Train every unfinished run of the E7 preset; rows go to data/gpt2.csv stack by stack."""
    configs = experiment_grid(preset, embeddings=embeddings)
    out = table_path(root)
    have = set(load_table(out, SCHEMA)["run_key"]) if out.is_file() else set()
    todo = [c for c in configs if run_key(c, preset) not in have]
    stacks: dict[Config, list[Config]] = {}
    for c in todo:
        stacks.setdefault(c.shape_key(), []).append(c)
    log(f"gpt2/{preset}: {len(todo)} of {len(configs)} runs to train ({configs[0].embeddings} embeddings) on {device}")
    bar = tqdm(total=len(todo), desc=f"gpt2/{preset}", unit="run", disable=not progress)
    try:
        for group in stacks.values():
            t0 = time.perf_counter()
            results = train_runs(group, device=device)
            wall = time.perf_counter() - t0
            prov = provenance(preset, device)
            write_rows(out, SCHEMA, [_row(r, c, preset, prov, wall, len(group)) for r, c in zip(results, group)])
            bar.update(len(group))
    finally:
        bar.close()
    return load_table(out, SCHEMA) if out.is_file() else pd.DataFrame()


# the Config fields the protocol leaves open, as the chapter reports them
OPEN_CHOICES = ("m", "ell", "steps", "batch_size", "lr", "beta2", "weight_decay", "causal", "final_ln", "d_ff",
                "init_std", "eval_interval", "n_val", "n_test", "precision")


def embeddings_banner(root: Path | None = None) -> str:
    """Markdown for the top of the chapter: which embeddings the committed rows used, loudly when
    any are the stand-in, and how to run with GPT-2's own."""
    how = ("To use GPT-2's embeddings: on a machine with internet run `python -m rgr gpt2 build --hub` once (or point "
           "`RGR_GPT2_DIR` at a local copy of the `openai-community/gpt2` checkpoint and tokenizer), then "
           "`python -m rgr sweep gpt2 --preset book` (CPU) or `--preset paper --device cuda` (GPU).")
    path = table_path(root)
    if not path.is_file():
        return f"> **No E7 table yet.** {how}"
    rows = load_table(path, SCHEMA)  # present but unreadable is an error, as everywhere else
    stand_in = rows[rows["embedding_source"] == STAND_IN_SOURCE]
    real_here = items_available()
    if len(stand_in):
        presets = ", ".join(f"`{p}`" for p in sorted(stand_in["preset"].unique()))
        return (f"> **These are not GPT-2's embeddings.** {len(stand_in)} of the {len(rows)} rows in `data/{path.name}` "
                f"(preset {presets}) were trained on a seeded *stand-in* table with GPT-2-like geometry, because neither "
                f"the model hub nor a local GPT-2 checkpoint was reachable where they ran"
                + ("" if real_here else " (nor is one on this machine)")
                + f". Every figure below says so in its title. {how}")
    return f"> **Embeddings:** every row in `data/{path.name}` used {', '.join(sorted(rows['embedding_source'].unique()))}."
