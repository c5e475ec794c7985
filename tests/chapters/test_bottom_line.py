"""The bottom line (issue 47): a box of three sentences computed from the verdict rows opens the introduction and
chapter *Does it replicate?*; when a verdict changes, the box changes; both pages carry the same box, first."""

from __future__ import annotations

import json
import math
import re

import pytest

from rgr.chapters.bottom_line import bottom_line, bottom_line_html, link_terms, note_edges
from rgr.results.replication.rows import ClaimRow, Reading
from rgr.results.replication.verdicts import CAUSES, NOT_TESTABLE_CAUSES, Verdict
from tests import ROOT
from tests.chapters.cause_rows import row_of

NAN = math.nan
# the box's plain words for some causes (after "n because")
PLAIN = {"log_base": "the paper's log has no stated base, and in the other base its constant agrees",
         "paper_table1": "the paper's fit cannot be rebuilt from its own Table 1",
         "unexplained": "no cause shows in the data",
         "not_the_task": "the book's runs are not the paper's task (stand-in embeddings, a size that does not "
                         "compress)"}


def _row(key: str, status: str, cause: str = "", near: bool = False, readings=()) -> ClaimRow:
    return ClaimRow(key, "b", "[0, 1]", "basis", Verdict(status, f"why {key}", near, cause), 1.0, 0.0, 2.0,
                    readings=tuple(readings))


def _rows() -> list[ClaimRow]:
    return [_row("law_slope_all", "deviates", readings=[Reading("with log2", 1.2, 1.1, 1.3, True)]),
            _row("law_r2_all", "agrees"),
            _row("heads_slope", "deviates", "paper_table1"),
            _row("dk_range", "deviates"),
            _row("softmax_advantage", "agrees"),
            _row("softmax_shift", "agrees"),
            _row("gpt2_best", "not testable", "not_the_task")]


def test_the_sentences_count_what_the_rows_say():
    b = bottom_line(_rows())
    assert b.replicates.startswith("3 of the paper's 7 claims agree, 1 with the paper's value inside the book's noise "
                                   "interval, the rest by their row's stated rule")
    assert "2 of 2 on softmax" in b.replicates and "1 of 4 on max-over-heads" in b.replicates
    assert b.deviates.startswith("3 of 7 deviate")
    for cause in ("log_base", "paper_table1", "unexplained"):
        assert f"1 because {PLAIN[cause]}" in b.deviates
    assert b.untested == f"1 of 7 are not testable here: 1 because {PLAIN['not_the_task']}."


def test_the_box_changes_when_a_verdict_changes():
    rows = _rows()
    before = bottom_line_html(rows)
    rows[3] = _row("dk_range", "agrees")
    after = bottom_line(rows)
    assert bottom_line_html(rows) != before
    assert after.replicates.startswith("4 of the paper's 7 claims agree, 1 with")  # dk_range: a rule, no number
    assert after.deviates.startswith("2 of 7 deviate")
    assert "unexplained" not in after.deviates and PLAIN["unexplained"] not in after.deviates


def test_only_a_number_inside_the_interval_counts_as_the_papers_value_inside():
    inside = [_row("law_r2_all", "agrees")]  # the paper's 0.944 in [0, 2]
    assert bottom_line(inside).replicates.startswith("1 of the paper's 1 claims agree, the paper's value inside")
    off = [ClaimRow("law_r2_all", "b", "[0, 0.5]", "basis", Verdict("agrees", "why"), 0.2, 0.0, 0.5)]
    assert "each by its row's stated rule" in bottom_line(off).replicates  # 0.944 outside [0, 0.5]
    rule = [_row("softmax_shift", "agrees")]  # no number in the paper
    assert "each by its row's stated rule" in bottom_line(rule).replicates


def test_causes_are_listed_most_frequent_first():
    rows = [_row("law_r2_all", "deviates"), _row("dk_range", "deviates"), _row("heads_slope", "deviates",
                                                                               "paper_table1")]
    b = bottom_line(rows)
    assert b.deviates.index(PLAIN["unexplained"]) < b.deviates.index(PLAIN["paper_table1"])
    assert "None of the 3" not in b.deviates and b.untested == "Every one of the 3 claims could be tested here."


def _words(cause: str) -> str:
    """What the box says after "1 because" for one row of ``cause``."""
    b = bottom_line([row_of(cause)])
    said = b.untested if cause in NOT_TESTABLE_CAUSES else b.deviates
    return said.split("1 because ", 1)[1].removesuffix(".")


def test_every_cause_has_plain_words_and_no_empty_rows():
    words = {c: _words(c) for c in CAUSES}
    assert all(w and w != c for c, w in words.items()) and len(set(words.values())) == len(CAUSES)
    assert {c: words[c] for c in PLAIN} == PLAIN
    assert "on max-over-heads, permutation graphs" in bottom_line(_rows()).replicates  # a section's title, plainly
    with pytest.raises(ValueError, match="rows"):
        bottom_line([])


def test_the_html_links_the_glossary_terms_it_uses():
    html = bottom_line_html(_rows())
    assert html.count("<span data-part=") == 3
    assert 'href="glossary.html#term-noise-interval">noise interval</a>' in html
    assert 'href="glossary.html#term-not-testable">not testable</a>' in html


# ----------------------------------------------------------------------------- the pages

BOX = re.compile(r"^:::\{admonition\} The bottom line\n.*?^:::$", re.S | re.M)


def _chapter_markdown() -> str:
    nb = json.loads((ROOT / "book" / "replication.ipynb").read_text(encoding="utf-8"))
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def _box(text: str) -> str:
    m = BOX.search(text)
    assert m, "no bottom-line box (':::{admonition} The bottom line')"
    return re.sub(r"^:doc: .*\n", "", m.group(0), flags=re.M)


def test_the_same_box_opens_the_intro_and_the_verdict_chapter():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    chapter = _chapter_markdown()
    assert _box(intro) == _box(chapter)
    for text in (intro, chapter):
        box = BOX.search(text).start()
        assert box < text.index("\n## "), "the box must come before the page's first section"
        assert "{glue} bottom_line" in _box(text)


def test_the_committed_chapter_glues_the_box_from_its_rows():
    nb = json.loads((ROOT / "book" / "replication.ipynb").read_text(encoding="utf-8"))
    outs = [o for c in nb["cells"] for o in c.get("outputs", [])
            if o.get("metadata", {}).get("scrapbook", {}).get("name") == "bottom_line"]
    assert outs, "replication.ipynb does not glue bottom_line: re-execute it"
    data = outs[0]["data"]
    html = "".join(data.get("text/html") or data["application/papermill.record/text/html"])
    counts = {k: int(v) for k, v in re.findall(r'data-part="([a-z-]+)">(\d+) of', html)}
    glued = {o["metadata"]["scrapbook"]["name"]: "".join(o["data"].get("application/papermill.record/text/plain", ""))
             for c in nb["cells"] for o in c.get("outputs", []) if o.get("metadata", {}).get("scrapbook")}
    assert counts == {"agrees": int(glued["n_agrees"]), "deviates": int(glued["n_deviates"]),
                      "not-testable": int(glued["n_not_testable"])}


def test_no_bold_paragraph_on_the_intro_runs_longer_than_a_line():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    for bold in re.findall(r"\*\*(.+?)\*\*", intro, re.S):
        assert len(bold) <= 80, f"bold text longer than a line: {bold[:60]}..."


# ----------------------------------------------------------------------------- the glossary links (issue 47): every
# term the verdict's sentences use is linked to an entry of book/glossary.md under the anchor link_terms points to,
# and only its first use outside tags and links

# every phrase the verdict's sentences link, as they write it
PHRASES = ("noise interval", "precondition cells", "base cells", "λ = 8 diagonal", "F1 target", "optimistic",
           "conservative", "Table 1 arithmetic", "near miss", "not testable", "step cutoff", "head-count line")


def anchor(term: str) -> str:
    """The id Sphinx gives a glossary entry ``term`` (docutils' ``make_id``: "term-", then the term lower-cased with
    every run of other characters than letters and digits one hyphen)."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def linked(text: str) -> str:
    """The anchor link_terms links ``text`` (one phrase of the verdict's sentences) to."""
    return re.search(r'glossary.html#([^"]+)"', link_terms(f"<p>{text}</p>")).group(1)


def test_every_linked_term_is_a_glossary_entry():
    glossary = (ROOT / "book" / "glossary.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^([^\s`:#(][^\n]*)\n  \S", glossary, re.M))
    links = re.findall(r'href="glossary.html#([^"]+)"', link_terms("<p>" + ", ".join(PHRASES) + "</p>"))
    assert len(links) == len(PHRASES), "every phrase is linked"
    missing = sorted(set(links) - {anchor(e) for e in entries})
    assert not missing, f"book/glossary.md defines no entry for {missing}"


def test_anchor_is_what_sphinx_makes_of_a_term():
    assert linked("noise interval") == "term-noise-interval"
    assert linked("optimistic") == "term-optimistic-d-k"  # the term "optimistic D_K*"
    assert linked("λ = 8 diagonal") == "term-lambda-8-diagonal"


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
