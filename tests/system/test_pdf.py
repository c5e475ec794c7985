"""`python3 tasks.py pdf`: the whole book as one PDF, with every verdict of the replication table in its text.

Builds from the committed outputs (``pdf --committed``: no chapter executes; about a minute) and prints with
headless Chromium; the PDF's text is read with pdftotext (Debian: ``apt-get install chromium poppler-utils``).
Skipped, with the reason, where either is missing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests import ROOT
from tests.system.site_check import find_chromium  # noqa: E402

pytestmark = [
    pytest.mark.site,
    pytest.mark.skipif(find_chromium() is None, reason="no Chromium to print the book (apt-get install chromium)"),
    pytest.mark.skipif(shutil.which("pdftotext") is None, reason="no pdftotext (apt-get install poppler-utils)"),
]


class _Tables(HTMLParser):
    """Every HTML table of a page as rows of cell texts (header rows included)."""

    def __init__(self):
        super().__init__()
        self.tables, self._cell, self._skip = [], None, 0  # _skip: depth inside a verdict's cause (not its label)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables and self.tables[-1]:
            self._cell = []
        elif self._cell is not None:
            self._cell.append(" ")  # an element inside a cell (the verdict's label, its cause) is a word apart
            if tag not in ("br", "img", "wbr", "hr") and (
                    self._skip or "rgr-verdict-cause" in (dict(attrs).get("class") or "")):
                self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif self._cell is not None:
            self._cell.append(" ")
            self._skip = max(0, self._skip - 1) if tag not in ("br", "img", "wbr", "hr") else self._skip

    def handle_data(self, data):
        if self._cell is not None and not self._skip:
            self._cell.append(data)


def verdict_labels(notebook: Path) -> list[str]:
    """The verdict column of every table in ``notebook``'s outputs that has one, in row order."""
    import nbformat

    labels = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for out in cell.get("outputs", []):
            html = out.get("data", {}).get("text/html", "")
            parser = _Tables()
            parser.feed("".join(html) if isinstance(html, list) else html)
            for rows in parser.tables:
                head = next((r for r in rows if any(c.lower() == "verdict" for c in r)), None)
                if head is None:
                    continue
                col = [c.lower() for c in head].index("verdict")
                labels += [r[col] for r in rows[rows.index(head) + 1:] if len(r) == len(head) and r[col]]
    return labels


@pytest.fixture(scope="module")
def pdf_text():
    env = {**os.environ, "RGR_VENV": str(Path(sys.executable).parent.parent)}
    res = subprocess.run([sys.executable, str(ROOT / "tasks.py"), "pdf", "--committed"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    pdf = ROOT / "_build" / "pdf" / "rgr-book.pdf"
    text = subprocess.run(["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return " ".join(text.replace("\u00ad", "").split())


def test_the_pdf_holds_every_chapter(pdf_text):
    import nbformat

    for p in sorted((ROOT / "book").glob("*.ipynb")):
        title = next(c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown")
        heading = re.match(r"#\s+(.+)", title.strip()).group(1)
        words = " ".join(re.sub(r"[*_`$\\]", "", heading).split()[:3])
        assert words in pdf_text, f"{p.name}: its title ({words!r}) is not in the PDF"


def test_the_pdf_shows_the_verdict_of_every_row_of_the_replication_table(pdf_text):
    labels = verdict_labels(ROOT / "book" / "replication.ipynb")
    assert len(labels) >= 10  # the replication table has a verdict per claim
    # in the table's order: each row's verdict is printed (not cut at the right margin), after the one before. A
    # label of two words may wrap inside its cell, and then the text extracted interleaves the cells beside it
    pos = pdf_text.find("Does it replicate?")
    assert pos >= 0
    for i, label in enumerate(labels):
        found = re.compile(r"\s+(?:\S+\s+){0,6}?".join(map(re.escape, label.split()))).search(pdf_text, pos)
        assert found, f"row {i}'s verdict {label!r} is not in the PDF after row {i - 1}'s"
        pos = found.end()


def test_the_pdf_prints_typeset_maths_not_its_source(pdf_text):
    # MathJax has typeset every formula before Chromium prints: no TeX delimiters or commands left in the text
    assert "\\(" not in pdf_text and "\\frac" not in pdf_text and "$$" not in pdf_text


# ----------------------------------------------------------------------------- a PDF a reader can navigate (issue 47)

PDF = ROOT / "_build" / "pdf" / "rgr-book.pdf"


def outline(pdf: Path) -> list[str]:
    """The titles of the PDF's bookmarks (its outline), read with poppler's pdftohtml."""
    xml = subprocess.run(["pdftohtml", "-xml", "-i", "-stdout", "-q", str(pdf)], capture_output=True, text=True,
                         check=True).stdout
    block = re.search(r"<outline>.*</outline>", xml, re.S)
    return [" ".join(re.sub(r"<[^>]+>", "", t).split()) for t in re.findall(r"<item[^>]*>(.*?)</item>", block.group(0),
                                                                            re.S)] if block else []


def pages(pdf: Path) -> list[tuple[str, int]]:
    """Per page: its text and how many images it draws (pdftotext, pdfimages)."""
    text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    texts = text.split("\f")[:-1] if text.endswith("\f") else text.split("\f")
    listing = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True, check=True).stdout
    images: dict[int, int] = {}
    for line in listing.splitlines()[2:]:
        page = line.split()[0]
        images[int(page)] = images.get(int(page), 0) + 1
    return [(t, images.get(i + 1, 0)) for i, t in enumerate(texts)]


def _chapter_titles() -> list[str]:
    import nbformat

    out = []
    for p in sorted((ROOT / "book").glob("*.ipynb")):
        title = next(c.source for c in nbformat.read(p, as_version=4).cells if c.cell_type == "markdown")
        out.append(" ".join(re.sub(r"[*_`$\\]", "", re.match(r"#\s+(.+)", title.strip()).group(1)).split()))
    return out


def test_the_outline_has_every_chapter(pdf_text):
    marks = outline(PDF)
    assert marks, "the PDF has no outline (bookmarks): Chromium's --generate-pdf-document-outline"
    for title in _chapter_titles():
        assert any(title[:25] in m for m in marks), f"no bookmark for the chapter {title!r}"


def test_no_page_is_blank_and_every_page_but_the_first_is_numbered(pdf_text):
    got = pages(PDF)
    blank = [i + 1 for i, (t, n) in enumerate(got) if not t.strip() and not n]
    assert not blank, f"blank pages: {blank}"
    unnumbered = [i + 1 for i, (t, _) in enumerate(got[1:], start=1) if t.strip().split()[-1:] != [str(i + 1)]]
    assert not unnumbered, f"pages without their number at the foot: {unnumbered[:10]}"


def test_the_title_page_names_version_commit_and_date(pdf_text):
    first = pages(PDF)[0][0]
    version = re.search(r'__version__\s*=\s*"([^"]+)"', (ROOT / "rgr" / "__init__.py").read_text()).group(1)
    assert f"Version {version}" in first and "commit" in first and re.search(r"\d{4}-\d{2}-\d{2}", first)
    assert "Contents" in pages(PDF)[1][0]
    assert "Show code cell source" not in pdf_text  # no instruction only the screen can follow


def test_no_figure_splits_over_two_pages(pdf_text):
    """A figure cut by a page break is drawn twice, once on each page: the same image object on two consecutive
    pages (the same image shown in two chapters is one object on pages far apart, and no split)."""
    listing = subprocess.run(["pdfimages", "-list", str(PDF)], capture_output=True, text=True, check=True).stdout
    where: dict[str, set[int]] = {}
    for line in listing.splitlines()[2:]:
        f = line.split()
        where.setdefault(f[10], set()).add(int(f[0]))
    split = {obj: sorted(p) for obj, p in where.items() if any(q + 1 in p for q in p)}
    assert not split, f"images drawn on more than one page (object: pages): {split}"
