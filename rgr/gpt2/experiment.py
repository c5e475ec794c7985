"""What E7's table is (chapter *GPT-2 block*): its grid, schema, keys, and what a preset costs.

:data:`GPT2` is a :class:`rgr.store.Table`; trained by :class:`rgr.gpt2.training.GPT2Trainer`,
``python -m rgr sweep gpt2 --preset book`` (local or ``--executor dask``) trains
:func:`experiment_grid`'s runs stack by stack (seeds of one
(D_K, h) train as one program) and writes each stack's rows atomically to
``data/gpt2.csv``, keyed by a hash of the run's config and preset, so an
interrupted sweep resumes where it stopped. Every row records
``embedding_source``: a stand-in table is never mistaken for GPT-2.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..protocol import gpu_hours
from ..store import Column, RowKey, Schema, load_table, table_path
from .block import EMBEDDINGS, PRESETS, Config, Preset, run_flops
from .items import items_available
from .table import STAND_IN_SOURCE

__all__ = ["SCHEMA", "GPT2", "GPT2Sweep", "run_key", "experiment_grid", "PresetCost", "preset_cost",
           "embeddings_banner", "OPEN_CHOICES", "LeaseBench", "latest_lease_bench"]

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


def experiment_grid(preset: str = "book", embeddings: str = "auto", **overrides) -> list[Config]:
    """The E7 grid of a preset: one Config per (variant, D_K, h, seed), seeds first_seed, first_seed + 1, ...

    ``embeddings="auto"`` resolves to the preset's own choice when it has one (the compressive presets' width is
    not GPT-2's: "stand-in"), else to "gpt2" when a real table is available without network
    (:func:`rgr.gpt2.items.items_available`) and to "stand-in" otherwise; the choice is written into every
    config. ``overrides`` replace Config fields other than the grid's own (``D_K``, ``h``, ``seed``), e.g.
    ``ell=16`` or ``lr=3e-4``.
    """
    if embeddings not in ("auto", *EMBEDDINGS):
        raise ValueError(f"embeddings must be 'auto' or one of {EMBEDDINGS}, got {embeddings!r}")
    allowed = set(Config.__dataclass_fields__) - {"D_K", "h", "seed", "embeddings"}
    if set(overrides) - allowed:
        raise ValueError(f"overrides must be Config fields in {sorted(allowed)}, "
                         f"got {sorted(set(overrides) - allowed)}")
    p = PRESETS[preset]
    if embeddings == "auto":
        embeddings = p.embeddings or ("gpt2" if items_available() else "stand-in")
    base = dict(m=p.m, ell=p.ell, steps=p.steps, batch_size=p.batch_size, eval_interval=p.eval_interval, n_val=p.n_val,
                n_test=p.n_test, lr=p.lr, d_model=p.d_model, embeddings=embeddings)
    base.update(overrides)
    seeds = range(p.first_seed, p.first_seed + p.seeds)
    return [Config(D_K=dk, h=h, seed=s, **{**base, **dict(v)}) for v in p.variants for dk in p.D_K for h in p.h
            for s in seeds]


@dataclass(frozen=True)
class PresetCost:
    """What a preset costs by its matmul FLOP count (:func:`rgr.gpt2.block.run_flops`): an estimate, not a measurement.
    Shown in the chapters *GPT-2 block* and *Does it replicate?* for the paper preset, which this project never ran."""

    runs: int
    steps: int  # per run
    m: int
    flops: float  # every run to its last step, with its checks and test

    def hours(self, share: float) -> float:
        """Hours of one H100 at ``share`` of its float32 peak (:func:`rgr.protocol.gpu_hours`)."""
        return gpu_hours(self.flops, share)


def preset_cost(preset: str) -> PresetCost:
    """The cost of a whole preset; the table's embeddings do not change it."""
    grid = experiment_grid(preset, "stand-in")
    p = PRESETS[preset]
    return PresetCost(runs=len(grid), steps=p.steps, m=p.m, flops=float(sum(run_flops(c) for c in grid)))


@dataclass(frozen=True)
class GPT2Sweep:
    """What E7's table is (:class:`rgr.store.Table`); ``embeddings``: "auto", "gpt2" or "stand-in"."""

    embeddings: str = "auto"
    name: str = "gpt2"
    spec: str = "E7"
    description: str = "one pre-LN Transformer block on frozen GPT-2 embeddings"
    shardable: bool = True  # whole stacks (a (D_K, h) shape, all its seeds) dealt round-robin: see planned_runs
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


GPT2 = GPT2Sweep()


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


@dataclass(frozen=True)
class LeaseBench:
    """What a GPU lease's log says of the bench (``scripts/gpu_gpt2.sh`` writes it to data/leases/): the device, the
    preset and the projected minutes of one process for the whole preset."""

    path: str
    device: str
    preset: str
    minutes: float


def _read_lease_bench(text: str, path: str = "") -> LeaseBench | None:
    """The bench's projection from a lease log's text (None when the log has none)."""
    head = re.search(r"^E7 (\w+) preset on (.+?) \(", text, flags=re.M)
    proj = re.search(r"^projection: the whole (\w+) preset .*? ([0-9][0-9,.]*) minutes of one process", text,
                     flags=re.M)
    if head is None or proj is None:
        return None
    return LeaseBench(path, head.group(2), proj.group(1), float(proj.group(2).replace(",", "")))


def latest_lease_bench(root) -> LeaseBench | None:
    """The newest lease log under ``root``/leases (by name: they start with their date) that holds a bench."""
    for p in sorted(Path(root, "leases").glob("*.log"), reverse=True):
        found = _read_lease_bench(p.read_text(errors="replace"), f"{Path(root).name}/leases/{p.name}")
        if found is not None:
            return found
    return None
