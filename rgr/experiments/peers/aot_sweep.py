"""Dana et al.'s two contrary conclusions under both head parameterisations, as a table of the one runner
(``python -m rgr sweep aot --preset book``; chapter *the law beside other capacity results*).

Their settings (N = 50, their training schedule; :mod:`rgr.experiments.peers.aot`) at two questions, each under the
parameterisation of their code and that of their paper's formalism, several seeds each:

- *d_model beyond d_h*: d_h = 10, H = 20 (their experiment 3) at d = 10 and d = 15;
- *the split of a fixed H d_h = 40* at d = 10: (H, d_h) = (10, 4) and (4, 10) (at d_h = d the two
  parameterisations coincide, so (4, 10) runs once).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ...store import Column, RowKey, Schema

__all__ = ["AoTConfig", "SCHEMA", "PRESETS", "AOT", "AoTSweep", "run_key"]

_PARAMS: tuple[str, ...] = ("code", "paper")


@dataclass(frozen=True)
class AoTConfig:
    """One run of the re-implemented task and layer."""

    N: int = 50  # vocabulary
    d: int = 10  # embedding width d_model
    d_h: int = 10  # head width
    H: int = 20  # heads
    param: str = "code"  # "code" | "paper" (module doc)
    seed: int = 0  # the map, the init and the batches derive from it
    steps: int = 4096  # their 64 epochs of 64 batches
    batch_size: int = 256
    lr: float = 0.01
    lr_end: float = 5e-4

    def __post_init__(self) -> None:
        for name in ("N", "d", "d_h", "H", "steps", "batch_size"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.N < 2:
            raise ValueError(f"N must be at least 2, got {self.N}")
        if self.param not in _PARAMS:
            raise ValueError(f"param must be one of {_PARAMS}, got {self.param!r}")
        if not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {self.seed!r}")
        if not (0 < self.lr_end <= self.lr):
            raise ValueError(f"lr and lr_end must satisfy 0 < lr_end <= lr, got {self.lr}, {self.lr_end}")

    def key(self) -> str:
        return hashlib.sha256(json.dumps(dataclasses.asdict(self), sort_keys=True).encode()).hexdigest()[:16]


_TYPES = {int: "int", float: "float", str: "str"}


def _schema() -> Schema:
    cols = [Column(f.name, _TYPES[type(f.default)], f"AoTConfig.{f.name} (rgr.experiments.peers.aot_sweep)",
                   low=0 if f.name == "seed" else (1 if f.type == "int" else None))
            for f in dataclasses.fields(AoTConfig)]
    cols += [Column("question", "str", "which contrary conclusion the run is for", choices=("d_beyond_d_h", "split")),
             Column("accuracy", "float", "argmax accuracy over all N^2 pairs after training", low=0, high=1),
             Column("final_loss", "float", "cross-entropy of the last batch", low=0),
             Column("n_params", "int", "trained parameters", low=1),
             Column("stack_size", "int", "runs trained together (one: runs train one by one)", low=1),
             Column("wall_time_s", "float", "wall time of the run", low=0)]
    fields = tuple(f.name for f in dataclasses.fields(AoTConfig))
    key = RowKey.per_row((*fields, "preset"), lambda r: run_key(AoTConfig(**{f: r[f] for f in fields}), r["preset"]))
    return Schema("aot", tuple(cols), key=key)


SCHEMA = _schema()


def _grid(seeds: tuple[int, ...], **fixed: object) -> tuple[tuple[str, AoTConfig], ...]:
    runs = [("d_beyond_d_h", dict(d=d, d_h=10, H=20, param=p)) for d, p in ((10, "code"), (15, "code"), (15, "paper"))]
    runs += [("split", dict(d=10, d_h=4, H=10, param=p)) for p in ("code", "paper")]
    runs += [("split", dict(d=10, d_h=10, H=4, param="code"))]
    return tuple((q, AoTConfig(seed=s, **kw, **fixed)) for q, kw in runs for s in seeds)


PRESETS: Mapping[str, tuple[tuple[str, AoTConfig], ...]] = {
    "smoke": _grid((0,), N=8, steps=20, batch_size=16),
    "book": _grid((0, 1, 2)),
    "paper": _grid((0, 1, 2, 3, 4)),  # their five repetitions
}


def run_key(cfg: AoTConfig, preset: str) -> str:
    return hashlib.sha256(f"{cfg.key()}|{preset}".encode()).hexdigest()[:16]


@dataclass(frozen=True)
class AoTSweep:
    """What the ``aot`` table is (module doc); it trains by :func:`rgr.trainers.trainer`."""

    name: str = "aot"
    spec: str = "Dana et al. re-implemented"
    description: str = "their task and attention-only layer, heads as in their code and as in their paper"
    shardable: bool = False
    book_scope: str = "their settings at two questions, three seeds (the paper preset: their five repetitions)"

    @property
    def presets(self) -> Mapping[str, tuple]:
        return PRESETS

    @property
    def schema(self) -> Schema:
        return SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[AoTConfig]:
        return [cfg for _, cfg in PRESETS[preset]]

    def run_key(self, cfg: AoTConfig, preset: str) -> str:
        return run_key(cfg, preset)


AOT = AoTSweep()
