"""A run of the paper's protocol, fully described, and what it produced (chapter *permutation sweeps*).

:class:`RunConfig` names one training run of protocol E1/E4/E5/E6 (its fields
and :meth:`RunConfig.key` key the committed tables: do not change them);
:class:`RunResult` is what the engine (:func:`rgr.experiments.engine.train.train`) returns.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import torch

from ...protocol import MODEL_KINDS
from ..futility import rule_named

__all__ = ["GRAPH_KINDS", "DTYPES", "RunConfig", "RunResult", "step_cutoff", "check_int", "config_key", "config_keys"]

GRAPH_KINDS: tuple[str, ...] = ("permutation", "regular")
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}
CONFIG_VERSION = 1  # bump when a field's meaning changes, so old keys stop matching

# Step cutoffs of the paper's Table 2 (protocol E1); (1024, 32) is open, we use 80,000.
_CUTOFFS: dict[tuple[int, int], int] = {
    (256, 16): 30_000,
    (512, 16): 80_000,
    (1024, 32): 80_000,
    (1024, 128): 80_000,
    (2048, 256): 80_000,
    (4096, 512): 200_000,
}


def step_cutoff(m: int, d_model: int) -> int:
    """The per-run step cutoff of protocol E1 (Table 2): 20,000 unless listed."""
    return _CUTOFFS.get((m, d_model), 20_000)


# ---------------------------------------------------------------------------------------
# configuration


def config_key(fields: Mapping[str, object]) -> str:
    """:meth:`RunConfig.key` of the config whose fields hold these values (``futility`` None or absent left out)."""
    fields = {k: v for k, v in fields.items() if not (k == "futility" and v is None)}
    text = json.dumps({"version": CONFIG_VERSION, **fields}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def config_keys(columns: Mapping[str, Sequence[object]]) -> list[str]:
    """:func:`config_key` of each row of ``columns`` (field name -> one value per row; no ``futility``), for a
    table's thousands of rows (:func:`rgr.experiments.planner.row_keys`): the same JSON text, assembled from each
    column's distinct values, each written once by ``json.dumps``."""
    pieces = [_json_items(name, [CONFIG_VERSION] * len(next(iter(columns.values()), [])) if name == "version"
                          else columns[name]) for name in sorted([*columns, "version"])]
    return [hashlib.sha256(("{" + ", ".join(row) + "}").encode()).hexdigest()[:16] for row in zip(*pieces)]


def _json_items(name: str, values: Sequence[object]) -> list[str]:
    """``"name": value`` as json.dumps writes it inside an object, for each value (cached per distinct value)."""
    seen: dict[tuple, str] = {}
    out = []
    for v in values:
        k = (float, str(v)) if type(v) is float and v == 0 else (type(v), v)  # -0.0 == 0.0, written apart
        if k not in seen:
            seen[k] = f"{json.dumps(name)}: {json.dumps(v)}"
        out.append(seen[k])
    return out


def check_int(name: str, v: object, low: int, high: int | None = None) -> None:
    """A ValueError naming ``name`` unless ``v`` is an integer in [low, high] (no upper bound: ``high`` None)."""
    if not isinstance(v, int) or isinstance(v, bool):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    if v < low or (high is not None and v > high):
        raise ValueError(f"{name} must be {f'>= {low}' if high is None else f'in [{low}, {high}]'}, got {v}")


def _float(name: str, v: object, low: float, high: float, low_open: bool = False, high_open: bool = False) -> None:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v!r}")
    if v < low or v > high or (low_open and v == low) or (high_open and v == high):
        lo, hi = "(" if low_open else "[", ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lo}{low}, {high}{hi}, got {v}")


def _choice(name: str, v: object, choices: Sequence[str]) -> None:
    if v not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}, got {v!r}")


@dataclass(frozen=True)
class RunConfig:
    """One training run, fully described (protocol E1/E4/E5/E6; chapter *permutation sweeps*).

    ``init_std=None`` means d_model^-1/2 and ``d_msg=None`` means d_model; both
    are resolved at construction, so equal runs have equal configs and keys.
    """

    m: int  # items
    d_model: int  # embedding width
    h: int  # heads
    d_k: int  # per-head key/query width; D_K = h * d_k
    seed: int = 0  # graph, embeddings, init and contexts all derive from it
    model: str = "max"  # one of MODEL_KINDS
    graph: str = "permutation"  # "permutation" (E1) or "regular" (E4)
    r: int = 1  # out-degree of a regular graph (1 for permutations)
    ell: int = 16  # context length
    rho: float = 0.5  # target-in-context rate of the sampler
    max_steps: int = 20_000  # step cutoff (see step_cutoff)
    alpha: float = 10.0  # logit scale of the loss
    lr: float = 1e-3  # AdamW learning rate (weight decay 0)
    check_every: int = 500  # steps between validation checks
    patience: int = 5  # consecutive checks that stop a run
    f1_stop: float = 0.995  # a check counts when validation micro-F1 > f1_stop
    mse_tol: float = 1e-3  # "value": a check counts when val MSE > best * (1 - mse_tol)
    n_val: int = 500  # fixed validation contexts (stream "val")
    n_test: int = 2000  # fixed test contexts (stream "test")
    init_std: float | None = None  # std of W_Q, W_K entries; None -> d_model^-1/2
    d_msg: int | None = None  # width of the frozen value map ("value"); None -> d_model
    dtype: str = "float32"  # "float32" or "float64"
    futility: str | None = None  # futility-stopping rule (rgr.experiments.futility.RULES); None: off

    def __post_init__(self) -> None:
        check_int("m", self.m, 2)
        check_int("d_model", self.d_model, 1)
        check_int("h", self.h, 1)
        check_int("d_k", self.d_k, 1)
        check_int("seed", self.seed, 0)
        _choice("model", self.model, MODEL_KINDS)
        _choice("graph", self.graph, GRAPH_KINDS)
        if self.graph == "permutation":
            check_int("r", self.r, 1, 1)
        else:
            check_int("r", self.r, 1, self.m - 1)
        if self.model == "value" and self.graph != "permutation":
            raise ValueError(f"graph must be 'permutation' for model 'value' (one target per source), "
                             f"got {self.graph!r}")
        check_int("ell", self.ell, 2, self.m)
        _float("rho", self.rho, 0.0, 1.0)
        check_int("max_steps", self.max_steps, 1)
        _float("alpha", self.alpha, 0.0, math.inf, low_open=True)
        _float("lr", self.lr, 0.0, math.inf, low_open=True)
        check_int("check_every", self.check_every, 1)
        check_int("patience", self.patience, 1)
        _float("f1_stop", self.f1_stop, 0.0, 1.0)
        _float("mse_tol", self.mse_tol, 0.0, 1.0, high_open=True)
        check_int("n_val", self.n_val, 1)
        check_int("n_test", self.n_test, 1)
        if self.init_std is None:
            object.__setattr__(self, "init_std", self.d_model**-0.5)
        _float("init_std", self.init_std, 0.0, math.inf, low_open=True)
        object.__setattr__(self, "init_std", float(self.init_std))
        if self.d_msg is None:
            object.__setattr__(self, "d_msg", self.d_model)
        check_int("d_msg", self.d_msg, 1)
        _choice("dtype", self.dtype, tuple(DTYPES))
        if self.futility is not None:
            rule_named(self.futility)
            if self.model == "value":
                raise ValueError("futility must be None for model 'value' (its rule reads a validation F1 curve)")

    @property
    def D_K(self) -> int:
        """Total key budget D_K = h * d_k."""
        return self.h * self.d_k

    @property
    def metric(self) -> str:
        """The validation/test metric: "mse" for the value channel, else "f1"."""
        return "mse" if self.model == "value" else "f1"

    @property
    def adaptive_posweight(self) -> bool:
        """E4's batch-adaptive positive weight (#neg/#pos) for regular graphs; E1's ell - 1 otherwise."""
        return self.graph == "regular"

    def replace(self, **changes: object) -> "RunConfig":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def key(self) -> str:
        """A stable 16-hex-digit hash of every field (for resumable sweeps).

        ``futility`` enters the hash only when set, so every run key made before the field existed still matches.
        """
        return config_key(self.to_dict())

    def stack_key(self) -> tuple:
        """Runs with equal stack keys can train as one program.

        h, d_k (so D_K), m, seed, graph, r, alpha and the stopping rule may
        differ within a stack (heads are padded and masked: see
        :mod:`rgr.experiments.engine.stack`); what a stack step shares may not.
        """
        return (self.d_model, self.model, self.d_msg, self.ell, self.rho, self.lr,
                self.check_every, self.n_val, self.n_test, self.dtype)


@dataclass(frozen=True)
class RunResult:
    """What one run produced. ``weights`` (per-head W_Q, W_K (h, d_model, d_k), tau, W_V) only on request."""

    config: RunConfig
    steps: int  # optimisation steps taken
    stop_reason: str  # "converged", "cutoff" or "futile"
    val_curve: tuple[tuple[int, float], ...]  # (step, validation metric) at every check
    test_f1: float | None = None
    test_precision: float | None = None
    test_recall: float | None = None
    test_mse: float | None = None
    tau: float | None = None  # the learned threshold (None for "value")
    weights: dict[str, torch.Tensor] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> str:
        return self.config.key()

    def row(self) -> dict:
        """A flat record (config fields, key, results; no weights) for a table."""
        out = {"key": self.key, **self.config.to_dict(), "D_K": self.config.D_K}
        out.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                    if f.name not in ("config", "weights")})
        out["val_curve"] = [list(p) for p in self.val_curve]
        return out
