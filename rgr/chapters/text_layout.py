"""Is every text of a figure readable? Text boxes measured by matplotlib's own renderer (issue 47).

A chapter figure fails when two of its text boxes overlap (tick labels stacked on each other, a legend over tick
labels or an axis label, annotations printed over each other) or when a text leaves the figure (cut at the
figure's edge, or cut by the axes that clip it). :func:`text_problems` lists them in words; every figure a chapter
shows is measured when it is drawn (:func:`rgr.chapters.style.shown_png`), which records the count in the PNG
and warns, so a chapter with such a figure fails its execution and nbval. The test is
tests/chapters/test_text_layout.py.

Boxes: every visible, non-empty text (titles, axis labels, the tick labels matplotlib draws, the axis offset
text, annotations, figure texts) and each legend as one box (its own texts are inside it by design).
Two boxes overlap when their intersection is more than :data:`TOLERANCE_PX` pixels in both directions.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.transforms import Bbox

__all__ = ["Box", "TOLERANCE_PX", "text_boxes", "text_problems"]

TOLERANCE_PX = 1.0  # at the figure's dpi: anti-aliasing fringes and touching boxes are not overlaps


@dataclass(frozen=True)
class Box:
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


def text_boxes(fig: Figure) -> list[Box]:
    """Every text box of ``fig`` as drawn (the figure is drawn first, with its own renderer)."""
    fig.draw_without_rendering()  # lays out ticks and tight layouts with the renderer below, draws no pixels
    r = fig._get_renderer()  # the figure's own (Agg) renderer, at the figure's dpi
    boxes: list[Box] = []

    seen: set[int] = set()

    def add(kind: str, t: Text) -> None:
        if _shown(t) and id(t) not in seen:
            seen.add(id(t))
            clip = t.get_clip_box() if t.get_clip_on() and t.get_clip_box() is not None else None
            boxes.append(Box(_name(kind, t), t.get_window_extent(r), clip))

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
            boxes.append(Box("legend", leg.get_window_extent(r), None))
    if getattr(fig, "_suptitle", None) is not None:
        add("suptitle", fig._suptitle)
    for t in fig.texts:
        add("figure text", t)
    for leg in fig.legends:
        if isinstance(leg, Legend) and leg.get_visible():
            boxes.append(Box("figure legend", leg.get_window_extent(r), None))
    return boxes


def _overlap(a: Bbox, b: Bbox) -> bool:
    w = min(a.x1, b.x1) - max(a.x0, b.x0)
    h = min(a.y1, b.y1) - max(a.y0, b.y0)
    return w > TOLERANCE_PX and h > TOLERANCE_PX


def _inside(a: Bbox, outer: Bbox) -> bool:
    t = TOLERANCE_PX
    return a.x0 >= outer.x0 - t and a.y0 >= outer.y0 - t and a.x1 <= outer.x1 + t and a.y1 <= outer.y1 + t


def text_problems(fig: Figure, tight: bool | None = None) -> list[str]:
    """What is unreadable in ``fig``, one line each: pairs of overlapping text boxes, texts cut by the axes that
    clip them, and (unless the figure is saved with a tight box, ``tight``; default: ``savefig.bbox`` is "tight")
    texts that leave the figure. An empty list: every text stands clear."""
    import matplotlib as mpl

    if tight is None:
        tight = mpl.rcParams["savefig.bbox"] == "tight"
    boxes = text_boxes(fig)
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
