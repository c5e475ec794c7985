"""Counter-based random numbers: uniforms as a pure function of (seed, stream, index, slot).

Stacked training (chapter *theory*, and :mod:`rgr.experiments.engine.loop`) draws one context per
run per step for hundreds of runs at once. For each run's result to equal
training it alone, its random stream must not depend on the other runs in the
stack, nor on how many steps are drawn per block. A stateful generator cannot
promise that cheaply; a hash of counters can: the ``slot``-th uniform of the
``index``-th context of ``stream`` of run ``seed`` is
``splitmix64(splitmix64(key(seed, stream)) + index) + slot``, mixed again.

Integer arithmetic is exact on every device, so the same seeds give the same
draws on the CPU and the GPU.
"""

from __future__ import annotations

import torch

# Independent streams of one run: training contexts, validation, test, and
# whatever else a later module needs (they are just distinct integers).
_STREAMS: dict[str, int] = {"train": 1, "val": 2, "test": 3, "graph": 4, "embed": 5, "init": 6, "value": 7}

_MASK64 = (1 << 64) - 1
_C1 = 0xBF58476D1CE4E5B9
_C2 = 0x94D049BB133111EB
_GOLDEN = 0x9E3779B97F4A7C15


def _signed(c: int) -> int:
    """The int64 whose two's-complement bits equal the unsigned 64-bit ``c``."""
    c &= _MASK64
    return c - (1 << 64) if c >= (1 << 63) else c


def _srl(x: torch.Tensor, k: int) -> torch.Tensor:
    """Logical right shift of int64 ``x`` by ``k`` bits."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def _mix(x: torch.Tensor) -> torch.Tensor:
    """splitmix64's finalizer on int64 tensors (wrapping multiply)."""
    x = x ^ _srl(x, 30)
    x = x * _signed(_C1)
    x = x ^ _srl(x, 27)
    x = x * _signed(_C2)
    return x ^ _srl(x, 31)


def _mix_int(x: int) -> int:
    """The same finalizer on a Python int (for keys built once per run)."""
    x &= _MASK64
    x ^= x >> 30
    x = (x * _C1) & _MASK64
    x ^= x >> 27
    x = (x * _C2) & _MASK64
    return x ^ (x >> 31)


def stream_key(seed: int, stream: str | int) -> int:
    """A 64-bit key (as a signed int64 value) for one stream of one run."""
    if isinstance(stream, str):
        if stream not in _STREAMS:
            raise ValueError(f"stream must be one of {sorted(_STREAMS)}, got {stream!r}")
        stream = _STREAMS[stream]
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return _signed(_mix_int(_mix_int(seed * _GOLDEN + 1) ^ (stream * _C1 + 7)))


def derive_seed(seed: int, stream: str | int) -> int:
    """A non-negative 63-bit seed for a torch/numpy generator, derived from a run seed."""
    return stream_key(seed, stream) & ((1 << 63) - 1)


def _bits(keys: torch.Tensor, index: torch.Tensor, n_slots: int) -> torch.Tensor:
    """Random int64 words of shape ``keys.shape + index.shape[1:] + (n_slots,)``.

    ``keys`` has shape (R,) (one per run); ``index`` has shape (R, ...) of
    context indices; the last axis enumerates the slots of one context.
    """
    if keys.dtype != torch.int64 or index.dtype != torch.int64:
        raise ValueError("keys and index must be int64 tensors")
    k = keys.reshape(keys.shape + (1,) * (index.dim() - 1))  # (R, 1, ...)
    base = _mix(k + _mix(index * _signed(_GOLDEN)))  # (R, ...)
    slots = torch.arange(n_slots, device=index.device, dtype=torch.int64)
    return _mix(base.unsqueeze(-1) + slots * _signed(_C2))  # (R, ..., n_slots)


def uniform(keys: torch.Tensor, index: torch.Tensor, n_slots: int) -> torch.Tensor:
    """Uniform floats in [0, 1) (float64, 53 random bits) — see :func:`_bits` for shapes."""
    return _srl(_bits(keys, index, n_slots), 11).to(torch.float64) * (2.0**-53)


def randint(u: torch.Tensor, high: torch.Tensor | int) -> torch.Tensor:
    """Map uniforms ``u`` in [0, 1) to integers in [0, high) (``high`` broadcasts)."""
    return torch.clamp((u * high).floor().long(), max=torch.as_tensor(high, device=u.device) - 1)
