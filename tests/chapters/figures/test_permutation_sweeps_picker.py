"""rgr.chapters.figures.permutation_sweeps.figure_picker: one option and one image per figure, the first shown, names
escaped, deterministic HTML, bad input named; and the chapter's per-cell F1 figures it shows."""

import base64
import re
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from rgr.chapters.figures.permutation_sweeps import (
    f1_curves_per_cell,  # noqa: E402
    figure_picker,  # noqa: E402
)
from rgr.chapters.style import shown_png  # noqa: E402


class _Parsed(HTMLParser):
    """The picker's options (text, selected) and images (attributes), as a browser would read them."""

    def __init__(self, text: str):
        super().__init__()
        self.options, self.images, self.selects, self._opt = [], [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "option":
            self._opt = {"text": "", "selected": "selected" in a, "value": a.get("value")}
        elif tag == "img":
            self.images.append(a)
        elif tag == "select":
            self.selects.append(a)

    def handle_data(self, data):
        if self._opt is not None:
            self._opt["text"] += data

    def handle_endtag(self, tag):
        if tag == "option":
            self.options.append(self._opt)
            self._opt = None


def _fig(width=4.0, color="C0"):
    fig, ax = plt.subplots(figsize=(width, 3.0))
    ax.plot([0, 1], [0, 1], color=color)
    return fig


@pytest.fixture
def figures():
    figs = {"a": _fig(), "m = 64, d_model = <16> & \"x\"": _fig(5.0, "C1"), "c": _fig(3.0, "C2")}
    yield figs
    for f in figs.values():
        plt.close(f)


def test_one_option_and_one_image_per_figure_first_shown(figures):
    p = _Parsed(figure_picker(figures, "cell").data)
    assert [o["text"] for o in p.options] == list(figures)  # escaped in the HTML, read back as given
    assert [o["value"] for o in p.options] == ["0", "1", "2"]
    assert [o["selected"] for o in p.options] == [True, False, False]
    assert len(p.images) == 3
    assert ["hidden" in im for im in p.images] == [False, True, True]  # the static fallback: the first
    assert [im["alt"] for im in p.images] == list(figures)
    # shown at the drawn size, but never wider than the style's limit
    assert [im["width"] for im in p.images] == [str(round(shown_png(f, 150)[1])) for f in figures.values()]
    MAX_SHOWN_PX = 480  # the widest a figure is shown (CSS px)
    assert all(int(im["width"]) <= MAX_SHOWN_PX for im in p.images) and int(p.images[2]["width"]) < 320  # 3-in figure
    wide = _fig(8.0)
    assert MAX_SHOWN_PX - 1 <= int(_Parsed(figure_picker({"w": wide}, "cell").data).images[0]["width"]) <= MAX_SHOWN_PX
    plt.close(wide)
    for im in p.images:
        assert im["src"].startswith("data:image/png;base64,")
        assert base64.b64decode(im["src"].split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"
    assert len({im["src"] for im in p.images}) == 3  # each figure its own picture
    assert len(p.selects) == 1 and "selectedIndex" in p.selects[0]["onchange"]


def test_names_and_label_are_escaped(figures):
    text = figure_picker(figures, "<b>cell</b>").data
    assert "<16>" not in text and "&lt;16&gt; &amp; &quot;x&quot;" in text
    assert "<b>" not in text and "&lt;b&gt;cell&lt;/b&gt;" in text


def test_html_is_deterministic(figures):
    """Same figures, same bytes: nbval compares the chapter's output between executions."""
    assert figure_picker(figures, "cell").data == figure_picker(figures, "cell").data
    ids = re.findall(r'id="([^"]+)"', figure_picker(figures, "cell").data)
    assert ids and all(i.startswith("rgr-picker-") for i in ids)
    assert re.findall(r'id="([^"]+)"', figure_picker(figures, "other").data) != ids  # two pickers, two ids


def test_bad_input_names_the_parameter(figures):
    with pytest.raises(ValueError, match="figures"):
        figure_picker({}, "cell")
    with pytest.raises(ValueError, match="figures"):
        figure_picker([_fig()], "cell")
    with pytest.raises(TypeError, match="figures"):
        figure_picker({"a": "not a figure"}, "cell")
    with pytest.raises(TypeError, match="figures"):
        figure_picker({1: figures["a"]}, "cell")
    with pytest.raises(ValueError, match="label"):
        figure_picker(figures, "  ")
    with pytest.raises(ValueError, match="dpi"):
        figure_picker(figures, "cell", dpi=0)


def test_f1_curves_per_cell_one_figure_per_cell_in_order():
    rows = [dict(m=m, d_model=d, r=r, h=h, D_K=dk, seed=s, test_f1=float(dk >= 8))
            for m, d, r in [(128, 16, 1), (64, 16, 1), (64, 32, 2)]
            for h in (1, 2) for dk in (2, 8, 32) for s in (0, 1)]
    figs = f1_curves_per_cell(pd.DataFrame(rows))
    try:
        assert list(figs) == ["m = 64, d_model = 16", "m = 64, d_model = 32, r = 2", "m = 128, d_model = 16"]
        assert all(len([a for a in f.axes if a.get_visible() and a.axison]) == 1 for f in figs.values())
        assert figs["m = 128, d_model = 16"].axes[0].get_title().startswith("m=128")
    finally:
        for f in figs.values():
            plt.close(f)
    with pytest.raises(ValueError, match="runs"):
        f1_curves_per_cell(pd.DataFrame(rows).iloc[:0])
