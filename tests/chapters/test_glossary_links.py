"""Words of the verdict linked to the glossary (issue 47): every term of TERMS is defined in book/glossary.md under
the anchor link_terms points to, and only its first use outside tags and links is linked."""

from __future__ import annotations

import re

from rgr.chapters.glossary_links import TERMS, anchor, link_terms
from tests import ROOT


def test_every_linked_term_is_a_glossary_entry():
    glossary = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^([^\s`:#(][^\n]*)\n  \S", glossary, re.M))
    missing = sorted(set(TERMS.values()) - entries)
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


def test_points_on_an_end_of_their_interval_are_explained_in_place():
    from rgr.chapters.glossary_links import edge_cells, note_edges, on_edge

    assert on_edge(1.0, 1.0, 1.08) and on_edge(0.389, 0.354, 0.391) and on_edge(4, 4, 4)
    assert not on_edge(1.5, 1.0, 2.0) and not on_edge(2048, 0.86, 0.87)  # a number that is not the interval's point
    assert edge_cells("[4, 18] [4, 18]") and edge_cells("0.389 (n = 5) [0.354, 0.391]")
    assert edge_cells("D_K*(4096) / D_K*(512) = 1.00 (law: 1.33) [1, 1.08]") and edge_cells("m = 128: 8 [8, 16]")
    assert not edge_cells("1.5 (n = 12) [1.0, 2.0]")
    html = ('<tr><td class="rgr-vbook" data-label="Book">0.389 (n = 5)<br><span class="rgr-vinterval">[0.354, 0.391]'
            '</span></td><td class="rgr-vbook">1.5 [1.0, 2.0]</td></tr>')
    out = note_edges(html)
    assert out.count('class="rgr-vnote"') == 1 and 'href="glossary.html#term-noise-interval"' in out
    from rgr.chapters.glossary_links import edge_cells as ec

    assert not ec("h = 16 0.0023; best h = 8 0.0028 [0.0016, 0.0029] vs [0.0022, 0.0034]")  # whose interval is whose?
