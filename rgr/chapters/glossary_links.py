"""Words of the verdict linked to the glossary (chapter *Does it replicate?* and the introduction, issue 47): the
first use of each term in a block of HTML becomes a link to its entry in book/glossary.md.

- :data:`_TERMS` — the phrase as the verdict's sentences write it (a regular expression) and the glossary term;
- :func:`_anchor` — the id Sphinx gives a glossary term (``term-`` and the term as docutils makes ids);
- :func:`link_terms` — the HTML with the first use of each term linked, never inside a tag or an existing link;
- :func:`note_edges` — a note in each verdict-table cell whose point sits on an end of its interval (or whose interval
  is one value), linked to the glossary's explanation of the convention.
"""

from __future__ import annotations

import re

__all__ = ["link_terms", "note_edges"]

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


def link_terms(html: str, page: str = "glossary.html", terms: dict[str, str] | None = None) -> str:
    """``html`` with the first use of each of ``terms`` (default :data:`_TERMS`) outside tags and links turned into a
    link to ``page#<anchor>``."""
    for pattern, term in (_TERMS if terms is None else terms).items():
        html = _link_first(html, pattern, f"{page}#{_anchor(term)}")
    return html


# a number, what may stand between it and its interval ("(n = 12)", "x", "(law: 1.33)", tags), then "[lo, hi]"
_PAIR = re.compile(r"(?<![\w.\[])(-?\d+(?:\.\d+)?)x?(?:\s*\((?:n = \d+|law: [^)]*)\))?\s*\[(-?\d+(?:\.\d+)?), "
                   r"(-?\d+(?:\.\d+)?)\]")
_SAME = re.compile(r"\[(-?[\d.]+), (-?[\d.]+)\]\s*\[\1, \2\]")
_EDGE_SHARE = 0.15  # a point in the outer 15% of its interval's width reads as "on its end"
_EDGE_NOTE = ('<span class="rgr-vnote">a point at or near an end of its interval, or an interval of one value, is '
             'how the convention reads few seeds: <a class="rgr-term" href="{page}#term-noise-interval">why</a></span>')


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


def note_edges(html: str, page: str = "glossary.html", cell_class: str = "rgr-vbook") -> str:
    """``html`` (the verdict table) with a short note, linked to the glossary's *noise interval*, in every cell of
    class ``cell_class`` whose point sits on an end of its interval or whose interval is one value
    (:func:`_edge_cells`): explained in place, as a property of the convention."""
    def cell(m: re.Match) -> str:
        text = re.sub(r"<[^>]+>", " ", m.group(2))
        return m.group(0) if not _edge_cells(" ".join(text.split())) else (
            m.group(1) + m.group(2) + "<br>" + _EDGE_NOTE.format(page=page) + "</td>")

    return re.sub(rf'(<td class="{cell_class}"[^>]*>)(.*?)</td>', cell, html, flags=re.S)
