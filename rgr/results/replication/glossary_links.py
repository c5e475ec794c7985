"""Words of the verdict linked to the glossary (chapter *Does it replicate?* and the introduction, issue 47): the
first use of each term in a block of HTML becomes a link to its entry in book/glossary.md.

- :data:`TERMS` — the phrase as the verdict's sentences write it (a regular expression) and the glossary term;
- :func:`anchor` — the id Sphinx gives a glossary term (``term-`` and the term as docutils makes ids);
- :func:`link_terms` — the HTML with the first use of each term linked, never inside a tag or an existing link.
"""

from __future__ import annotations

import re

__all__ = ["TERMS", "anchor", "link_terms"]

# phrase as written (regular expression, matched case-sensitively on word boundaries) -> the glossary's term
TERMS: dict[str, str] = {
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


def anchor(term: str) -> str:
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
    """``html`` with the first use of each of ``terms`` (default :data:`TERMS`) outside tags and links turned into a
    link to ``page#<anchor>``."""
    for pattern, term in (TERMS if terms is None else terms).items():
        html = _link_first(html, pattern, f"{page}#{anchor(term)}")
    return html
