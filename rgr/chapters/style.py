"""One look for every figure of the book: :func:`set_style` and one colour per head count.

Figures are drawn for the page they end up on. The book's text column is about 750 CSS pixels wide
(a phone's about 360), and a figure ``w`` inches wide is drawn ``100 * w`` CSS pixels wide, so a figure
wider than :data:`MAX_WIDTH_IN` is shrunk on the page and its fonts with it. :func:`panel_grid` lays
out ``n`` panels within that width (wrapping into rows). In a notebook, :func:`set_style` asks for
high-DPI ("retina") PNGs: twice the pixels, shown at the same size, so lines and text stay sharp
(nbval compares text, not PNG, so the outputs stay deterministic).
"""

from __future__ import annotations

import math

import matplotlib as mpl
import seaborn as sns

__all__ = ["HEAD_COUNTS", "MAX_WIDTH_IN", "set_style", "panel_grid", "legend_below", "head_palette", "head_color"]

# head counts the book's figures use; each keeps its colour in every chapter
HEAD_COUNTS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)
HEADS = HEAD_COUNTS

FIGURE_DPI = 100  # CSS pixels per inch of figure on the page (retina PNGs carry twice as many)
MAX_WIDTH_IN = 8.0  # widest figure (inches) drawn at >= ~95% of its size in the book's column


def set_style() -> None:
    """Seaborn's whitegrid theme, the colour-blind palette, readable fonts; retina PNGs in a notebook."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": FIGURE_DPI,
            "savefig.dpi": 2 * FIGURE_DPI,
            "savefig.bbox": "tight",
            "font.size": 12,
            "axes.titlesize": 12,
            "axes.labelsize": 12,
            "xtick.labelsize": 11,
            "ytick.labelsize": 11,
            "legend.fontsize": 11,
            "legend.title_fontsize": 11,
            "figure.titlesize": 13,
        }
    )
    _retina_inline()


def _retina_inline() -> None:
    """In IPython, PNG figures at twice the resolution (same displayed size); elsewhere nothing."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the book extra
        return
    if get_ipython() is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    set_matplotlib_formats("retina")


def panel_grid(
    n: int, panel: tuple[float, float] = (3.6, 3.0), max_width: float = MAX_WIDTH_IN
) -> tuple[int, int, tuple[float, float]]:
    """``(nrows, ncols, figsize)`` for ``n`` panels of size ``panel`` (inches), at most ``max_width`` wide.

    Panels wrap into rows rather than shrink: a row holds ``floor(max_width / panel width)`` panels
    (at least one), and rows are filled as evenly as possible.
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of panels, got {n}")
    w, h = panel
    if w <= 0 or h <= 0:
        raise ValueError(f"panel must be a positive (width, height), got {panel}")
    if max_width <= 0:
        raise ValueError(f"max_width must be positive, got {max_width}")
    per_row = max(1, min(n, int(max_width // w)))
    nrows = math.ceil(n / per_row)
    ncols = math.ceil(n / nrows)
    return nrows, ncols, (ncols * w, nrows * h)


def legend_below(fig, axes, ncol: int = 2) -> None:
    """One legend under a multi-panel figure: each label once, from whichever panel drew it first."""
    handles: dict = {}
    for ax in axes.flat:
        for hd, lb in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lb, hd)
    fig.tight_layout()
    fig.legend(handles.values(), handles.keys(), frameon=False, fontsize=9, loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=ncol)


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
