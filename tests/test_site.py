"""The built site as a reader sees it (issue 20): maths typeset, images present, nothing cut off.

Builds the book from the chapters' committed outputs (execution off, so it costs seconds; `tasks.py book`
executes them) and renders pages in headless Chromium at desktop and phone width. Skipped, with the
reason, where no Chromium is installed (Debian: `apt-get install chromium`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from site_check import WIDTHS, build_committed, check_page, find_chromium

CHROMIUM = find_chromium()
pytestmark = [
    pytest.mark.site,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium to render the site (apt-get install chromium)"),
]

# the pages with the most maths, a chapter whose display maths sat mid-paragraph, and the new reference pages
PAGES = ["intro", "constructions", "glossary", "bibliography"]


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    if not (Path(sys.executable).with_name("jupyter-book")).exists():
        pytest.skip("jupyter-book is not installed beside this Python")
    return build_committed(tmp_path_factory.mktemp("site"))


def test_offline_mathjax_and_tables_are_in_the_site(html):
    assert (html / "_static" / "mathjax" / "tex-chtml.js").is_file()
    page = (html / "book" / "constructions.html").read_text()
    assert 'src="../_static/mathjax/tex-chtml.js"' in page and "cdn.jsdelivr" not in page
    assert (html / "data" / "base.csv").is_file() and (html / "data" / "SCHEMA.md").is_file()


@pytest.mark.parametrize("width", sorted(WIDTHS))
@pytest.mark.parametrize("name", PAGES)
def test_page_renders(html, name, width):
    rep = check_page(html / "book" / f"{name}.html", CHROMIUM, width)
    assert rep.problems == []
    if name in ("intro", "constructions", "glossary"):
        assert rep.math > 0  # maths was typeset (by the offline MathJax: file://, no network needed)


def test_the_check_sees_raw_latex(html, tmp_path):
    """The check can fail: a literal `$` and a raw \\Omega( (what the broken §2 maths looked like) are reported."""
    page = html / "book" / "glossary.html"
    bad = page.with_name("broken-copy.html")
    bad.write_text(page.read_text().replace("</article>", "<p>hence $D_K = \\Omega(m)$, so</p></article>", 1))
    try:
        rep = check_page(bad, CHROMIUM, "desktop")
    finally:
        bad.unlink()
    assert any("raw LaTeX" in p for p in rep.problems)


def test_the_figure_picker_switches(html):
    """permutation_sweeps' interactive figure: the first cell shows at load; choosing another shows it alone."""
    from site_check import drive_picker

    page = html / "book" / "permutation_sweeps.html"
    first = drive_picker(page, CHROMIUM, 0)
    assert first is not None and len(first) > 1 and first == [True] + [False] * (len(first) - 1)
    last = drive_picker(page, CHROMIUM, len(first) - 1, "phone")
    assert last == [False] * (len(first) - 1) + [True]
    assert drive_picker(html / "book" / "intro.html", CHROMIUM, 0) is None  # no picker there
