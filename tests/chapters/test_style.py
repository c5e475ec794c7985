"""Figures without overprinted or cut text (issue 47): rgr.chapters.style measures every text box with
matplotlib's own renderer (rgr.chapters.style.text_problems); every figure a chapter shows records the count of
problems in its PNG (rgr.chapters.style.shown_png), and every committed chapter figure must record none.

The check has teeth: the synthetic figures below fail it, and so did the book's old Fig. 9 (Algorithm 2's width
sweep: the y tick labels of its log axis stacked, the annotation over the axes) and Fig. 34 (the verdict chapter's
law figure: the legend over the y tick labels, the m labels printed over each other); see the commit that added
this test for the measurement of the old figure code.
"""

from __future__ import annotations

import base64
import io
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from PIL import Image  # noqa: E402

from rgr.chapters.style import shown_png, text_problems  # noqa: E402
from tests import ROOT  # noqa: E402

PROBLEMS_KEY = "rgr-text-problems"  # the PNG text chunk that counts a figure's overlapping or cut texts

CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))


@pytest.fixture
def fig():
    f, ax = plt.subplots(figsize=(4, 3))
    yield f, ax
    plt.close(f)


def test_a_clean_figure_has_no_problem(fig):
    f, ax = fig
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="upper left")
    f.tight_layout()
    assert text_problems(f) == []
    ax.legend(loc="center left", bbox_to_anchor=(-0.3, 0.5))  # the legend is measured: moved over the ticks
    assert any(p.startswith("legend") or "overlaps legend" in p for p in text_problems(f))


def test_texts_printed_over_each_other_fail(fig):
    f, ax = fig
    ax.annotate("128", (0.5, 0.5))
    ax.annotate("256", (0.51, 0.505))
    assert any("overlaps" in p and "'128'" in p and "'256'" in p for p in text_problems(f))


def test_stacked_tick_labels_fail(fig):
    f, ax = fig
    ax.set_yticks(range(40))
    ax.set_yticklabels([f"label {i}" for i in range(40)])
    assert any(p.startswith("y tick") and "overlaps y tick" in p for p in text_problems(f))


def test_a_legend_over_tick_labels_fails(fig):
    f, ax = fig
    ax.plot([0, 1], [0, 1], label="a rather long legend entry")
    ax.set_yticks([0, 0.5, 1])
    ax.legend(loc="center left", bbox_to_anchor=(-0.3, 0.5))
    assert any("legend" in p and "y tick" in p for p in text_problems(f))


def test_text_leaving_the_figure_fails_unless_saved_tight(fig):
    f, ax = fig
    ax.text(1.3, 0.5, "far right", transform=ax.transAxes)
    assert any("leaves the figure" in p for p in text_problems(f, tight=False))
    assert not any("leaves the figure" in p for p in text_problems(f, tight=True))


def test_clipped_text_cut_by_its_axes_fails(fig):
    f, ax = fig
    ax.text(0.95, 0.5, "cut at the edge", transform=ax.transAxes, clip_on=True)
    assert any("cut by the axes" in p for p in text_problems(f))


def test_the_png_records_the_count(fig):
    f, ax = fig
    ax.annotate("a", (0.5, 0.5))
    ax.annotate("a", (0.5, 0.5))
    assert Image.open(io.BytesIO(shown_png(f, 100)[0])).text[PROBLEMS_KEY] == "1"


# ----------------------------------------------------------------------------- the committed chapters


def _pngs(nb: dict):
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            for key, value in o.get("data", {}).items():
                if key.endswith("image/png"):
                    name = o.get("metadata", {}).get("scrapbook", {}).get("name", f"cell {i}")
                    yield name, Image.open(io.BytesIO(base64.b64decode("".join(value))))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_committed_chapter_figure_has_readable_text(chapter):
    """Every figure of the committed outputs was measured when drawn and had no overlapping or cut text; a figure
    drawn before the measurement existed fails too (re-execute its chapter: python3 tasks.py execute)."""
    nb = json.loads(chapter.read_text(encoding="utf-8"))
    bad = {name: im.text.get(PROBLEMS_KEY, "not measured") for name, im in _pngs(nb)
           if im.text.get(PROBLEMS_KEY) != "0"}
    assert not bad, (f"{chapter.name}: figures with overlapping or cut text (count; "
                     f"rgr.chapters.style.text_problems(fig) names them) or never measured: {bad}")
