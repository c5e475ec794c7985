"""Stacks: which runs train together, and the tensors of a stack (chapter *permutation sweeps*).

A stack is one tensor program of R runs (:mod:`rgr.model.qk`): parameters with
a leading run axis, the loss summed over runs (so each run's gradient and its
AdamW update are exactly its own), contexts drawn for all runs at once
(:func:`rgr.task.contexts.sample_stacked`; a run's contexts depend on its seed
and the step only).

Mixed stacks. Runs with equal :meth:`RunConfig.stack_key` (model kind,
d_model, ell, rho, lr, the checking schedule, dtype) may stack whatever their
h, d_k, D_K, m, seed, graph or cutoff: the stack has the widest h and d_k of
its runs, a run's missing columns are zero and its missing heads masked
(:class:`rgr.model.qk.QKModel`), so each run still trains exactly as it would
alone (up to float rounding order). :func:`stack_groups` bounds the padding: a
run joins a stack of shape (h, d_k) = (H, w) only if its d_k >= w/2 and
H * w <= 2 h * d_k (so a stack spends at most twice a run's own work on it),
and caps a stack's size (:func:`stack_cap`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import torch

from ..model.qk import QKModel
from ..task.contexts import GraphTable, graph_table, sample_stacked
from ..task.embeddings import gaussian_unit
from ..task.graphs import Graph, permutation_graph, regular_graph
from ..task.rng import derive_seed, stream_key
from .adam import StackAdam
from .config import DTYPES, RunConfig, _int

__all__ = ["resolve_device", "build_task", "init_weights", "stack_cap", "stack_groups", "padding_ok"]

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


# Stack-size caps: on a CPU the per-model-step cost stops falling at about 64
# runs for D_K >= 128 (measured: `python -m rgr bench`, see the README's
# Performance section) and later for narrow runs; a GPU wants thousands.
_CPU_COLUMNS = 16_384  # runs x padded D_K per stack on a CPU
_CPU_RUNS = (64, 256)
_CUDA_RUNS = 4096


def stack_cap(h: int, d_k: int, device: str | torch.device = "cpu") -> int:
    """Most runs in one stack of shape (h, d_k) on ``device``.

    CPU: 16,384 / (h d_k) runs, within [64, 256]; CUDA: 4,096 runs.
    """
    if torch.device(device).type == "cuda":
        return _CUDA_RUNS
    lo, hi = _CPU_RUNS
    return int(min(hi, max(lo, _CPU_COLUMNS // (h * d_k))))


MAX_PADDING = 2.0  # a stack spends at most this many times a run's own D_K on it


def padding_ok(cfg: RunConfig, h: int, d_k: int, max_padding: float = MAX_PADDING) -> bool:
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
    the stack's shape (h, d_k), and the runs that fit it (:func:`padding_ok`)
    join, in that order, up to ``max_stack`` runs (default :func:`stack_cap`);
    ``max_padding`` bounds the padding (:func:`padding_ok`).
    A stack formed here forms again unchanged when passed back on its own.
    """
    if max_stack is not None:
        _int("max_stack", max_stack, 1)
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
            cap = max_stack or stack_cap(top.h, top.d_k, device)
            group = [i for i in rest if padding_ok(configs[i], top.h, top.d_k, max_padding)][:cap]
            taken = set(group)
            rest = [i for i in rest if i not in taken]
            out.append(sorted(group))
    return out


def stack_shape(cfgs: Sequence[RunConfig]) -> tuple[int, int]:
    """The (h, d_k) of a stack of ``cfgs``: their most heads and widest head."""
    return max(c.h for c in cfgs), max(c.d_k for c in cfgs)


def pad_heads(W: torch.Tensor, h: int, d_k: int, H: int, w: int) -> torch.Tensor:
    """(d_model, h d_k) in heads-side-by-side layout -> (d_model, H w): head k's columns first, zeros after."""
    d = W.shape[0]
    out = torch.zeros(d, H, w, dtype=W.dtype)
    out[:, :h, :d_k] = W.view(d, h, d_k)
    return out.view(d, H * w)

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
    opt: StackAdam
    X: torch.Tensor  # (R, m_max, d_model) embeddings, zero padded
    table: GraphTable  # graphs, (R, m_max, r_max)
    train_keys: torch.Tensor  # (R,) stream keys of "train"
    val_items: torch.Tensor  # (R, n_val, ell)
    val_labels: torch.Tensor  # (R, n_val, ell, ell)
    alpha: torch.Tensor  # (R, 1, 1)
    adaptive: torch.Tensor  # (R, 1, 1) bool: E4's adaptive posweight
    step: int = 0
    graphed: bool = False  # train through a captured CUDA graph (rgr.experiments.graphed)
    program: object | None = None  # the step program of this R (made at the first step; None after compaction)

    @property
    def R(self) -> int:
        return len(self.cfgs)

    def select(self, keep: list[int]) -> "_Stack":
        """The stack restricted to runs ``keep`` (positions in this stack); optimizer state carried over."""
        idx = torch.tensor(keep, dtype=torch.long, device=self.X.device)
        model = self.model.select(idx)
        opt = _optimizer(model, self.cfgs[0].lr)
        opt.carry(self.opt, idx)  # exp_avg, exp_avg_sq are per run; the step count is shared by the stack
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
            graphed=self.graphed,
        )


def _trainable(model: QKModel) -> list[torch.nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def _optimizer(model: QKModel, lr: float) -> StackAdam:
    # weight decay 0: AdamW is Adam; PyTorch's fused kernel, elementwise, so runs never mix.
    return StackAdam(_trainable(model), lr=lr, betas=(0.9, 0.999), eps=1e-8)


def _keys(cfgs: Sequence[RunConfig], stream: str, device: torch.device) -> torch.Tensor:
    return torch.tensor([stream_key(c.seed, stream) for c in cfgs], dtype=torch.long, device=device)


def _context_blocks(R: int, ell: int, n: int, block_elems: int) -> Iterator[tuple[int, int]]:
    """Blocks of context indices 0..n-1 small enough to sample for R runs at once."""
    return _blocks(0, n, max(1, block_elems // (4 * R * ell * ell)))


def _build_stack(cfgs: list[RunConfig], ids: list[int], device: torch.device, block_elems: int) -> _Stack:
    c0 = cfgs[0]
    if any(c.stack_key() != c0.stack_key() for c in cfgs):
        raise ValueError("configs of one stack must share a stack key (model, d_model, ell, rho, lr, checks, dtype)")
    dt = DTYPES[c0.dtype]
    H, w = stack_shape(cfgs)
    tasks = [build_task(c) for c in cfgs]
    m_max = max(c.m for c in cfgs)
    X = torch.zeros(len(cfgs), m_max, c0.d_model, dtype=dt)
    for i, (_, x) in enumerate(tasks):
        X[i, : x.shape[0]] = x.to(dt)
    inits = [init_weights(c) for c in cfgs]
    W_V = torch.stack([i["W_V"] for i in inits]).to(device) if c0.model == "value" else None
    padded = lambda name: torch.stack([pad_heads(i[name], c.h, c.d_k, H, w) for i, c in zip(inits, cfgs)]).to(device)
    model = QKModel(
        padded("W_Q"),  # (R, d_model, H w)
        padded("W_K"),
        torch.stack([i["tau"] for i in inits]).to(device),  # (R,)
        H,
        c0.model,
        W_V,
        heads=torch.tensor([c.h for c in cfgs]),
        d_ks=torch.tensor([c.d_k for c in cfgs]),
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


def _blocks(t0: int, t1: int, size: int) -> Iterator[tuple[int, int]]:
    for a in range(t0, t1, size):
        yield a, min(a + size, t1)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
