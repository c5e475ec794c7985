"""One look for every figure of the book: seaborn theme and one colour per head count."""

from __future__ import annotations

import matplotlib as mpl
import seaborn as sns

__all__ = ["HEADS", "set_style", "head_palette", "head_color"]

HEADS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)


def set_style() -> None:
    """Seaborn's whitegrid theme, a colour-blind palette, readable sizes; idempotent."""
    sns.set_theme(style="whitegrid", context="notebook", palette="colorblind")
    mpl.rcParams.update({"figure.dpi": 100, "savefig.dpi": 150, "axes.titleweight": "bold", "figure.autolayout": False})


def head_palette() -> dict[int, tuple[float, float, float]]:
    """Head count h -> colour, the same in every chapter (ordered from 1 to 64 heads)."""
    colors = sns.color_palette("viridis", n_colors=len(HEADS))
    return dict(zip(HEADS, colors))


def head_color(h: int) -> tuple[float, float, float]:
    """The colour of head count ``h`` (a power of two up to 64; grey otherwise)."""
    return head_palette().get(h, (0.5, 0.5, 0.5))
