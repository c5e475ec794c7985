"""The GPT-2 block's verdict rows read the compressive preset (chapter *Does it replicate?*; issue 46).

The ``book`` rows of ``gpt2`` put m = 256 items in d_model = 768 (m / d_model = 0.33): the capacity argument says
nothing there, so they are the non-compressive control. The ``compressive`` preset keeps E7's task and block at
m / d_model = 8, as the paper, on a narrower stand-in table (m = 512, d_model = 64: :data:`rgr.gpt2.block.PRESETS`).
:func:`gpt2_source` picks the rows the three GPT-2 verdicts read: the ``paper`` preset's when it is complete (the
chapter's own ``preset = "auto"`` then reads it too), else the ``compressive`` preset's when that is complete, else
what the chapter loaded (whose rows then say why they cannot test the claims). :func:`x_of` maps a budget to the
law's variable x = D_K d_model / (m ln m), so a claim the paper makes at a D_K of its task is read at the same x
of another task.
"""

from __future__ import annotations

import math
from pathlib import Path

from ...catalog import load, preset_completeness
from ...store import TableError
from . import reported as rep
from .rows import Source

__all__ = ["COMPRESSIVE_PRESET", "gpt2_source", "x_of", "paper_dk_at"]

COMPRESSIVE_PRESET = "compressive"


def x_of(D_K: float, m: int, d_model: int) -> float:
    """The law's variable x = D_K d_model / (m ln m)."""
    return D_K * d_model / (m * math.log(m))


def paper_dk_at(D_K_paper: float, m: int, d_model: int) -> float:
    """The budget of a task (m, d_model) at the x of the paper's E7 budget ``D_K_paper`` (m = 6144, d_model = 768)."""
    return x_of(D_K_paper, rep.GPT2_M, rep.GPT2_D_MODEL) * m * math.log(m) / d_model


def gpt2_source(loaded: Source, requested: str = "auto", root: Path | None = None) -> Source:
    """The rows the GPT-2 verdicts read (module doc): ``loaded`` unless the chapter asked for ``auto``, the paper
    preset is incomplete and the compressive preset complete."""
    if requested != "auto" or loaded.preset == "paper":
        return loaded
    if (preset_completeness("gpt2", COMPRESSIVE_PRESET, root) or 0.0) < 1.0:
        return loaded
    try:
        return Source("gpt2", COMPRESSIVE_PRESET, load("gpt2", COMPRESSIVE_PRESET, root))
    except TableError:
        return loaded
