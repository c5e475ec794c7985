"""The verdict for a reader (the box that opens the introduction and chapter *Does it replicate?*, and the words of
both pages linked to the glossary, issue 47).

The bottom line: three sentences computed from the verdict rows, so that the box changes whenever a verdict does:
what replicates, per section of the paper; what deviates, with its causes in plain words; what cannot be tested
here, and why.

Nothing here is typed about a claim: the sections come from :data:`rgr.results.reported.SECTION_TITLES`,
the causes from :data:`rgr.results.replication.verdicts.CAUSES` (through :func:`cause_of`), the counts from the rows.
The book's findings about the paper's theory (the box's last sentence) come from chapter *Explicit constructions*
and are glued there.

The glossary links: the first use of each term in a block of HTML becomes a link to its entry in book/glossary.md
(:func:`link_terms`; :func:`note_edges` explains a point on an end of its interval in place).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from html import escape

from ..results import reported as rep
from ..results.replication.rows import ClaimRow
from ..results.replication.verdicts import CAUSES, DEVIATION_CAUSES, NOT_TESTABLE_CAUSES, cause_of


@dataclass(frozen=True)
class _BottomLine:
    """The box's sentences in plain text."""

    replicates: str
    deviates: str
    untested: str

    def sentences(self) -> tuple[str, ...]:
        return self.replicates, self.deviates, self.untested


def _section_name(section: str) -> str:
    """A section's title without its paper reference, first letter lower case ("softmax", "GPT-2 block")."""
    title = rep.SECTION_TITLES[section].split(" (")[0]
    return title[:1].lower() + title[1:] if title[1:2].islower() else title


# why, in the plain words of the box, after "n because" (a cause missing here is said by its name in CAUSES)
_PLAIN: dict[str, str] = {
    "log_base": "the paper's log has no stated base, and in the other base its constant agrees",
    "near_miss": "the paper's value lies just outside the 95% noise interval, inside the 99% one",
    "thin": "the deviating point has few seeds",
    "paper_table1": "the paper's fit cannot be rebuilt from its own Table 1",
    "paper_text": "the paper's text and its own Table 1 disagree",
    "budget": "the protocol's step cutoff left it undecided",
    "budget_bound": "with a longer step budget the book agrees",
    "weighting": "the book's thresholds sit higher than the paper's at the largest cells, which least squares weighs "
                 "most (weighing every cell alike agrees)",
    "unexplained": "no cause shows in the data",
    "undecided": "the noise reaches both sides of the claim",
    "unsettled": "the deciding runs were cut while still improving",
    "presets": "the tables compared are at different presets",
    "not_the_task": "the book's runs are not the paper's task (stand-in embeddings, a size that does not compress)",
    "no_number": "the paper gives no number to compare with",
    "no_data": "the cells are not in the book's data",
}


def _plain(cause: str) -> str:
    return _PLAIN.get(cause, CAUSES[cause])


def _causes(rows: list[ClaimRow], order: tuple[str, ...]) -> str:
    """The causes of ``rows``, most frequent first (ties in ``order``), each "cause (n)"."""
    n = Counter(cause_of(r) for r in rows)
    keys = sorted(n, key=lambda c: (-n[c], order.index(c) if c in order else len(order)))
    return "; ".join(f"{n[c]} because {_plain(c)}" for c in keys)


def _paper_inside(r: ClaimRow) -> bool:
    """Whether ``r`` agrees because the paper's number lies in the book's noise interval (a claim with one number and
    a row with a finite interval); the other agreeing rows pass their stated rule (a side, a paired test, a count)."""
    p = rep.claim(r.key).value
    return (isinstance(p, (int, float)) and not isinstance(p, bool) and math.isfinite(r.lo) and math.isfinite(r.hi)
            and r.lo <= p <= r.hi)


def bottom_line(rows: list[ClaimRow]) -> _BottomLine:
    """The box's sentences from the verdict rows (one per claim of
    :data:`rgr.results.reported.CLAIMS`); an empty list is refused."""
    if not rows:
        raise ValueError("rows must hold at least one verdict row")
    by = {s: [r for r in rows if r.verdict.status == s] for s in ("agrees", "deviates", "not testable")}
    agree, dev, open_ = by["agrees"], by["deviates"], by["not testable"]
    n = len(rows)
    per = Counter(rep.claim(r.key).section for r in rows)
    ok = Counter(rep.claim(r.key).section for r in agree)
    sections = sorted((s for s in rep.SECTIONS if per[s]), key=lambda s: (-ok[s] / per[s], rep.SECTIONS.index(s)))
    where = "; ".join(f"{ok[s]} of {per[s]} on {_section_name(s)}" for s in sections)
    inside = sum(_paper_inside(r) for r in agree)
    how = ("the paper's value inside the book's noise interval" if inside == len(agree) else
           "each by its row's stated rule (a side, a paired test, a count)" if not inside else
           f"{inside} with the paper's value inside the book's noise interval, the rest by their row's stated rule (a "
           "side, a paired test, a count)")
    replicates = f"{len(agree)} of the paper's {n} claims agree, {how}: {where}."
    deviates = (f"{len(dev)} of {n} deviate, each for the reason its row gives: "
                f"{_causes(dev, DEVIATION_CAUSES)}." if dev else f"None of the {n} claims deviates.")
    untested = (f"{len(open_)} of {n} are not testable here: {_causes(open_, NOT_TESTABLE_CAUSES)}."
                if open_ else f"Every one of the {n} claims could be tested here.")
    return _BottomLine(replicates, deviates, untested)


def bottom_line_html(rows: list[ClaimRow]) -> str:
    """:func:`bottom_line` as one HTML paragraph (class ``rgr-bottom-line``), each sentence in a span carrying its
    status (``data-part``: agrees, deviates, not-testable) for tests and the site check."""
    b = bottom_line(rows)
    parts = zip(("agrees", "deviates", "not-testable"), b.sentences())
    return link_terms('<p class="rgr-bottom-line">' + " ".join(f'<span data-part="{k}">{escape(s)}</span>'
                                                             for k, s in parts) + "</p>")


# ----------------------------------------------------------------------------- the glossary links

# phrase as written (regular expression, matched case-sensitively on word boundaries) -> the glossary's term
_TERMS: dict[str, str] = {
    r"noise intervals?": "noise interval",
    r"precondition cells?": "precondition cells",
    r"base cells?": "base cells",
    r"(?:λ|lambda) = 8 diagonal": "lambda = 8 diagonal",
    r"F1 target": "F1 target",
    r"optimistic": "optimistic D_K*",
    r"conservative": "conservative D_K*",
    r"Table 1 arithmetic": "Table 1 arithmetic",
    r"near miss(?:es)?": "near miss",
    r"not testable": "not testable",
    r"step cutoffs?": "step cutoff",
    r"head-count line": "head-count line",
}


def _anchor(term: str) -> str:
    """The HTML id of a glossary term: ``term-`` plus the term lower-cased, every run of other characters than
    letters and digits one hyphen (docutils' ``make_id``): "noise interval" -> "term-noise-interval"."""
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def _link_first(html: str, pattern: str, href: str) -> str:
    """``html`` with the first match of ``pattern`` in text outside tags and links made a link to ``href``."""
    parts, in_link = re.split(r"(<[^>]+>)", html), False
    for i, part in enumerate(parts):
        if part.startswith("<"):
            in_link = re.match(r"<a[\s>]", part) is not None or (in_link and not part.startswith("</a"))
            continue
        m = None if in_link else re.search(rf"(?<![\w-]){pattern}(?![\w-])", part)
        if m:
            parts[i] = part[:m.start()] + f'<a class="rgr-term" href="{href}">{m.group(0)}</a>' + part[m.end():]
            return "".join(parts)
    return html


def link_terms(html: str) -> str:
    """``html`` with the first use of each of :data:`_TERMS` outside tags and links turned into a link to its
    glossary entry (``glossary.html#<anchor>``)."""
    for pattern, term in _TERMS.items():
        html = _link_first(html, pattern, f"glossary.html#{_anchor(term)}")
    return html


# a number, what may stand between it and its interval ("(n = 12)", "x", "(law: 1.33)", tags), then "[lo, hi]"
_PAIR = re.compile(r"(?<![\w.\[])(-?\d+(?:\.\d+)?)x?(?:\s*\((?:n = \d+|law: [^)]*)\))?\s*\[(-?\d+(?:\.\d+)?), "
                   r"(-?\d+(?:\.\d+)?)\]")
_SAME = re.compile(r"\[(-?[\d.]+), (-?[\d.]+)\]\s*\[\1, \2\]")
_EDGE_SHARE = 0.15  # a point in the outer 15% of its interval's width reads as "on its end"
_EDGE_NOTE = ('<span class="rgr-vnote">a point at or near an end of its interval, or an interval of one value, is '
             'how the convention reads few seeds: <a class="rgr-term" href="glossary.html#term-noise-interval">why</a>'
             '</span>')


def _on_edge(value: float, lo: float, hi: float) -> bool:
    """Whether ``value`` sits at or near an end of [``lo``, ``hi``] (within :data:`_EDGE_SHARE` of its width) or the
    interval is one value: what a reader could take for a bug (glossary: noise interval). A value outside is not its
    interval's point (the convention widens every interval to hold it): False."""
    width = hi - lo
    if not lo <= value <= hi:
        return False
    return width <= 0 or min(value - lo, hi - value) <= _EDGE_SHARE * width


def _edge_cells(text: str) -> bool:
    """Whether the text of one table cell shows a point on an end of its interval, or an interval equal to the value
    shown before it ("[4, 18] [4, 18]")."""
    if _SAME.search(text):
        return True
    if re.search(r"\] (?:vs|,) \[", text):  # several intervals listed after several values: which is whose is not
        return False                          # in the text, so no pair is read
    return any(_on_edge(float(v), float(a), float(b)) for v, a, b in _PAIR.findall(text))


def note_edges(html: str) -> str:
    """``html`` (the verdict table) with a short note, linked to the glossary's *noise interval*, in every cell of
    class ``rgr-vbook`` (the book's value) whose point sits on an end of its interval or whose interval is one value
    (:func:`_edge_cells`): explained in place, as a property of the convention."""
    def cell(m: re.Match) -> str:
        text = re.sub(r"<[^>]+>", " ", m.group(2))
        return m.group(0) if not _edge_cells(" ".join(text.split())) else (
            m.group(1) + m.group(2) + "<br>" + _EDGE_NOTE + "</td>")

    return re.sub(r'(<td class="rgr-vbook"[^>]*>)(.*?)</td>', cell, html, flags=re.S)
