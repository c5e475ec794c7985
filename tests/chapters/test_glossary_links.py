"""Words of the verdict linked to the glossary (issue 47): every term the verdict's sentences use is linked to an
entry of book/glossary.md under the anchor link_terms points to, and only its first use outside tags and links."""

from __future__ import annotations

import re

from rgr.chapters.glossary_links import link_terms, note_edges
from tests import ROOT

# every phrase the verdict's sentences link, as they write it
PHRASES = ("noise interval", "precondition cells", "base cells", "λ = 8 diagonal", "F1 target", "optimistic",
           "conservative", "Table 1 arithmetic", "near miss", "not testable", "step cutoff", "head-count line")


def anchor(term: str) -> str:
    """The anchor link_terms links ``term`` to (a text of one word, "x", linked as that term)."""
    return re.search(r'glossary.html#([^"]+)"', link_terms("<p>x</p>", terms={"x": term})).group(1)


def test_every_linked_term_is_a_glossary_entry():
    glossary = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^([^\s`:#(][^\n]*)\n  \S", glossary, re.M))
    links = re.findall(r'href="glossary.html#([^"]+)"', link_terms("<p>" + ", ".join(PHRASES) + "</p>"))
    assert len(links) == len(PHRASES), "every phrase is linked"
    missing = sorted(set(links) - {anchor(e) for e in entries})
    assert not missing, f"book/glossary.md defines no entry for {missing}"


def test_anchor_is_what_sphinx_makes_of_a_term():
    assert anchor("noise interval") == "term-noise-interval"
    assert anchor("optimistic D_K*") == "term-optimistic-d-k"
    assert anchor("lambda = 8 diagonal") == "term-lambda-8-diagonal"


def test_only_the_first_use_outside_tags_and_links_is_linked():
    html = link_terms('<p title="noise interval"><a href="x">noise interval</a>, noise intervals, noise interval, '
                      'λ = 8 diagonal</p>')
    assert html.count('href="glossary.html#term-noise-interval"') == 1
    assert '<a class="rgr-term" href="glossary.html#term-noise-interval">noise intervals</a>' in html
    assert 'title="noise interval"' in html and '<a href="x">noise interval</a>' in html
    assert "#term-lambda-8-diagonal" in html
    assert link_terms("<p>nothing here</p>") == "<p>nothing here</p>"


def _noted(text: str) -> bool:
    """Whether :func:`note_edges` notes a verdict-table cell showing ``text``."""
    return 'class="rgr-vnote"' in note_edges(f'<td class="rgr-vbook">{text}</td>')


def test_points_on_an_end_of_their_interval_are_explained_in_place():
    assert _noted("1.0 [1.0, 1.08]") and _noted("0.389 [0.354, 0.391]") and _noted("4 [4, 4]")
    assert not _noted("1.5 [1.0, 2.0]") and not _noted("2048 [0.86, 0.87]")  # a number that is not the point
    assert _noted("[4, 18] [4, 18]") and _noted("0.389 (n = 5) [0.354, 0.391]")
    assert _noted("D_K*(4096) / D_K*(512) = 1.00 (law: 1.33) [1, 1.08]") and _noted("m = 128: 8 [8, 16]")
    assert not _noted("1.5 (n = 12) [1.0, 2.0]")
    html = ('<tr><td class="rgr-vbook" data-label="Book">0.389 (n = 5)<br><span class="rgr-vinterval">[0.354, 0.391]'
            '</span></td><td class="rgr-vbook">1.5 [1.0, 2.0]</td></tr>')
    out = note_edges(html)
    assert out.count('class="rgr-vnote"') == 1 and 'href="glossary.html#term-noise-interval"' in out
    assert not _noted("h = 16 0.0023; best h = 8 0.0028 [0.0016, 0.0029] vs [0.0022, 0.0034]")  # whose is whose?
