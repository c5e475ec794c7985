"""One look for every figure of the book: :func:`set_style`, one colour per head count, and readable texts.

Figures are drawn for the page they end up on. A figure ``w`` inches wide is drawn ``100 * w`` CSS
pixels wide; the book's text column is about 750 CSS pixels at desktop width and 342 on a 390-px phone,
where a figure is shrunk to the column and its fonts with it. Drawn at most :data:`MAX_WIDTH_IN` wide
(:func:`fig_size` caps a width; :func:`panel_grid` lays ``n`` panels within it, two a row, wrapping
into rows), a figure shows on a phone at >= 70% of its drawn size, and text of at least
:data:`MIN_FONT_PT` at >= 8 CSS px (the site check, tests/system/site_check.py, measures both). In a notebook,
:func:`set_style` asks for high-DPI ("retina") PNGs (twice the pixels, shown at the same size) that
record their smallest text (:func:`_png_metadata`); nbval compares text, not PNG, so outputs stay
deterministic.

**Is every text of a figure readable?** Text boxes measured by matplotlib's own renderer (issue 47).

A chapter figure fails when two of its text boxes overlap (tick labels stacked on each other, a legend over tick
labels or an axis label, annotations printed over each other) or when a text leaves the figure (cut at the
figure's edge, or cut by the axes that clip it). :func:`text_problems` lists them in words; every figure a chapter
shows is measured when it is drawn (:func:`shown_png`), which records the count in the PNG
and warns, so a chapter with such a figure fails its execution and nbval. The test is
tests/chapters/test_style.py.

Boxes: every visible, non-empty text (titles, axis labels, the tick labels matplotlib draws, the axis offset
text, annotations, figure texts) and each legend as one box (its own texts are inside it by design).
Two boxes overlap when their intersection is more than :data:`_TOLERANCE_PX` pixels in both directions.
"""

from __future__ import annotations

import base64
import io
import math
import struct
import warnings
from dataclasses import dataclass

import matplotlib as mpl
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.transforms import Bbox

from ..protocol import HEADS_ALL

FIGURE_DPI = 100  # CSS pixels per inch of figure on the page (retina PNGs carry twice as many)
MAX_WIDTH_IN = 4.8  # widest figure (inches): shown at >= 70% of its drawn size in a 390-px phone's column
MIN_FONT_PT = 9.0  # smallest text (points): >= 8 CSS px on that phone
_MIN_PANEL_IN = 2.3  # a panel of a grid is never narrower than this (inches)
_TEXT_KEY = "rgr-min-text-px"  # PNG text chunk read by the site check (tests/system/site_check.py)
_PROBLEMS_KEY = "rgr-text-problems"  # PNG text chunk: overlapping or cut texts (rgr.chapters.style), 0 wanted


class _FigureTextWarning(UserWarning):
    """A chapter figure whose texts overlap or are cut (:func:`rgr.chapters.style.text_problems`)."""
_MAX_SHOWN_PX = 480  # widest a figure is shown (CSS px): 342-px phone column / 480 = 71%


def set_style() -> None:
    """Seaborn's whitegrid theme, the colour-blind palette, readable fonts; retina PNGs in a notebook."""
    sns.set_theme(context="notebook", style="whitegrid", palette="colorblind")
    mpl.rcParams.update(
        {
            "figure.figsize": (MAX_WIDTH_IN, 3.2),
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
    from matplotlib.figure import Figure
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    # importing the inline backend sets up its own PNG formatter (once); ours replaces it afterwards
    set_matplotlib_formats("retina")
    formatter = get_ipython().display_formatter.formatters["image/png"]
    formatter.for_type(Figure, _retina_png)


def _retina_png(fig):
    """A retina PNG of ``fig`` (base64) and its shown size, as IPython's inline backend gives them; shown at
    most :data:`_MAX_SHOWN_PX` wide, its smallest text recorded (:func:`shown_png`)."""
    if not fig.axes and not fig.texts:  # IPython shows nothing for an empty figure
        return None
    problems = text_problems(fig)
    if problems:
        warnings.warn(_FigureTextWarning(f"figure text unreadable: {'; '.join(problems[:5])}"
                                        + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")),
                      stacklevel=2)
    png, width, height = shown_png(fig, 2 * FIGURE_DPI)
    return base64.b64encode(png).decode("ascii"), {"width": round(width), "height": round(height)}


def shown_png(fig, dpi: float) -> tuple[bytes, float, float]:
    """``fig`` saved as a tight PNG at ``dpi`` and the size to show it at (CSS px): its drawn size
    (:data:`FIGURE_DPI` px an inch; an outside legend or label makes it wider than the figure's size),
    scaled down to at most :data:`_MAX_SHOWN_PX` wide. The PNG records the smallest text at the shown
    size (:func:`_png_metadata`) and no software name (the same figure gives the same bytes)."""
    def save(scale: float) -> bytes:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata=_png_metadata(fig, scale))
        return buf.getvalue()

    png = save(1.0)
    w, h = (px * FIGURE_DPI / dpi for px in struct.unpack(">II", png[16:24]))  # the PNG header's size
    k = min(1.0, _MAX_SHOWN_PX / w)
    return (png if k == 1.0 else save(k)), w * k, h * k


def _smallest_text_px(fig) -> float:
    """The size of ``fig``'s smallest visible text (title, label, tick, legend, annotation), in CSS px
    at its drawn size (:data:`FIGURE_DPI` px an inch); 0.0 for a figure without text."""
    fig.draw_without_rendering()  # tick labels exist only once the figure has been laid out
    sizes = [t.get_fontsize() for t in fig.findobj(mpl.text.Text) if t.get_visible() and t.get_text().strip()]
    return min(sizes) * FIGURE_DPI / 72 if sizes else 0.0


def _png_metadata(fig, scale: float = 1.0) -> dict[str, str | None]:
    """PNG text chunks for ``fig``: its smallest text (:func:`_smallest_text_px`) as shown at ``scale`` of
    its drawn size, for the site check; how many of its texts overlap or are cut
    (:func:`rgr.chapters.style.text_problems`, read by tests/chapters/test_style.py); and no software
    name (the same figure gives the same bytes)."""
    return {_TEXT_KEY: f"{_smallest_text_px(fig) * scale:.1f}", _PROBLEMS_KEY: str(len(text_problems(fig))),
            "Software": None}


def fig_size(width: float, height: float) -> tuple[float, float]:
    """``(width, height)`` in inches, scaled down (aspect kept) to at most :data:`MAX_WIDTH_IN` wide."""
    if width <= 0 or height <= 0:
        raise ValueError(f"fig_size: width and height must be positive, got ({width}, {height})")
    k = min(1.0, MAX_WIDTH_IN / width)
    return (width * k, height * k)


def panel_grid(
    n: int, panel: tuple[float, float] = (3.6, 3.0), max_width: float = MAX_WIDTH_IN
) -> tuple[int, int, tuple[float, float]]:
    """``(nrows, ncols, figsize)`` for ``n`` panels of size ``panel`` (inches), at most ``max_width`` wide.

    Several panels sit at least two a row: a panel wider than half of ``max_width`` is scaled down
    (aspect kept) to that, but not below :data:`_MIN_PANEL_IN`. Beyond that panels wrap into rows
    rather than shrink: a row holds ``floor(max_width / panel width)`` panels (at least one), and rows
    are filled as evenly as possible.
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of panels, got {n}")
    w, h = panel
    if w <= 0 or h <= 0:
        raise ValueError(f"panel must be a positive (width, height), got {panel}")
    if max_width <= 0:
        raise ValueError(f"max_width must be positive, got {max_width}")
    if n > 1 and w > max_width / 2:
        k = max(max_width / 2, min(w, _MIN_PANEL_IN)) / w
        w, h = w * k, h * k
    per_row = max(1, min(n, int(max_width // w + 1e-9)))
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
    fig.legend(handles.values(), handles.keys(), frameon=False, fontsize=MIN_FONT_PT, loc="upper center",
               bbox_to_anchor=(0.5, 0.0), ncol=ncol)


def plain_log_axes(ax, which: str = "xy", subs: tuple[float, ...] = (1.0, 2.0, 5.0), base: float = 10) -> None:
    """Log scale on ``which`` axes of ``ax`` ("x", "y" or "xy"), labelled in plain numbers (5, 10, 20, 50, ...) at
    ``subs`` times the powers of ``base``, without minor labels: readable where the data span a decade or more."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    for name in which:
        getattr(ax, f"set_{name}scale")("log", base=base)
        axis = getattr(ax, f"{name}axis")
        axis.set_major_locator(LogLocator(base=base, subs=subs))
        axis.set_major_formatter(FormatStrFormatter("%g"))
        axis.set_minor_formatter(NullFormatter())


def _head_palette() -> dict[int, tuple[float, float, float]]:
    """A fixed colour for each head count h of the paper's grid (:data:`rgr.protocol.HEADS_ALL`), the same in every
    chapter (dark = one head)."""
    colours = sns.color_palette("viridis", len(HEADS_ALL))
    return dict(zip(HEADS_ALL, colours))


def head_color(h: int) -> tuple[float, float, float]:
    """The colour of head count ``h`` (nearest power of two for other values)."""
    pal = _head_palette()
    if h in pal:
        return pal[h]
    nearest = min(HEADS_ALL, key=lambda k: abs(k.bit_length() - int(h).bit_length()))
    return pal[nearest]


def done(fig):
    """Lay out ``fig`` and detach it from pyplot: a notebook cell ending with the returned Figure shows it once."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    plt.close(fig)
    return fig


def stacked(size: tuple[float, float], rows: tuple[float, ...]):
    """A figure of ``size`` with one column of axes of relative heights ``rows`` (panels and legend rows)."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=size)
    grid = fig.add_gridspec(len(rows), 1, height_ratios=rows)
    return fig, [fig.add_subplot(grid[i]) for i in range(len(rows))]


def legend_row(lax, ax, ncol: int = 1) -> None:
    """``ax``'s legend drawn in ``lax``, an axes of its own (no frame, no ticks) under it: clear of data and labels."""
    lax.axis("off")
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        lax.legend(handles, labels, loc="center", fontsize=MIN_FONT_PT, frameon=False, ncol=ncol)


def errorbar_curve(ax, g, **kw) -> None:
    """Rows of :func:`rgr.results.thresholds.curves` (mean, lo, hi) against D_K, with their intervals."""
    import numpy as np

    g = g.sort_values("D_K")
    err = np.vstack([g["mean"] - g["lo"], g["hi"] - g["mean"]])
    ax.errorbar(g["D_K"], g["mean"], yerr=np.nan_to_num(err), marker="o", ms=3.5, lw=1.4, capsize=2, **kw)


def nothing_to_draw(what: str, ax=None):
    """Say on ``ax`` that there is nothing to draw, and why (no ticks, no axis); without ``ax``, on a small figure of
    its own. The figure either way (every chapter's one "nothing to draw" figure)."""
    if ax is None:
        import matplotlib.pyplot as plt

        set_style()
        _, ax = plt.subplots(figsize=fig_size(6, 1.6))
    ax.text(0.5, 0.5, what, ha="center", va="center", wrap=True, fontsize=10, transform=ax.transAxes)
    ax.set_axis_off()
    return ax.figure


# ---------------------------------------------------------------------------- is every text readable? (issue 47)


_TOLERANCE_PX = 1.0  # at the figure's dpi: anti-aliasing fringes and touching boxes are not overlaps


@dataclass(frozen=True)
class _Box:
    """One text's box in display pixels: what it says (for the message), its extent, and what clips it (or None)."""

    what: str
    bbox: Bbox
    clip: Bbox | None


def _shown(t: Text) -> bool:
    return t.get_visible() and bool(t.get_text().strip()) and t.get_alpha() != 0


def _ticks(axis) -> list[Text]:
    """The tick labels matplotlib draws on ``axis`` (those of ticks inside the view), both sides."""
    out = []
    for tick in axis._update_ticks():  # the ticks drawn: inside the view interval
        out += [lab for lab, on in ((tick.label1, tick.label1.get_visible()), (tick.label2, tick.label2.get_visible()))
                if on and lab.get_text().strip()]
    return out


def _name(kind: str, t: Text) -> str:
    return f"{kind} {t.get_text().strip()[:40]!r}"


def _text_boxes(fig: Figure) -> list[_Box]:
    """Every text box of ``fig`` as drawn (the figure is drawn first, with its own renderer)."""
    fig.draw_without_rendering()  # lays out ticks and tight layouts with the renderer below, draws no pixels
    r = fig._get_renderer()  # the figure's own (Agg) renderer, at the figure's dpi
    boxes: list[_Box] = []

    seen: set[int] = set()

    def add(kind: str, t: Text) -> None:
        if _shown(t) and id(t) not in seen:
            seen.add(id(t))
            clip = t.get_clip_box() if t.get_clip_on() and t.get_clip_box() is not None else None
            boxes.append(_Box(_name(kind, t), t.get_window_extent(r), clip))

    for ax in fig.axes:
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title):
            add("title", t)
        for axis, n in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if not (ax.axison and axis.get_visible()):  # ax.axis("off") draws no axis
                continue
            add(f"{n}-label", axis.label)
            add(f"{n} offset", axis.offsetText)
            for t in _ticks(axis):
                add(f"{n} tick", t)
        for t in ax.texts:
            add("text", t)
        leg = ax.get_legend()
        if leg is not None and leg.get_visible():
            boxes.append(_Box("legend", leg.get_window_extent(r), None))
    if getattr(fig, "_suptitle", None) is not None:
        add("suptitle", fig._suptitle)
    for t in fig.texts:
        add("figure text", t)
    for leg in fig.legends:
        if isinstance(leg, Legend) and leg.get_visible():
            boxes.append(_Box("figure legend", leg.get_window_extent(r), None))
    return boxes


def _overlap(a: Bbox, b: Bbox) -> bool:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > _TOLERANCE_PX and h > _TOLERANCE_PX


def _inside(a: Bbox, outer: Bbox) -> bool:
    t = _TOLERANCE_PX
    return a.x0 >= outer.x0 - t and a.y0 >= outer.y0 - t and a.x1 <= outer.x1 + t and a.y1 <= outer.y1 + t


def text_problems(fig: Figure, tight: bool | None = None) -> list[str]:
    """What is unreadable in ``fig``, one line each: pairs of overlapping text boxes, texts cut by the axes that
    clip them, and (unless the figure is saved with a tight box, ``tight``; default: ``savefig.bbox`` is "tight")
    texts that leave the figure. An empty list: every text stands clear."""
    import matplotlib as mpl

    if tight is None:
        tight = mpl.rcParams["savefig.bbox"] == "tight"
    boxes = _text_boxes(fig)
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if _overlap(a.bbox, b.bbox):
                out.append(f"{a.what} overlaps {b.what}")
        if a.clip is not None and not _inside(a.bbox, a.clip):
            out.append(f"{a.what} is cut by the axes that clip it")
        if not tight and not _inside(a.bbox, fig.bbox):
            out.append(f"{a.what} leaves the figure")
    return out
