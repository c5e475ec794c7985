"""Words of the verdict linked to the glossary (issue 47): every term of TERMS is defined in book/glossary.md under
the anchor link_terms points to, and only its first use outside tags and links is linked."""

from __future__ import annotations

import re

from rgr.results.replication.glossary_links import TERMS, anchor, link_terms
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
