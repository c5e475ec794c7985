"""One quantity, one value, or a sentence that says why two (issue 47).

A quantity named on several pages is listed in :data:`SHARED` with where each page shows it (a glued value, or a
pattern in a glued or displayed output). Where the pages show different values, every one of them must say why in
one paragraph that names the quantity and links each page that shows another value; where they agree nothing is
asked. A new quantity shown on two pages belongs here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest

from tests import ROOT


@dataclass(frozen=True)
class Shown:
    """Where one page shows a quantity: the glue name of its value, or (glue name or "" for any output, pattern
    whose first group is the value)."""

    page: str
    glue: str
    pattern: str = ""


@dataclass(frozen=True)
class Shared:
    """A quantity shown on several pages: its words (one must stand in the explaining paragraph) and where."""

    name: str
    words: tuple[str, ...]
    shown: tuple[Shown, ...]


NUM = r"(-?\d+(?:\.\d+)?)"
SHARED: tuple[Shared, ...] = (
    Shared("the head-count line's slope", ("head-count line",), (
        Shown("permutation_sweeps", "law_heads_slope"),
        Shown("choosing_heads", "a"),
        Shown("replication", "heads_slope", rf"^{NUM}"),
    )),
    Shared("the law's rise along the lambda = 8 diagonal", ("rise",), (
        Shown("permutation_sweeps", "diagonal_law_rise"),
        Shown("replication", "", rf"D_K\*\(\d+\) / D_K\*\(\d+\) = [\d.]+ \(law: {NUM}\)"),
    )),
)


def _nb(page: str) -> dict:
    return json.loads((ROOT / "book" / f"{page}.ipynb").read_text(encoding="utf-8"))


def _outputs(nb: dict) -> list[tuple[str, str]]:
    """(glue name or "", text) of every output."""
    out = []
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name", "")
            data = o.get("data", {})
            plain = data.get("application/papermill.record/text/plain")
            text = "".join(plain) if plain else "".join("".join(data.get(k, "")) for k in ("text/html", "text/plain"))
            out.append((name, text + "".join(o.get("text", ""))))
    return out


def shown_value(s: Shown) -> float:
    """The value page ``s.page`` shows, rounded to two decimals (what the pages print)."""
    for name, text in _outputs(_nb(s.page)):
        if s.glue and name != s.glue:
            continue
        if not s.pattern:
            return round(float(text.strip().strip("'")), 2)
        m = re.search(s.pattern, text, re.M)
        if m:
            return round(float(m.group(1)), 2)
    raise AssertionError(f"{s.page}.ipynb shows no {s.glue or s.pattern!r}: re-execute it or update SHARED")


def paragraphs(page: str) -> list[str]:
    nb = _nb(page)
    text = "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return re.split(r"\n\s*\n|\n(?=- )", text)


def explains(paragraph: str, q: Shared, others: set[str]) -> bool:
    links = all(re.search(rf"\b{re.escape(o)}(?:\.ipynb|\b)", paragraph) for o in others)
    return links and any(w in paragraph for w in q.words)


def unexplained(q: Shared) -> list[str]:
    """The pages that show ``q`` at another value than some other page without a paragraph saying why."""
    values = {s.page: shown_value(s) for s in q.shown}
    out = []
    for page, v in values.items():
        others = {p for p, w in values.items() if w != v}
        if others and not any(explains(par, q, others) for par in paragraphs(page)):
            out.append(f"{page} ({v}; {', '.join(f'{p}: {values[p]}' for p in sorted(others))})")
    return out


@pytest.mark.parametrize("q", SHARED, ids=lambda q: q.name)
def test_a_quantity_on_two_pages_has_one_value_or_a_sentence_that_says_why(q):
    bad = unexplained(q)
    assert not bad, (f"{q.name} differs without a paragraph naming it ({' or '.join(q.words)}) and linking the "
                     f"other pages: {bad}")


def test_the_check_fails_without_the_sentence():
    q = Shared("made up", ("head-count line",), ())
    assert explains("The head-count line of [x](choosing_heads.ipynb) differs: fewer cells.", q, {"choosing_heads"})
    assert not explains("The head-count line differs.", q, {"choosing_heads"})
    assert not explains("See [x](choosing_heads.ipynb).", q, {"choosing_heads"})
