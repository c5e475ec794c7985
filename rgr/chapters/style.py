"""One look for every figure of the book: :func:`set_style` and one colour per head count."""

from __future__ import annotations

import matplotlib as mpl
import seaborn as sns

__all__ = ["HEAD_COUNTS", "set_style", "head_palette", "head_color"]

# head counts the book's figures use; each keeps its colour in every chapter
HEAD_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
HEADS = HEAD_COUNTS


def set_style() -> None:
    """Seaborn's whitegrid theme, the colour-blind palette, and compact figure defaults."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 100,
            "savefig.dpi": 150,
            "axes.titlesize": "medium",
            "legend.fontsize": "small",
            "legend.title_fontsize": "small",
        }
    )


def head_palette() -> dict[int, tuple[float, float, float]]:
    """A fixed colour for each head count h in :data:`HEAD_COUNTS` (dark = one head)."""
    colours = sns.color_palette("viridis", len(HEAD_COUNTS))
    return dict(zip(HEAD_COUNTS, colours))


def head_color(h: int) -> tuple[float, float, float]:
    """The colour of head count ``h`` (nearest power of two for other values)."""
    pal = head_palette()
    if h in pal:
        return pal[h]
    nearest = min(HEAD_COUNTS, key=lambda k: abs(k.bit_length() - int(h).bit_length()))
    return pal[nearest]
