"""What a stack of runs is: a run of the paper's protocol, which runs stack, and where (chapter *permutation sweeps*).

The engine's first page (then :mod:`.stack`, then :mod:`.loop`). :class:`RunConfig` names one training run of
protocol E1/E4/E5/E6 (its fields and :meth:`RunConfig.key` key the committed tables: do not change them);
:class:`RunResult` is what the engine (:func:`rgr.experiments.engine.loop.train`) returns. Runs with equal
:meth:`RunConfig.stack_key` may train as one stack (:func:`stack_groups`), on the device a caller names
(:func:`resolve_device`: ``"auto"``, ``"cpu"`` and ``"cuda[:i]"`` mean the same thing everywhere).
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

GRAPH_KINDS: tuple[str, ...] = ("permutation", "regular")
DTYPES: dict[str, torch.dtype] = {"float32": torch.float32, "float64": torch.float64}
_CONFIG_VERSION = 1  # bump when a field's meaning changes, so old keys stop matching

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
    text = json.dumps({"version": _CONFIG_VERSION, **fields}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def config_keys(columns: Mapping[str, Sequence[object]]) -> list[str]:
    """:func:`config_key` of each row of ``columns`` (field name -> one value per row; no ``futility``), for a
    table's thousands of rows (the key of :data:`rgr.experiments.planner.SCHEMA`): the same JSON text, assembled
    from each column's distinct values, each written once by ``json.dumps``."""
    pieces = [_json_items(name, [_CONFIG_VERSION] * len(next(iter(columns.values()), [])) if name == "version"
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
        differ within a stack (heads are padded and masked: :func:`stack_groups`); what a stack step shares may not.
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


# ---------------------------------------------------------------------------------------
# which runs train together
#
# Runs with equal stack keys (model kind, d_model, ell, rho, lr, the checking schedule, dtype) may stack whatever
# their h, d_k, D_K, m, seed, graph or cutoff: the stack has the widest h and d_k of its runs, a run's missing
# columns are zero and its missing heads masked (rgr.model.qk.QKModel), so each run still trains exactly as it
# would alone (up to float rounding order). stack_groups bounds the padding: a run joins a stack of shape
# (h, d_k) = (H, w) only if its d_k >= w/2 and H * w <= 2 h * d_k (so a stack spends at most twice a run's own
# work on it), and caps a stack's size (_stack_cap).

# Stack-size caps: on a CPU the per-model-step cost stops falling at about 64 runs for D_K >= 128 (measured:
# `python -m rgr bench`, see the README's Performance section) and later for narrow runs; a GPU wants thousands.
_CPU_COLUMNS = 16_384  # runs x padded D_K per stack on a CPU
_CPU_RUNS = (64, 256)  # fewest and most runs per stack on a CPU
_CUDA_RUNS = 4096  # runs per stack on CUDA
MAX_PADDING = 2.0  # a stack spends at most this many times a run's own D_K on it


def _stack_cap(h: int, d_k: int, device: str | torch.device = "cpu") -> int:
    """Most runs in one stack of shape (h, d_k) on ``device``. CPU: 16,384 / (h d_k) runs, within [64, 256];
    CUDA: 4,096 runs."""
    if torch.device(device).type == "cuda":
        return _CUDA_RUNS
    lo, hi = _CPU_RUNS
    return int(min(hi, max(lo, _CPU_COLUMNS // (h * d_k))))


def _padding_ok(cfg: RunConfig, h: int, d_k: int, max_padding: float = MAX_PADDING) -> bool:
    """May ``cfg`` join a stack of shape (h, d_k)? Its head count and width fit, d_k >= half the
    stack's width, and h * d_k <= ``max_padding`` times its own D_K (1: exact shapes only)."""
    return cfg.h <= h and cfg.d_k <= d_k and 2 * cfg.d_k >= d_k and h * d_k <= max_padding * cfg.D_K


def stack_groups(
    configs: Sequence[RunConfig],
    max_stack: int | None = None,
    device: str | torch.device = "cpu",
    max_padding: float = MAX_PADDING,
) -> list[list[int]]:
    """Indices of ``configs`` grouped into stacks.

    Runs with equal stack keys (first-seen order) are taken largest D_K first
    (then widest d_k, most heads; ties in input order): the first run left sets
    the stack's shape (h, d_k), and the runs that fit it (:func:`_padding_ok`)
    join, in that order, up to ``max_stack`` runs (default :func:`_stack_cap`);
    ``max_padding`` bounds the padding (:func:`_padding_ok`).
    A stack formed here forms again unchanged when passed back on its own.
    """
    if max_stack is not None:
        check_int("max_stack", max_stack, 1)
    if not isinstance(max_padding, (int, float)) or not max_padding >= 1:
        raise ValueError(f"max_padding must be a number >= 1, got {max_padding!r}")
    families: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        families.setdefault(c.stack_key(), []).append(i)
    out: list[list[int]] = []
    for members in families.values():
        rest = sorted(members, key=lambda i: (-configs[i].D_K, -configs[i].d_k, -configs[i].h, i))
        while rest:
            top = configs[rest[0]]
            cap = max_stack or _stack_cap(top.h, top.d_k, device)
            group = [i for i in rest if _padding_ok(configs[i], top.h, top.d_k, max_padding)][:cap]
            taken = set(group)
            rest = [i for i in rest if i not in taken]
            out.append(sorted(group))
    return out


def stack_shape(cfgs: Sequence[RunConfig]) -> tuple[int, int]:
    """The (h, d_k) of a stack of ``cfgs``: their most heads and widest head."""
    return max(c.h for c in cfgs), max(c.d_k for c in cfgs)


# ---------------------------------------------------------------------------------------
# where a stack trains


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``/``"cuda[:i]"`` as given (checked)."""
    if isinstance(device, torch.device):
        dev = device
    elif device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError) as e:
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}") from e
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' requested but CUDA is not available")
    return dev


def sync(device: torch.device) -> None:
    """Wait for the kernels queued on ``device`` (a no-op on a CPU), so a clock read after it is honest."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
