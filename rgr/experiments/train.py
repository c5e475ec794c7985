"""The paper's training protocol, many runs stacked in one tensor program (chapter *permutation sweeps*).

Protocol E1 (and its variants E4, E5, E6; see the book's *permutation sweeps*
chapter and the model in chapter *theory*), per run:

- a graph (random derangement, or directed r-regular) and frozen Gaussian
  unit-norm embeddings, both from the run's seed;
- W_Q, W_K ~ N(0, init_std^2) entrywise (default init_std = d_model^-1/2, i.e.
  variance 1/d_model: the protocol's "N(0, 1/sqrt(d_model))" read as a standard
  deviation), tau = 0; drawn from ``derive_seed(seed, "init")`` with a generator
  of the run's own, so a run's init never depends on the stack;
- one fresh context per AdamW step (lr 1e-3, betas (0.9, 0.999), eps 1e-8,
  weight decay 0); context ``t`` of stream "train" at step ``t``;
- loss on all ell^2 ordered pairs, the diagonal included (always a negative):
  ``z = alpha (S - tau)``,
  ``L = ell^-2 sum [posweight y softplus(-z) + (1 - y) softplus(z)]``,
  posweight = ell - 1 (permutations) or #negatives / #positives of the context
  (r-regular graphs, E4);
- "value" runs (E6): MSE between ``S_max V_C`` and the target's message over
  the positions whose target is in context (mean over those positions and the
  d_msg coordinates); no threshold;
- every ``check_every`` steps the validation metric on 500 fixed contexts
  (stream "val"): micro-F1 (stop after ``patience`` consecutive checks above
  ``f1_stop``) or MSE (stop after ``patience`` consecutive checks without a
  relative improvement of more than ``mse_tol`` over the best so far);
  otherwise stop at ``max_steps``; the parameters at the stop are final;
- test metric on 2,000 fixed contexts (stream "test") with the learned tau.

Stacking. Runs with the same :meth:`RunConfig.stack_key` train together:
parameters get a leading run axis R, the loss is *summed* over runs (so each
run's gradient, and its AdamW update, is exactly its own), contexts are drawn
for all runs in blocks by :func:`rgr.task.contexts.sample_stacked` (a run's
contexts depend on its seed and the step only). A run that stops is evaluated,
recorded, and dropped from the stack at once (the stack is compacted), so a
finished run is frozen exactly and costs nothing afterwards.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import time
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import torch
import torch.nn.functional as F
from tqdm import tqdm

from ..task.contexts import GraphTable, graph_table, sample_stacked
from ..task.embeddings import gaussian_unit
from ..task.graphs import Graph, permutation_graph, regular_graph
from ..task.metrics import Counts, counts
from ..model.qk import MODEL_KINDS, QKModel, context_scores
from ..task.rng import derive_seed, stream_key

__all__ = [
    "GRAPH_KINDS",
    "RunConfig",
    "RunResult",
    "step_cutoff",
    "resolve_device",
    "build_task",
    "init_weights",
    "stack_groups",
    "logistic_coefficients",
    "logistic_loss",
    "value_targets",
    "value_loss",
    "train",
    "train_run",
]

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


def _int(name: str, v: object, low: int, high: int | None = None) -> None:
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

    def __post_init__(self) -> None:
        _int("m", self.m, 2)
        _int("d_model", self.d_model, 1)
        _int("h", self.h, 1)
        _int("d_k", self.d_k, 1)
        _int("seed", self.seed, 0)
        _choice("model", self.model, MODEL_KINDS)
        _choice("graph", self.graph, GRAPH_KINDS)
        if self.graph == "permutation":
            _int("r", self.r, 1, 1)
        else:
            _int("r", self.r, 1, self.m - 1)
        if self.model == "value" and self.graph != "permutation":
            raise ValueError(f"graph must be 'permutation' for model 'value' (one target per source), got {self.graph!r}")
        _int("ell", self.ell, 2, self.m)
        _float("rho", self.rho, 0.0, 1.0)
        _int("max_steps", self.max_steps, 1)
        _float("alpha", self.alpha, 0.0, math.inf, low_open=True)
        _float("lr", self.lr, 0.0, math.inf, low_open=True)
        _int("check_every", self.check_every, 1)
        _int("patience", self.patience, 1)
        _float("f1_stop", self.f1_stop, 0.0, 1.0)
        _float("mse_tol", self.mse_tol, 0.0, 1.0, high_open=True)
        _int("n_val", self.n_val, 1)
        _int("n_test", self.n_test, 1)
        if self.init_std is None:
            object.__setattr__(self, "init_std", self.d_model**-0.5)
        _float("init_std", self.init_std, 0.0, math.inf, low_open=True)
        object.__setattr__(self, "init_std", float(self.init_std))
        if self.d_msg is None:
            object.__setattr__(self, "d_msg", self.d_model)
        _int("d_msg", self.d_msg, 1)
        _choice("dtype", self.dtype, tuple(DTYPES))

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
        """A stable 16-hex-digit hash of every field (for resumable sweeps)."""
        text = json.dumps({"version": CONFIG_VERSION, **self.to_dict()}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def stack_key(self) -> tuple:
        """Runs with equal stack keys can train as one program."""
        return (self.d_model, self.h, self.d_k, self.model, self.d_msg, self.ell, self.rho, self.lr,
                self.check_every, self.n_val, self.n_test, self.dtype)


@dataclass(frozen=True)
class RunResult:
    """What one run produced. ``weights`` (per-head W_Q, W_K (h, d_model, d_k), tau, W_V) only on request."""

    config: RunConfig
    steps: int  # optimisation steps taken
    stop_reason: str  # "converged" or "cutoff"
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
        out.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("config", "weights")})
        out["val_curve"] = [list(p) for p in self.val_curve]
        return out


# ---------------------------------------------------------------------------------------
# per-run ingredients


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


def build_task(cfg: RunConfig) -> tuple[Graph, torch.Tensor]:
    """The run's graph and frozen embeddings X (m, d_model) float32, from its seed."""
    if cfg.graph == "permutation":
        g = permutation_graph(cfg.m, cfg.seed)
    else:
        g = regular_graph(cfg.m, cfg.r, cfg.seed)
    return g, gaussian_unit(cfg.m, cfg.d_model, cfg.seed)


def init_weights(cfg: RunConfig) -> dict[str, torch.Tensor]:
    """Initial W_Q, W_K (d_model, D_K), tau () and, for "value", the frozen W_V (d_model, d_msg).

    Drawn in float64 from the run's own generators (streams "init" and
    "value"), then cast to the run's dtype: independent of any stack.
    """
    dt = DTYPES[cfg.dtype]
    g = torch.Generator().manual_seed(derive_seed(cfg.seed, "init"))
    W_Q = torch.randn(cfg.d_model, cfg.D_K, generator=g, dtype=torch.float64) * cfg.init_std
    W_K = torch.randn(cfg.d_model, cfg.D_K, generator=g, dtype=torch.float64) * cfg.init_std
    out = {"W_Q": W_Q.to(dt), "W_K": W_K.to(dt), "tau": torch.zeros((), dtype=dt)}
    if cfg.model == "value":
        gv = torch.Generator().manual_seed(derive_seed(cfg.seed, "value"))
        W_V = torch.randn(cfg.d_model, cfg.d_msg, generator=gv, dtype=torch.float64) * cfg.d_model**-0.5
        out["W_V"] = W_V.to(dt)
    return out


def stack_groups(configs: Sequence[RunConfig], max_stack: int | None = None) -> list[list[int]]:
    """Indices of ``configs`` grouped by stack key (first-seen order), in chunks of at most ``max_stack``."""
    if max_stack is not None:
        _int("max_stack", max_stack, 1)
    groups: dict[tuple, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(c.stack_key(), []).append(i)
    size = max_stack or max(1, len(configs))
    return [g[j : j + size] for g in groups.values() for j in range(0, len(g), size)]


# ---------------------------------------------------------------------------------------
# the stack: R runs with equal shapes, trained as one program


@dataclass
class _Track:
    """Early-stopping bookkeeping of one run."""

    streak: int = 0
    best: float = math.inf
    curve: list[tuple[int, float]] = field(default_factory=list)


@dataclass
class _Stack:
    """The active runs of a group, everything with a leading run axis R."""

    cfgs: list[RunConfig]
    ids: list[int]  # positions in the caller's list
    tracks: list[_Track]
    model: QKModel
    opt: torch.optim.Optimizer
    X: torch.Tensor  # (R, m_max, d_model) embeddings, zero padded
    table: GraphTable  # graphs, (R, m_max, r_max)
    train_keys: torch.Tensor  # (R,) stream keys of "train"
    val_items: torch.Tensor  # (R, n_val, ell)
    val_labels: torch.Tensor  # (R, n_val, ell, ell)
    alpha: torch.Tensor  # (R, 1, 1)
    adaptive: torch.Tensor  # (R, 1, 1) bool: E4's adaptive posweight
    step: int = 0

    @property
    def R(self) -> int:
        return len(self.cfgs)

    def select(self, keep: list[int]) -> "_Stack":
        """The stack restricted to runs ``keep`` (positions in this stack); optimizer state carried over."""
        idx = torch.tensor(keep, dtype=torch.long, device=self.X.device)
        model = self.model.select(idx)
        opt = _optimizer(model, self.cfgs[0].lr)
        for old, new in zip(_trainable(self.model), _trainable(model)):
            state = self.opt.state.get(old)
            if state:  # exp_avg, exp_avg_sq are per run; the step count is shared by the stack
                opt.state[new] = {k: (v if k == "step" else v[idx]).clone() for k, v in state.items()}
        return _Stack(
            cfgs=[self.cfgs[i] for i in keep],
            ids=[self.ids[i] for i in keep],
            tracks=[self.tracks[i] for i in keep],
            model=model,
            opt=opt,
            X=self.X[idx],
            table=GraphTable(self.table.out[idx], self.table.m[idx]),
            train_keys=self.train_keys[idx],
            val_items=self.val_items[idx],
            val_labels=self.val_labels[idx],
            alpha=self.alpha[idx],
            adaptive=self.adaptive[idx],
            step=self.step,
        )


def _trainable(model: QKModel) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def _optimizer(model: QKModel, lr: float) -> torch.optim.Optimizer:
    # weight decay 0: AdamW is Adam. fused: one kernel per tensor, elementwise, so runs never mix.
    return torch.optim.AdamW(_trainable(model), lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, fused=True)


def _keys(cfgs: Sequence[RunConfig], stream: str, device: torch.device) -> torch.Tensor:
    return torch.tensor([stream_key(c.seed, stream) for c in cfgs], dtype=torch.long, device=device)


def _context_blocks(R: int, ell: int, n: int, block_elems: int) -> Iterator[tuple[int, int]]:
    """Blocks of context indices 0..n-1 small enough to sample for R runs at once."""
    return _blocks(0, n, max(1, block_elems // (4 * R * ell * ell)))


def _build_stack(cfgs: list[RunConfig], ids: list[int], device: torch.device, block_elems: int) -> _Stack:
    c0 = cfgs[0]
    dt = DTYPES[c0.dtype]
    tasks = [build_task(c) for c in cfgs]
    m_max = max(c.m for c in cfgs)
    X = torch.zeros(len(cfgs), m_max, c0.d_model, dtype=dt)
    for i, (_, x) in enumerate(tasks):
        X[i, : x.shape[0]] = x.to(dt)
    inits = [init_weights(c) for c in cfgs]
    W_V = torch.stack([w["W_V"] for w in inits]).to(device) if c0.model == "value" else None
    model = QKModel(
        torch.stack([w["W_Q"] for w in inits]).to(device),  # (R, d_model, D_K)
        torch.stack([w["W_K"] for w in inits]).to(device),
        torch.stack([w["tau"] for w in inits]).to(device),  # (R,)
        c0.h,
        c0.model,
        W_V,
    )
    table = graph_table([g for g, _ in tasks], device)
    R = len(cfgs)
    keys = _keys(cfgs, "val", device)
    val = [
        sample_stacked(table, keys, torch.arange(a, b, device=device).expand(R, -1), c0.ell, c0.rho)
        for a, b in _context_blocks(R, c0.ell, c0.n_val, block_elems)
    ]
    return _Stack(
        cfgs=list(cfgs),
        ids=list(ids),
        tracks=[_Track() for _ in cfgs],
        model=model,
        opt=_optimizer(model, c0.lr),
        X=X.to(device),
        table=table,
        train_keys=_keys(cfgs, "train", device),
        val_items=torch.cat([v.items for v in val], dim=1),  # (R, n_val, ell)
        val_labels=torch.cat([v.labels for v in val], dim=1),  # (R, n_val, ell, ell)
        alpha=torch.tensor([c.alpha for c in cfgs], dtype=dt, device=device).view(R, 1, 1),
        adaptive=torch.tensor([c.adaptive_posweight for c in cfgs], device=device).view(R, 1, 1),
    )


def _gather(X: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
    """Embeddings of contexts: X (R, m, d) and items (R, n, ell) -> X_C (R, n, ell, d)."""
    R = X.shape[0]
    return X[torch.arange(R, device=X.device).view(R, 1, 1), items]


# ---------------------------------------------------------------------------------------
# losses (one context per run; summed over runs)


def logistic_coefficients(labels: torch.Tensor, adaptive: torch.Tensor, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Coefficients (a, b) with ``loss = sum(a * softplus(z) - b * z)`` per context.

    Since softplus(-z) = softplus(z) - z, E1's
    ``ell^-2 sum[pw y softplus(-z) + (1 - y) softplus(z)]`` equals
    ``sum[a softplus(z) - b z]`` with ``a = (pw y + 1 - y) / ell^2``, ``b = pw y / ell^2``
    (the gradients agree exactly; only the form is cheaper). ``labels`` is
    (R, n, ell, ell) bool; ``adaptive`` (R, 1, 1) bool picks pw = #neg/#pos of the
    context (E4, 1 when the context has no positive) over pw = ell - 1 (E1).
    """
    ell = labels.shape[-1]
    y = labels.to(dtype)
    pos = y.sum((-1, -2), keepdim=True)  # (R, n, 1, 1)
    pw_adaptive = torch.where(pos > 0, (ell * ell - pos) / pos.clamp_min(1), torch.ones_like(pos))
    pw = torch.where(adaptive.unsqueeze(1), pw_adaptive, torch.full_like(pos, ell - 1))
    return (pw * y + 1 - y) / ell**2, pw * y / ell**2


def logistic_loss(S: torch.Tensor, tau: torch.Tensor, alpha: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Sum over runs of E1's weighted logistic loss; S, a, b (R, ell, ell); tau (R,); alpha (R, 1, 1)."""
    z = alpha * (S - tau.view(-1, 1, 1))
    return (a * F.softplus(z) - b * z).sum()


def value_targets(labels: torch.Tensor, V_C: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Targets and weights of E6's MSE: T (R, n, ell, d_msg) = message of each position's target;
    w (R, n, ell, 1) = 1 / (#valid d_msg) on valid positions (target in context), else 0."""
    T = labels.to(V_C.dtype) @ V_C  # (R, n, ell, d_msg): each row of labels has at most one 1
    valid = labels.any(-1, keepdim=True).to(V_C.dtype)  # (R, n, ell, 1)
    n_valid = valid.sum(-2, keepdim=True) * V_C.shape[-1]  # (R, n, 1, 1)
    return T, valid / n_valid.clamp_min(1)


def value_loss(S: torch.Tensor, V_C: torch.Tensor, T: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """Sum over runs of E6's per-context MSE; S (R, ell, ell), V_C and T (R, ell, d_msg), w (R, ell, 1)."""
    return (w * (torch.bmm(S, V_C) - T).square()).sum()


# ---------------------------------------------------------------------------------------
# training and evaluation


def _blocks(t0: int, t1: int, size: int) -> Iterator[tuple[int, int]]:
    for a in range(t0, t1, size):
        yield a, min(a + size, t1)


def _train_steps(st: _Stack, t0: int, t1: int, block_elems: int) -> None:
    """Steps t0 .. t1-1 of every run in the stack (contexts drawn a block at a time)."""
    c0, R = st.cfgs[0], st.R
    dt, dev = st.X.dtype, st.X.device
    per_ctx = c0.d_model + (2 * c0.d_msg + 1 if c0.model == "value" else 2 * c0.ell)  # floats per position
    per_step = R * c0.ell * per_ctx
    size = max(1, min(t1 - t0, block_elems // per_step))
    model, opt = st.model, st.opt
    for a, b in _blocks(t0, t1, size):
        index = torch.arange(a, b, device=dev).expand(R, -1)  # (R, B): context t at step t
        batch = sample_stacked(st.table, st.train_keys, index, c0.ell, c0.rho)
        X_C = _gather(st.X, batch.items)  # (R, B, ell, d_model)
        if c0.model == "value":
            V_C = model.messages(X_C)  # (R, B, ell, d_msg)
            T, w = value_targets(batch.labels, V_C)
            per = [x.transpose(0, 1).contiguous() for x in (X_C, V_C, T, w)]  # step-major (B, R, ...)
        else:
            A, Bc = logistic_coefficients(batch.labels, st.adaptive, dt)
            per = [x.transpose(0, 1).contiguous() for x in (X_C, A, Bc)]  # (B, R, ...)
        for s in range(b - a):
            x = per[0][s].unsqueeze(1)  # (R, 1, ell, d_model)
            S = model(x).squeeze(1)  # (R, ell, ell)
            if c0.model == "value":
                loss = value_loss(S, per[1][s], per[2][s], per[3][s])
            else:
                loss = logistic_loss(S, model.tau, st.alpha, per[1][s], per[2][s])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()


def _eval_chunk(R: int, ell: int, h: int, D_K: int, d: int, eval_elems: int) -> int:
    per_ctx = R * ell * max(h * ell, 2 * D_K, d, ell)
    return max(1, eval_elems // per_ctx)


@torch.no_grad()
def _evaluate_group(
    model: QKModel, X: torch.Tensor, items: torch.Tensor, labels: torch.Tensor, by_pairs: bool, eval_elems: int
) -> torch.Tensor:
    """Per-run sums over contexts (R, n, ...): (R, 3) [tp, fp, fn], or (R, 2) [sse, count] for "value"."""
    R, n, ell = items.shape
    if by_pairs:
        table = model.pair_scores(X)  # (R, m, m)
        score = lambda it: context_scores(table, it)
    else:
        tables = model.item_tables(X)  # every item projected once
        score = lambda it: model.scores_from_tables(tables, it)
    V = torch.bmm(X, model.W_V) if model.kind == "value" else None  # (R, m, d_msg) messages
    total = torch.zeros(R, 2 if V is not None else 3, dtype=torch.float64, device=X.device)
    for a, b in _blocks(0, n, _eval_chunk(R, ell, model.h, model.D_K, model.d_model, eval_elems)):
        S = score(items[:, a:b])  # (R, c, ell, ell)
        y = labels[:, a:b]
        if V is not None:
            V_C = _gather(V, items[:, a:b])  # (R, c, ell, d_msg)
            T = y.to(V_C.dtype) @ V_C
            valid = y.any(-1, keepdim=True)  # (R, c, ell, 1)
            total[:, 0] += ((S @ V_C - T).square() * valid).sum((1, 2, 3)).double()
            total[:, 1] += valid.sum((1, 2, 3)).double() * V_C.shape[-1]
        else:
            c = counts(model.predict_edges(S), y)
            total += torch.stack([c.tp, c.fp, c.fn], dim=1)
    return total


def _evaluate(
    model: QKModel,
    X: torch.Tensor,
    ms: Sequence[int],
    items: torch.Tensor,
    labels: torch.Tensor,
    eval_elems: int,
    n_set: int,
) -> torch.Tensor:
    """Per-run sums over contexts, as :func:`_evaluate_group`, for runs with ``ms`` items each.

    A run's scores come from a table of all its item pairs when that is the
    cheaper way for its whole set of ``n_set`` contexts (a context-free
    aggregation, m^2 <= n_set ell^2, and m^2 <= 32 eval_elems), else from
    per-item queries and keys gathered per context. The choice depends on the
    run alone, never on the stack it is in.
    """
    R, n, ell = items.shape
    pairs = [model.aggregation != "softmax" and m * m <= min(n_set * ell * ell, 32 * eval_elems) for m in ms]
    groups: list[tuple[list[int], bool]] = [([i for i in range(R) if not pairs[i]], False)]
    by_pairs = [i for i in range(R) if pairs[i]]
    per = max(1, 32 * eval_elems // max([ms[i] ** 2 for i in by_pairs], default=1))  # runs per pair-table group
    groups += [(by_pairs[j : j + per], True) for j in range(0, len(by_pairs), per)]
    out = torch.zeros(R, 2 if model.kind == "value" else 3, dtype=torch.float64, device=X.device)
    for idx, use_pairs in groups:
        if not idx:
            continue
        m = max(ms[i] for i in idx)
        sub = model if len(idx) == R else model.select(torch.tensor(idx, device=X.device))
        rows = torch.tensor(idx, device=X.device)
        out[rows] = _evaluate_group(sub, X[rows, :m], items[rows], labels[rows], use_pairs, eval_elems)
    return out


def _metric(model: QKModel, ev: torch.Tensor) -> list[float]:
    if model.kind == "value":
        return (ev[:, 0] / ev[:, 1].clamp_min(1)).tolist()
    return Counts(ev[:, 0], ev[:, 1], ev[:, 2]).f1.tolist()


def _test(
    st: _Stack, keep: list[int], block_elems: int, eval_elems: int, keep_weights: bool, reasons: dict[int, str]
) -> list[tuple[int, RunResult]]:
    """Evaluate runs ``keep`` of the stack on their test contexts and build their results."""
    sub = st.select(keep) if len(keep) < st.R else st
    c0, R, dev = sub.cfgs[0], sub.R, sub.X.device
    keys = _keys(sub.cfgs, "test", dev)
    total = None
    for a, b in _context_blocks(R, c0.ell, c0.n_test, block_elems):
        batch = sample_stacked(sub.table, keys, torch.arange(a, b, device=dev).expand(R, -1), c0.ell, c0.rho)
        part = _evaluate(sub.model, sub.X, [c.m for c in sub.cfgs], batch.items, batch.labels, eval_elems, c0.n_test)
        total = part if total is None else total + part
    w = sub.model.weights()
    out = []
    for j, i in enumerate(keep):
        cfg = sub.cfgs[j]
        common = dict(config=cfg, steps=st.step, stop_reason=reasons[i], val_curve=tuple(st.tracks[i].curve))
        if cfg.model == "value":
            res = RunResult(**common, test_mse=float(total[j, 0] / total[j, 1].clamp_min(1)))
        else:
            c = Counts(total[j : j + 1, 0], total[j : j + 1, 1], total[j : j + 1, 2])
            res = RunResult(
                **common,
                test_f1=float(c.f1),
                test_precision=float(c.precision),
                test_recall=float(c.recall),
                tau=float(w.tau[j]),
            )
        if keep_weights:
            weights = {"W_Q": w.W_Q[j].cpu().clone(), "W_K": w.W_K[j].cpu().clone(), "tau": w.tau[j].cpu().clone()}
            if sub.model.W_V is not None:
                weights["W_V"] = sub.model.W_V[j].cpu().clone()
            res = dataclasses.replace(res, weights=weights)
        out.append((sub.ids[j], res))
    return out


def _check(st: _Stack, due: list[int], eval_elems: int) -> dict[int, str]:
    """Validation check of runs ``due``; returns {position: stop reason} of the runs that stop now."""
    stops: dict[int, str] = {}
    if due:
        sub = st.select(due) if len(due) < st.R else st
        ev = _evaluate(sub.model, sub.X, [c.m for c in sub.cfgs], sub.val_items, sub.val_labels, eval_elems, sub.cfgs[0].n_val)
        values = _metric(st.model, ev)
        for i, v in zip(due, values):
            cfg, tr = st.cfgs[i], st.tracks[i]
            tr.curve.append((st.step, v))
            if cfg.metric == "f1":
                tr.streak = tr.streak + 1 if v > cfg.f1_stop else 0
            else:
                improved = v < tr.best * (1 - cfg.mse_tol)
                tr.best = min(tr.best, v)
                tr.streak = 0 if improved else tr.streak + 1
            if tr.streak >= cfg.patience:
                stops[i] = "converged"
    for i, cfg in enumerate(st.cfgs):
        if i not in stops and st.step >= cfg.max_steps:
            stops[i] = "cutoff"
    return stops


def _fit(
    st: _Stack, keep_weights: bool, progress: bool, block_elems: int, eval_elems: int, timings: dict[str, float]
) -> list[tuple[int, RunResult]]:
    """Train the stack until every run has stopped; results tagged with the caller's positions."""
    results: list[tuple[int, RunResult]] = []
    clock = time.perf_counter()
    every = st.cfgs[0].check_every
    bar = tqdm(total=max(c.max_steps for c in st.cfgs), desc="train", unit="step", disable=not progress, leave=False)
    with bar:
        while True:
            t0 = st.step
            t1 = min((t0 // every + 1) * every, min(c.max_steps for c in st.cfgs))
            _train_steps(st, t0, t1, block_elems)
            st.step = t1
            bar.update(t1 - t0)
            due = [i for i, c in enumerate(st.cfgs) if t1 % every == 0 or t1 == c.max_steps]
            stops = _check(st, due, eval_elems)
            if progress:
                last = [tr.curve[-1][1] for tr in st.tracks if tr.curve]
                if last:
                    best = max(last) if st.cfgs[0].metric == "f1" else min(last)
                    bar.set_postfix(active=st.R, **{f"best_val_{st.cfgs[0].metric}": f"{best:.4f}"})
            if stops:
                _sync(st.X.device)
                timings["train"] += time.perf_counter() - clock
                clock = time.perf_counter()
                results += _test(st, sorted(stops), block_elems, eval_elems, keep_weights, stops)
                _sync(st.X.device)
                timings["test"] += time.perf_counter() - clock
                clock = time.perf_counter()
                rest = [i for i in range(st.R) if i not in stops]
                if not rest:
                    break
                st = st.select(rest)  # compact: the stopped runs are gone, frozen as they were
    return results


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(
    configs: Sequence[RunConfig],
    device: str | torch.device = "cpu",
    progress: bool = True,
    keep_weights: bool = False,
    max_stack: int | None = None,
    block_elems: int = 1 << 24,
    eval_elems: int = 1 << 19,
    timings: dict[str, float] | None = None,
) -> list[RunResult]:
    """Train every run of ``configs`` by protocol E1/E4/E5/E6, stacking whatever can stack.

    Results come back in the order of ``configs``, each equal (up to float
    rounding) to training that run alone. ``max_stack`` bounds the runs per
    program; ``block_elems``/``eval_elems`` bound the elements of the tensors
    built per block of training contexts and per evaluation chunk (memory only:
    results do not depend on them). ``keep_weights`` attaches the final weights.
    ``timings``, when given, accumulates wall seconds per phase: "setup"
    (tasks, init, validation contexts), "train" (steps, including sampling and
    validation checks) and "test".
    """
    configs = list(configs)
    for c in configs:
        if not isinstance(c, RunConfig):
            raise ValueError(f"configs must hold RunConfig values, got {type(c).__name__}")
    _int("block_elems", block_elems, 1)
    _int("eval_elems", eval_elems, 1)
    dev = resolve_device(device)
    clock = {"setup": 0.0, "train": 0.0, "test": 0.0}
    out: list[RunResult | None] = [None] * len(configs)
    for group in stack_groups(configs, max_stack):
        t = time.perf_counter()
        st = _build_stack([configs[i] for i in group], group, dev, block_elems)
        _sync(dev)
        clock["setup"] += time.perf_counter() - t
        for i, res in _fit(st, keep_weights, progress, block_elems, eval_elems, clock):
            out[i] = res
    if timings is not None:
        for k, v in clock.items():
            timings[k] = timings.get(k, 0.0) + v
    return out  # type: ignore[return-value]


def train_run(cfg: RunConfig, device: str | torch.device = "cpu", progress: bool = True, keep_weights: bool = False) -> RunResult:
    """Train one run alone (a stack of one)."""
    return train([cfg], device=device, progress=progress, keep_weights=keep_weights)[0]
