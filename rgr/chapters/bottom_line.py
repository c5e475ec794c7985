"""The bottom line (the box that opens the introduction and chapter *Does it replicate?*): three sentences computed
from the verdict rows, so that the box changes whenever a verdict does.

- :func:`bottom_line` — the counts and the three sentences (:class:`_BottomLine`): what replicates, per section of
  the paper; what deviates, with its causes in plain words; what cannot be tested here, and why;
- :func:`bottom_line_html` — the sentences as one HTML block, the terms linked to the glossary
  (:func:`rgr.chapters.glossary_links.link_terms`).

Nothing here is typed about a claim: the sections come from :data:`rgr.results.replication.reported.SECTION_TITLES`,
the causes from :data:`rgr.results.replication.verdicts.CAUSES` (through :func:`cause_of`), the counts from the rows.
The book's findings about the paper's theory (the box's last sentence) come from chapter *Explicit constructions*
and are glued there.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape

from ..results.replication import reported as rep
from ..results.replication.rows import ClaimRow
from ..results.replication.verdicts import CAUSES, DEVIATION_CAUSES, NOT_TESTABLE_CAUSES, cause_of
from .glossary_links import link_terms

__all__ = ["bottom_line", "bottom_line_html"]



@dataclass(frozen=True)
class _BottomLine:
    """How many rows there are per status, and the box's sentences in plain text."""

    n_rows: int
    n_agrees: int
    n_deviates: int
    n_not_testable: int
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
    "chance": "its exceptions lie at budgets where nothing learns",
    "budget": "the protocol's step cutoff left it undecided",
    "budget_bound": "with a longer step budget the book agrees",
    "weighting": "least squares weighs the largest thresholds most (weighing every cell alike agrees)",
    "cell_choice": "of which cells are fitted",
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


def _listed(parts: list[str]) -> str:
    return "; ".join(parts)


def _causes(rows: list[ClaimRow], order: tuple[str, ...]) -> str:
    """The causes of ``rows``, most frequent first (ties in ``order``), each "cause (n)"."""
    n = Counter(cause_of(r) for r in rows)
    keys = sorted(n, key=lambda c: (-n[c], order.index(c) if c in order else len(order)))
    return _listed([f"{n[c]} because {_plain(c)}" for c in keys])


def _share(k: int, n: int, name: str) -> str:
    return f"{k} of {n} on {name}"


def bottom_line(rows: list[ClaimRow]) -> _BottomLine:
    """The box's counts and sentences from the verdict rows (one per claim of
    :data:`rgr.results.replication.reported.CLAIMS`); an empty list is refused."""
    if not rows:
        raise ValueError("rows must hold at least one verdict row")
    by = {s: [r for r in rows if r.verdict.status == s] for s in ("agrees", "deviates", "not testable")}
    agree, dev, open_ = by["agrees"], by["deviates"], by["not testable"]
    n = len(rows)
    per = Counter(rep.claim(r.key).section for r in rows)
    ok = Counter(rep.claim(r.key).section for r in agree)
    sections = sorted((s for s in rep.SECTIONS if per[s]), key=lambda s: (-ok[s] / per[s], rep.SECTIONS.index(s)))
    where = "; ".join(_share(ok[s], per[s], _section_name(s)) for s in sections)
    replicates = (f"{len(agree)} of the paper's {n} claims replicate, the paper's value inside the book's noise "
                  f"interval: {where}.")
    deviates = (f"{len(dev)} of {n} deviate, each for the reason its row gives: "
                f"{_causes(dev, DEVIATION_CAUSES)}." if dev else f"None of the {n} claims deviates.")
    untested = (f"{len(open_)} of {n} are not testable here: {_causes(open_, NOT_TESTABLE_CAUSES)}."
                if open_ else f"Every one of the {n} claims could be tested here.")
    return _BottomLine(n, len(agree), len(dev), len(open_), replicates, deviates, untested)


def bottom_line_html(rows: list[ClaimRow]) -> str:
    """:func:`bottom_line` as one HTML paragraph (class ``rgr-bottom-line``), each sentence in a span carrying its
    status (``data-part``: agrees, deviates, not-testable) for tests and the site check."""
    b = bottom_line(rows)
    parts = zip(("agrees", "deviates", "not-testable"), b.sentences())
    return link_terms('<p class="rgr-bottom-line">' + " ".join(f'<span data-part="{k}">{escape(s)}</span>'
                                                             for k, s in parts) + "</p>")
