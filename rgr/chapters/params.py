"""The chapters' papermill parameters, checked before any work (every chapter calls :func:`check` first).

A bad parameter stops the chapter with one line naming it and the allowed values, e.g.
``ParameterError: preset = 'nope'; choose one of 'auto', 'smoke', 'book', 'paper'`` — not a KeyError deep in
a figure, and never a silent fallback to other data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ..protocol import CHOICES, PRESETS  # the one vocabulary; chapters import them with check

__all__ = ["PRESETS", "CHOICES", "ParameterError", "check", "positive_int", "in_range", "one_of"]

_DEVICES: tuple[str, ...] = ("cpu", "cuda", "auto")


class ParameterError(ValueError):
    """A chapter parameter outside its allowed values; the message names the parameter."""


@dataclass(frozen=True)
class _ChapterParams:
    """The parameters every chapter has, after checking (``device`` resolved: 'cuda' only with a GPU)."""

    preset: str  # one of CHOICES; rgr.chapters.loading resolves "auto" per experiment
    device: str
    seed: int


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def check(preset: str, device: str = "cpu", *, seed: int = 0, choices: tuple[str, ...] = CHOICES) -> _ChapterParams:
    """Check the common parameters; ``device='auto'`` becomes 'cuda' when a GPU is there, else 'cpu'.

    ``seed``: only the chapters that draw live (theory, constructions, lower_bounds) have one; a chapter that
    reads stored sweeps (which fix their own seeds) has none and leaves it at 0.

    ``choices``: the presets this chapter takes. The theory chapters pass :data:`PRESETS`: their ``preset``
    sizes what they compute live, and "auto" (which picks stored rows by completeness) means nothing there.
    """
    if preset not in choices:
        live = " (this preset sizes live computations; 'auto' picks stored rows)" if preset == "auto" else ""
        raise ParameterError(f"preset = {preset!r}; choose one of {', '.join(map(repr, choices))}{live}")
    if device not in _DEVICES:
        raise ParameterError(f"device = {device!r}; choose one of {', '.join(map(repr, _DEVICES))}")
    if device == "cuda" and not _cuda_available():
        raise ParameterError("device = 'cuda', but torch sees no CUDA device here; use 'cpu' or 'auto'")
    if device == "auto":
        device = "cuda" if _cuda_available() else "cpu"
    positive_int("seed", seed, low=0)
    return _ChapterParams(preset, device, int(seed))


def positive_int(name: str, value: object, low: int = 1, high: int | None = None) -> int:
    """``value`` as an int in [low, high]; else a ParameterError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(f"{name} = {value!r}; expected an integer >= {low}")
    if value < low or (high is not None and value > high):
        span = f">= {low}" if high is None else f"in [{low}, {high}]"
        raise ParameterError(f"{name} = {value}; expected an integer {span}")
    return value


def in_range(name: str, value: object, low: float, high: float) -> float:
    """``value`` as a finite float in [low, high]; else a ParameterError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"{name} = {value!r}; expected a number in [{low}, {high}]")
    if not low <= value <= high:
        raise ParameterError(f"{name} = {value}; expected a number in [{low}, {high}]")
    return float(value)


def one_of(name: str, values: Iterable[object], allowed: Iterable[object]) -> None:
    """Every element of ``values`` is in ``allowed``; else a ParameterError naming ``name``."""
    allowed = list(allowed)
    bad = [v for v in values if v not in allowed]
    if bad:
        raise ParameterError(f"{name} has {bad}; allowed values are {allowed}")
