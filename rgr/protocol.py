"""The protocol's constants, each with one home on the ground floor (nothing here imports rgr), and the one
hardware assumption of the estimates.

- :data:`MODEL_KINDS`: how the heads' scores combine (max over heads, softmax summed, linear sum, the value
  channel), the models of :mod:`rgr.model.qk` and a column of every protocol table;
- :data:`PRESETS`, :data:`CHOICES`: the presets every sweep has (``smoke``, ``book``, ``paper``) and what a
  chapter's ``preset`` may ask for (``auto`` besides them: :func:`rgr.catalog.resolve_preset`); :func:`pick_preset`
  picks a live study's preset by name (each theory chapter's preset type, beside its study in :mod:`rgr.studies`);
- :data:`HEADS_ALL`: the paper's head counts (Table 1), the grid of every protocol experiment
  (:mod:`rgr.experiments.registry`) and one colour each in every figure (:mod:`rgr.chapters.style`);
- :data:`TABLES`: every table of data/ by name (each declared where :mod:`rgr.catalog` finds it);
- :data:`F1_TARGET` and :func:`reaches_target`: the success level of protocol E2 and the one test against it (micro-F1
  itself: :mod:`rgr.task.metrics`);
- :func:`law_x`: the law's variable h d_k d_model / (m ln m), which the peers' tables are planned and read on;
- :data:`GPU_FP32_PEAK`, :data:`GPU_UTILIZATION` and :func:`gpu_hours`: what a FLOP count costs on one H100, an
  estimate (:mod:`rgr.experiments.sizing.projection`, :func:`rgr.gpt2.experiment.preset_cost`).
"""

from __future__ import annotations

import math
from typing import Mapping, TypeVar

P = TypeVar("P")

PRESETS: tuple[str, ...] = ("smoke", "book", "paper")  # the sweeps' presets (data/SCHEMA.md); E7 adds its own
CHOICES: tuple[str, ...] = ("auto", *PRESETS)  # a chapter's `preset`: "auto" = paper rows where complete, else book
MODEL_KINDS: tuple[str, ...] = ("max", "softmax", "sum", "value")
HEADS_ALL: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)  # the paper's head counts (Table 1)
TABLES: tuple[str, ...] = ("base", "lambda8", "lambda32", "regular", "softmax", "linear", "value", "design_check",
                           "value_nostop", "value_long", "gpt2", "constructions", "peers", "settled", "aot", "pal",
                           "dk_saturation", "unstopped",
                           "softmax_cells")  # data/<name>.csv; rgr.catalog.NAMES, in its order

F1_TARGET = 0.99
"""The success level of protocol E2: a setting succeeds when its mean micro-F1 over seeds reaches it.
The D_K planner (refinement rounds) and the D_K* estimator both decide through :func:`reaches_target`."""

_EPS = 1e-9  # forgive float round-off in a mean over seeds (0.99 * 3 / 3 < 0.99)


def reaches_target(mean_f1, target: float = F1_TARGET):
    """True where a mean F1 (a float or an array) reaches ``target``, up to float round-off."""
    return mean_f1 >= target - _EPS


def law_x(h: int, d_k: int, d_model: int, m: int) -> float:
    """The law's variable x = h d_k d_model / (m ln m)."""
    if m < 2:
        raise ValueError(f"m must be at least 2, got {m}")
    return h * d_k * d_model / (m * math.log(m))


GPU_FP32_PEAK = 67e12  # FLOP/s: an H100 SXM's float32 peak without tensor cores (the engine trains in float32)
GPU_UTILIZATION = 0.1  # an assumed share of that peak for stacks of tiny matmuls: an estimate, never measured here


def gpu_hours(flops: float, share: float, peak: float = GPU_FP32_PEAK) -> float:
    """Hours of one GPU doing ``flops`` at ``share`` of its float32 ``peak`` (FLOP/s): an estimate, not a
    measurement."""
    if not 0 < share <= 1:
        raise ValueError(f"share must be in (0, 1], got {share}")
    return flops / (share * peak) / 3600


def pick_preset(table: Mapping[str, P], preset: str, chapter: str) -> P:
    """``table[preset]``, or a one-line error naming the ``chapter``'s presets (a live study has no ``auto``: that
    picks stored rows, and the chapters refuse it before they get here, :func:`rgr.chapters.params.check`)."""
    if preset not in table:
        raise ValueError(f"preset = {preset!r}; the {chapter} chapter's presets are {', '.join(map(repr, table))}")
    return table[preset]
