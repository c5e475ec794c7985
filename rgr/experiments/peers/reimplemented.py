"""What the tables of the two re-implemented peers are, each a table of the one runner (chapter *the law beside other
capacity results*): ``aot`` (:data:`AOT`, Dana et al.'s task and attention-only layer) and ``pal`` (:data:`PAL`,
pal's associative memory): their run configs, schemas, presets and planned runs. How they train: :mod:`.aot` and
:mod:`.pal`, through :func:`rgr.trainers.trainer`.

**aot** (``python -m rgr sweep aot --preset book``): Dana et al.'s two contrary conclusions under both head
parameterisations: their settings (N = 50, their training schedule; :mod:`rgr.experiments.peers.aot`) at two
questions, each under the parameterisation of their code and that of their paper's formalism, several seeds each:

- *d_model beyond d_h*: d_h = 10, H = 20 (their experiment 3) at d = 10 and d = 15;
- *the split of a fixed H d_h = 40* at d = 10: (H, d_h) = (10, 4) and (4, 10) (at d_h = d the two
  parameterisations coincide, so (4, 10) runs once).

**pal** (``python -m rgr sweep pal --preset book``): the capacity of pal's associative memory at several widths d.

Per line (a width d, a seed of the embeddings, a step budget) a bisection over N finds the largest N whose
trained memory (:func:`rgr.experiments.peers.pal.train_pal`) gets at least ``PASS`` of its N inputs right. It starts
from N at the law's x = ``x_easy`` and at x = ``x_hard`` (x = d^2 / (N ln N), :func:`rgr.protocol.law_x`),
extends the bracket by halving or doubling N while an end does not bracket, then halves it in log N, one run per
line and round, until the first failing N is at most ``tol`` above the last passing one (or one more). The
embeddings are nested in N (module :mod:`rgr.experiments.peers.pal`), so under a budget that reaches the loss's
minimiser passing is monotone in N and the bisection is well defined; every run is a row, so the reading can be redone
from the table.

- ``smoke``: d = 4, 6, one seed, 300 steps: seconds, for tests;
- ``book``: d = 8, 16, 32, 64, seeds 0-2, 3,000 steps; and at d = 16, 32 the same seeds with 12,000 steps, to
  check the capacity does not move with a four times larger budget; and at d = 8, 16, 32 the same seeds with
  Adam at lr 0.01 and with their full-batch gradient descent at lr 10 (:data:`_LR_LINES`);
- ``paper``: the book's lines with seeds 0-4.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ...protocol import law_x
from ...store import Column, RowKey, Schema

_PARAMS: tuple[str, ...] = ("code", "paper")


def _check_sizes(cfg: AoTConfig | PalConfig, names: tuple[str, ...]) -> None:
    """What both configs check: ``names`` positive integers, at least two inputs (N), a non-negative seed."""
    for name in names:
        v = getattr(cfg, name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if cfg.N < 2:
        raise ValueError(f"N must be at least 2, got {cfg.N}")
    if not isinstance(cfg.seed, int) or isinstance(cfg.seed, bool) or cfg.seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {cfg.seed!r}")


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
        _check_sizes(self, ("N", "d", "d_h", "H", "steps", "batch_size"))
        if self.param not in _PARAMS:
            raise ValueError(f"param must be one of {_PARAMS}, got {self.param!r}")
        if not (0 < self.lr_end <= self.lr):
            raise ValueError(f"lr and lr_end must satisfy 0 < lr_end <= lr, got {self.lr}, {self.lr_end}")

    def key(self) -> str:
        return hashlib.sha256(json.dumps(dataclasses.asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def run_key(cfg: AoTConfig | PalConfig, preset: str) -> str:
    """The row key of either table: the run's config and the preset it belongs to."""
    return hashlib.sha256(f"{cfg.key()}|{preset}".encode()).hexdigest()[:16]


_TYPES = {int: "int", float: "float", str: "str"}


def _aot_schema() -> Schema:
    cols = [Column(f.name, _TYPES[type(f.default)], f"AoTConfig.{f.name} ({__name__})",
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


AOT_SCHEMA = _aot_schema()


def _grid(seeds: tuple[int, ...], **fixed: object) -> tuple[tuple[str, AoTConfig], ...]:
    runs = [("d_beyond_d_h", dict(d=d, d_h=10, H=20, param=p)) for d, p in ((10, "code"), (15, "code"), (15, "paper"))]
    runs += [("split", dict(d=10, d_h=4, H=10, param=p)) for p in ("code", "paper")]
    runs += [("split", dict(d=10, d_h=10, H=4, param="code"))]
    return tuple((q, AoTConfig(seed=s, **kw, **fixed)) for q, kw in runs for s in seeds)


AOT_PRESETS: Mapping[str, tuple[tuple[str, AoTConfig], ...]] = {
    "smoke": _grid((0,), N=8, steps=20, batch_size=16),
    "book": _grid((0, 1, 2)),
    "paper": _grid((0, 1, 2, 3, 4)),  # their five repetitions
}


@dataclass(frozen=True)
class AoTSweep:
    """What the ``aot`` table is (module doc); it trains by :func:`rgr.trainers.trainer`."""

    name: str = "aot"
    spec: str = "Dana et al. re-implemented"
    description: str = "their task and attention-only layer, heads as in their code and as in their paper"
    shardable: bool = False
    book_scope: str = "their settings at two questions, three seeds (the paper preset: their five repetitions)"

    presets = AOT_PRESETS  # class attributes, not fields (rgr.store.Table)
    schema = AOT_SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[AoTConfig]:
        return [cfg for _, cfg in AOT_PRESETS[preset]]

    run_key = staticmethod(run_key)


AOT = AoTSweep()


# ----------------------------------------------------------------------------- pal

_OPTIMIZERS: tuple[str, ...] = ("adam", "gd")  # gd: torch.optim.SGD without momentum, full batch (their choice)


@dataclass(frozen=True)
class PalConfig:
    """One run: N inputs and outputs in R^d, the seed of the embeddings, the optimiser's budget."""

    N: int = 64  # inputs = outputs
    d: int = 16  # embedding width; W is d x d
    seed: int = 0  # embeddings derive from it (rgr.experiments.peers.pal: nested in N)
    steps: int = 3000  # full-batch Adam steps at most
    lr: float = 0.1  # the optimiser's learning rate
    optimizer: str = "adam"  # "adam" (full-batch Adam) or "gd" (full-batch gradient descent, as in their experiments)

    def __post_init__(self) -> None:
        _check_sizes(self, ("N", "d", "steps"))
        if not (isinstance(self.lr, float) and self.lr > 0):
            raise ValueError(f"lr must be a positive float, got {self.lr!r}")
        if self.optimizer not in _OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {_OPTIMIZERS}, got {self.optimizer!r}")

    @property
    def x(self) -> float:
        return law_x(1, self.d, self.d, self.N)  # h = 1, d_k = d_model = d, m = N

    def key(self) -> str:
        """Hash of the config; Adam, the first optimiser, is left out, so the rows written before ``optimizer``
        existed keep their keys."""
        fields = dataclasses.asdict(self)
        if fields["optimizer"] == "adam":
            del fields["optimizer"]
        return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]


PASS = 0.99  # accuracy over the N inputs at which N counts as stored


def _pal_schema() -> Schema:
    cols = [Column(f.name, _TYPES[type(f.default)], f"PalConfig.{f.name} ({__name__})",
                   low=0 if f.name == "seed" else (2 if f.name == "N" else 1 if f.type == "int" else None))
            for f in dataclasses.fields(PalConfig) if f.name != "optimizer"]
    cols += [Column("optimizer", "str", f"PalConfig.optimizer ({__name__}): adam or gd "
                    "(empty: adam, the rows written before the column)", nullable=True, since="2026-11-27",
                    choices=_OPTIMIZERS)]
    cols += [Column("x", "float", "the law's variable d^2 / (N ln N) (h = 1, d_k = d_model = d, m = N)", low=0),
             Column("accuracy", "float", "argmax accuracy over the N inputs after training", low=0, high=1),
             Column("final_loss", "float", "cross-entropy over the N inputs after training", low=0),
             Column("steps_run", "int", "Adam steps taken (fewer than steps: every input was right)", low=0),
             Column("n_params", "int", "trained parameters (d^2)", low=1),
             Column("stack_size", "int", "runs trained together (one: runs train one by one)", low=1),
             Column("wall_time_s", "float", "wall time of the run", low=0)]
    fields = tuple(f.name for f in dataclasses.fields(PalConfig))
    key = RowKey.per_row((*fields, "preset"), lambda r: run_key(
        PalConfig(**{f: r[f] for f in fields if f != "optimizer"}, optimizer=r["optimizer"] or "adam"), r["preset"]))
    return Schema("pal", tuple(cols), key=key)


PAL_SCHEMA = _pal_schema()


@dataclass(frozen=True)
class _PalLine:
    """One bisection: width d, seed of the embeddings, step budget and learning rate."""

    d: int
    seed: int
    steps: int = 3000
    lr: float = 0.1
    optimizer: str = "adam"

    def config(self, N: int) -> PalConfig:
        return PalConfig(N=N, d=self.d, seed=self.seed, steps=self.steps, lr=self.lr, optimizer=self.optimizer)


@dataclass(frozen=True)
class _PalPreset:
    """The lines of a preset and the bisection's start and stop (module doc)."""

    lines: tuple[_PalLine, ...]
    x_easy: float = 4.0
    x_hard: float = 0.7
    tol: float = 0.03

    def __post_init__(self) -> None:
        if not (self.x_easy > self.x_hard > 0):
            raise ValueError(f"x_easy and x_hard must satisfy x_easy > x_hard > 0, got {self.x_easy}, {self.x_hard}")
        if not self.tol > 0:
            raise ValueError(f"tol must be positive, got {self.tol}")


def _n_at_x(d: int, x: float) -> int:
    """The integer N >= 2 whose x (:attr:`PalConfig.x`) is nearest x from above (N ln N <= d^2 / x)."""
    target, N = d * d / x, 2
    while (N + 1) * math.log(N + 1) <= target:
        N += 1
    return N


def _next_n(tried: Mapping[int, float], start: tuple[int, int], tol: float, n_max: int) -> int | None:
    """The next N of one bisection from ``tried`` (N -> accuracy); None when the bracket is closed, or when every
    N passed up to ``n_max`` (module doc)."""
    missing = [n for n in start if n not in tried]
    if missing:
        return missing[0]
    fails = [n for n, a in tried.items() if a < PASS]
    if not fails:
        return 2 * max(tried) if 2 * max(tried) <= n_max else None
    hi = min(fails)
    below = [n for n, a in tried.items() if a >= PASS and n < hi]
    if not below:
        return max(2, hi // 2) if hi > 2 else None
    lo = max(below)
    if hi - lo <= 1 or hi <= lo * (1 + tol):
        return None
    mid = round(math.sqrt(lo * hi))
    return min(max(mid, lo + 1), hi - 1)


# the learning-rate check: at d = 8, 16, 32 the same seeds with Adam at a tenth of the main rate, and with their
# own optimiser, full-batch gradient descent at lr 10 (their exp_large_memory.ipynb uses 3, 10 and 20)
_LR_LINES: tuple[_PalLine, ...] = tuple(_PalLine(d, s, lr=lr, optimizer=opt)
                                       for opt, lr in (("adam", 0.01), ("gd", 10.0))
                                       for d in (8, 16, 32) for s in (0, 1, 2))
_PAL_PRESETS: Mapping[str, _PalPreset] = {
    "smoke": _PalPreset(tuple(_PalLine(d, 0, steps=300) for d in (4, 6)), tol=0.1),
    "book": _PalPreset(tuple(_PalLine(d, s) for d in (8, 16, 32, 64) for s in (0, 1, 2))
                      + tuple(_PalLine(d, s, steps=12000) for d in (16, 32) for s in (0, 1, 2))
                      + _LR_LINES),
    "paper": _PalPreset(tuple(_PalLine(d, s) for d in (8, 16, 32, 64) for s in range(5))
                       + tuple(_PalLine(d, s, steps=12000) for d in (16, 32) for s in range(5))),
}


def _tried(line: _PalLine, done: pd.DataFrame | None) -> dict[int, float]:
    if done is None or not len(done):
        return {}
    opt = done.optimizer.fillna("adam") if "optimizer" in done else pd.Series("adam", index=done.index)
    sel = done[(done.d == line.d) & (done.seed == line.seed) & (done.steps == line.steps) & (done.lr == line.lr)
               & (opt == line.optimizer)]
    return {int(n): float(a) for n, a in zip(sel.N, sel.accuracy)}


@dataclass(frozen=True)
class PalSweep:
    """What the ``pal`` table is (module doc); it trains by :func:`rgr.trainers.trainer`."""

    name: str = "pal"
    spec: str = "pal's associative memory re-implemented"
    description: str = "frozen random embeddings, one trained d x d matrix: the largest N stored, by bisection"
    shardable: bool = False
    book_scope: str = "d = 8 to 64, three seeds, 3,000 Adam steps; d = 16, 32 also at 12,000 (paper: five seeds)"

    presets = _PAL_PRESETS  # class attributes, not fields (rgr.store.Table)
    schema = PAL_SCHEMA

    def planned_runs(self, preset: str, done: pd.DataFrame | None = None,
                     shard: tuple[int, int] = (0, 1)) -> list[PalConfig]:
        """Every run of the preset's bisections so far and each open line's next one (called after each round)."""
        p, out = _PAL_PRESETS[preset], []
        for line in p.lines:
            tried = _tried(line, done)
            out += [line.config(n) for n in sorted(tried)]
            start = (_n_at_x(line.d, p.x_easy), _n_at_x(line.d, p.x_hard))
            n = _next_n(tried, start, p.tol, _n_at_x(line.d, p.x_hard / 16))
            if n is not None:
                out.append(line.config(n))
        return out

    run_key = staticmethod(run_key)


PAL = PalSweep()
