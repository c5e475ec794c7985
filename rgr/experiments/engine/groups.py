"""Which runs train together: stacks formed from a list of runs (chapter *permutation sweeps*).

Runs with equal :meth:`RunConfig.stack_key` (model kind, d_model, ell, rho,
lr, the checking schedule, dtype) may stack whatever their h, d_k, D_K, m,
seed, graph or cutoff: the stack has the widest h and d_k of its runs, a run's
missing columns are zero and its missing heads masked
(:class:`rgr.model.qk.QKModel`), so each run still trains exactly as it would
alone (up to float rounding order). :func:`stack_groups` bounds the padding: a
run joins a stack of shape (h, d_k) = (H, w) only if its d_k >= w/2 and
H * w <= 2 h * d_k (so a stack spends at most twice a run's own work on it),
and caps a stack's size (:func:`stack_cap`).
"""

from __future__ import annotations

from typing import Sequence

import torch

from .config import RunConfig, check_int

__all__ = ["MAX_PADDING", "stack_cap", "padding_ok", "stack_groups", "stack_shape"]

# Stack-size caps: on a CPU the per-model-step cost stops falling at about 64
# runs for D_K >= 128 (measured: `python -m rgr bench`, see the README's
# Performance section) and later for narrow runs; a GPU wants thousands.
CPU_COLUMNS = 16_384  # runs x padded D_K per stack on a CPU
CPU_RUNS = (64, 256)  # fewest and most runs per stack on a CPU
CUDA_RUNS = 4096  # runs per stack on CUDA
MAX_PADDING = 2.0  # a stack spends at most this many times a run's own D_K on it


def stack_cap(h: int, d_k: int, device: str | torch.device = "cpu") -> int:
    """Most runs in one stack of shape (h, d_k) on ``device``.

    CPU: 16,384 / (h d_k) runs, within [64, 256]; CUDA: 4,096 runs.
    """
    if torch.device(device).type == "cuda":
        return CUDA_RUNS
    lo, hi = CPU_RUNS
    return int(min(hi, max(lo, CPU_COLUMNS // (h * d_k))))


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
            cap = max_stack or stack_cap(top.h, top.d_k, device)
            group = [i for i in rest if padding_ok(configs[i], top.h, top.d_k, max_padding)][:cap]
            taken = set(group)
            rest = [i for i in rest if i not in taken]
            out.append(sorted(group))
    return out


def stack_shape(cfgs: Sequence[RunConfig]) -> tuple[int, int]:
    """The (h, d_k) of a stack of ``cfgs``: their most heads and widest head."""
    return max(c.h for c in cfgs), max(c.d_k for c in cfgs)
