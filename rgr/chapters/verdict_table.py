"""The answer first (chapter *Does it replicate?*, pasted into the introduction): where the paper replicates, where
not, and why, grouped by cause, and the verdict table as HTML that reads on any screen.

Everything here is rendered from the verdict rows (:func:`rgr.results.replication.registry.evaluate`): the names come
from :data:`rgr.results.reported.CLAIMS`, the causes from :func:`rgr.results.replication.verdicts.cause_of`,
the numbers from
the rows; no claim, cause or number is typed here.

The rows that do not agree, grouped by cause in a fixed order, are
:func:`rgr.results.replication.verdicts.by_cause`; here each cause gets one sentence (:data:`_EXPLAIN`), the summary
and the table are HTML (the table styled by ``book/_static/verdict.css``, whose verdict cells carry the class
:data:`_VERDICT_CLASS`), and the frames the chapter shows beside the table are display only (the numbers come from
:mod:`rgr.results.replication`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from html import escape
from pathlib import Path

import pandas as pd

from ..catalog import preset_completeness
from ..results import reported as rep
from ..results.replication.fig4 import THIN_SEEDS
from ..results.replication.paper_arithmetic import ArithmeticCheck
from ..results.replication.registry import JOINT, complete_rows
from ..results.replication.rows import ClaimRow, Longer, Source, gpt2_source
from ..results.replication.verdicts import (
    CAUSES,
    DEVIATION_CAUSES,
    LAW_BASE,
    NOT_TESTABLE_CAUSES,
    by_cause,
    cause_of,
    other_base_reading,
    verdict_label,
)
from ..results.stats import within

_VERDICT_CLASS = "rgr-verdict"  # every verdict cell of the table; with rgr-verdict--agrees / --deviates / ...
_MARK = {"agrees": "✓", "deviates": "✗", "not testable": "?"}

_EXPLAIN: dict[str, str] = {
    "log_base": (
        "The paper writes m log m without a base. The verdict reads it as {law}, the protocol's choice made "
        "before the paper's numbers were released; read {other}, the paper's constant lies inside the book's "
        "noise interval."
    ),
    "near_miss": "The paper's value lies outside the book's 95% noise interval but inside its 99% one.",
    "thin": (
        "The deviation rests on a point measured with fewer than {thin} seeds, whose noise interval a seed "
        "bootstrap can hardly estimate."
    ),
    "paper_table1": (
        "No assignment of power-of-two head counts to the paper's own Table 1 reproduces the paper's fit, "
        "so where its number comes from is open (the Table 1 arithmetic in the chapter)."
    ),
    "paper_text": "The paper's text gives one value and its own Table 1 another; the book's interval holds the Table "
                  "1 one.",
    "budget": ("At the protocol's step cutoff the comparison was undecided (the runs were cut with their error still "
               "falling); a longer cutoff, declared before it ran, decides it against the paper."),
    "weighting": ("The book fits as the paper does, least squares through the origin (where the paper's own Table 1 "
                  "reproduces its constant, it does so that way: the Table 1 arithmetic in the chapter), so the "
                  "weighting is the same; the same law fitted in log space, every cell weighed alike, holds the "
                  "paper's value. The book's constant is raised by its thresholds at the largest cells, which least "
                  "squares weighs most: there they sit higher than the paper's (the law constants' paragraph in the "
                  "chapter); why is not measured."),
    "budget_bound": ("The protocol's step cutoff cut the runs at the threshold; retrained with a longer budget "
                     "(the settled extension, declared before it ran), the book's value agrees with the paper's."),
    "unexplained": ("No cause the data support: none of the causes above holds in the row's data; the verdict table "
                    "says by how much the book's value differs."),
    "undecided": "The book's noise interval reaches both sides of what the paper claims.",
    "unsettled": "The runs that would decide it hit the step cutoff while their error was still falling.",
    "presets": "The tables compared are at different presets; the row is read once both are at one preset.",
    "not_the_task": "The book's runs are not the paper's task (stand-in embeddings, a size that does not compress).",
    "no_number": "The paper states no number the book could hold its measurement against.",
    "no_data": "The book's tables lack the cells or runs the claim needs.",
}

_TITLES = {"permutation_sweeps": "Permutation sweeps", "denser_graphs": "Denser graphs", "softmax": "Softmax",
                  "value_channel": "Value channel", "gpt2_block": "GPT-2 block"}  # a claim's chapter, by its title


def _explain(cause: str, rows: list[ClaimRow]) -> str:
    """:data:`_EXPLAIN` of ``cause``, with the log bases named from the rows' readings."""
    if cause not in _EXPLAIN:
        raise ValueError(f"cause must be one of {sorted(_EXPLAIN)}, got {cause!r}")
    other = next((other_base_reading(r).name for r in rows if other_base_reading(r) is not None), "in the other base")
    return _EXPLAIN[cause].format(law=LAW_BASE, other=other, thin=THIN_SEEDS)


def _num(x: float) -> str:
    """Three significant digits, with a true minus sign (as the paper's numbers are typed)."""
    return f"{x:.3g}".replace("-", "−")


def _item(r: ClaimRow) -> str:
    """One claim in the summary: its name linked to its chapter, the book's number beside the paper's where both are
    numbers, and the preset when it is not the paper's."""
    c = rep.claim(r.key)
    name = f'<a href="{c.chapter}.html" data-claim="{r.key}">{escape(c.name)}</a>'
    said = []
    if math.isfinite(r.value) and isinstance(c.value, float):
        other = other_base_reading(r)
        book = (
            f"{_num(r.value)} with {LAW_BASE}, {_num(other.value)} {other.name}" if other is not None else _num(r.value)
        )
        said.append(f"book {book}, paper {escape(c.paper)}")
    if r.preset and r.preset != "paper":
        said.append(f"{escape(r.preset)} preset")
    return name + (f" ({'; '.join(said)})" if said else "")


def summary_html(rows: list[ClaimRow]) -> str:
    """Where the paper replicates (the claims that agree), where it does not and why (the deviations per cause) and
    what the book cannot test (per cause), as one HTML block."""
    rows = complete_rows(rows)
    agree = [r for r in rows if r.verdict.status == "agrees"]
    groups = by_cause(rows)
    dev = {c: rs for c, rs in groups.items() if c in DEVIATION_CAUSES}
    untested = {c: rs for c, rs in groups.items() if c in NOT_TESTABLE_CAUSES}
    n_dev = sum(len(rs) for rs in dev.values())
    n_open = sum(len(rs) for rs in untested.values())
    li = lambda c, rs: (f'<li data-cause="{c}"><strong>{escape(_cap(CAUSES[c]))}</strong> ({len(rs)}). '  # noqa: E731
                        f"{escape(_explain(c, rs))} " + "; ".join(_item(r) for r in rs) + ".</li>")
    out = [
        '<div class="rgr-verdict-summary">',
        f'<p data-cause="agrees"><strong>Where it replicates.</strong> {len(agree)} of {len(rows)} claims agree with '
        "the paper within the book's noise intervals: " + ("; ".join(_item(r) for r in agree) or "none") + ".</p>",
        f"<p><strong>Where it does not, and why.</strong> {_claims(n_dev)} deviate"
        + (", grouped by cause:</p>" if n_dev else ".</p>"),
    ]
    if dev:
        out.append("<ul>" + "".join(li(c, rs) for c, rs in dev.items()) + "</ul>")
    out.append(
        f"<p><strong>Not testable here.</strong> {_claims(n_open)}" + (", by reason:</p>" if n_open else ".</p>")
    )
    if untested:
        out.append("<ul>" + "".join(li(c, rs) for c, rs in untested.items()) + "</ul>")
    out.append("</div>")
    return "\n".join(out)


def _claims(n: int) -> str:
    return f"{n} claim" + ("" if n == 1 else "s")


def _cap(s: str) -> str:
    """``s`` with a first Latin letter in upper case (a Greek symbol such as λ keeps its case)."""
    return s[:1].upper() + s[1:] if s[:1].isascii() else s


def _book_cell(r: ClaimRow) -> str:
    """The book's value and its interval; for a law slope both readings of the logarithm."""
    other = other_base_reading(r)
    if other is not None and math.isfinite(r.value):
        def iv(lo: float, hi: float) -> str:
            return f" [{_num(lo)}, {_num(hi)}]" if math.isfinite(lo) and math.isfinite(hi) else ""

        return (f"{escape(LAW_BASE)}: {_num(r.value)}{iv(r.lo, r.hi)}<br>{escape(other.name.removeprefix('with '))}: "
                f"{_num(other.value)}{iv(other.lo, other.hi)}") + _longer_cell(r)
    book = escape(r.book)
    book = book if r.interval in ("—", "") else f'{book}<br><span class="rgr-vinterval">{escape(r.interval)}</span>'
    return book + _longer_cell(r)


def _settled(status: str, x: Longer) -> str:
    """What the second reading says of the step cutoff (issue 45): not settled (a longer budget, or a D_K below the
    design's lowest point, may move it); or,
    settled, for a row that deviates at the protocol's cutoff, budget-bound (it agrees now) or not budget-bound."""
    if not x.settled:
        return "not settled"
    if status != "deviates":
        return "settled"
    return "settled: " + ("budget-bound" if x.status == "agrees" else "not budget-bound")


def _longer_cell(r: ClaimRow) -> str:
    """The second reading with a longer step budget, under the book's value (none without one)."""
    x = r.longer
    if x is None:
        return ""
    iv = "" if x.interval in ("", "—") else f" {escape(x.interval)}"
    return (f'<br><span class="rgr-vlonger">{x.budget}x budget: {escape(x.book)}{iv}, {escape(x.status)} '
            f"({_settled(r.verdict.status, x)})</span>")


def _longer_words(status: str, longer: Longer) -> str:
    """A row's reading with a longer step budget in one sentence, with what it says about the step cutoff."""
    head = f"with {longer.budget}x the protocol's step cutoff: {longer.book}"
    head += "" if longer.interval in ("", "—") else f" {longer.interval}"
    head += f", {longer.status} ({longer.said})"
    moved = f"; D_K* from 1x to {longer.budget}x: {longer.moved}" if longer.moved else ""
    cut = f"; runs at the new D_K* still cut: {longer.cut}"
    said = (_settled(status, longer) if longer.settled
            else "not settled: a longer budget, or a D_K below the design's, may move it")
    return f"{head}{moved}{cut} ({said})"


def _detail(r: ClaimRow) -> str:
    c = rep.claim(r.key)
    title = _TITLES.get(c.chapter, c.chapter)
    items = [("The paper's claim", escape(c.claim)), ("Why", escape(r.verdict.detail)), ("Basis", escape(r.basis))]
    if r.longer is not None:
        items.append(("With a longer budget (the settled extension, not the protocol)",
                      escape(_longer_words(r.verdict.status, r.longer))))
    if r.cells not in ("—", ""):
        items.append(("Over cells (how the constant depends on the cells chosen; decides nothing)", escape(r.cells)))
    items.append(("Chapter", f'<a href="{c.chapter}.html">{escape(title)}</a>'))
    body = "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items)
    return (f'<tr class="rgr-vdetail"><td colspan="4"><details><summary>Basis and why</summary><dl>{body}</dl>'
            "</details></td></tr>")


def verdict_table_html(rows: list[ClaimRow], caption: str) -> str:
    """The verdict table: per section of the paper, one row per claim (claim, paper, book [95% noise interval],
    verdict with its mark, label and cause), then a folded detail row with the paper's wording, why, basis, the
    bootstrap over cells and the chapter."""
    head = ("<thead><tr><th scope='col'>Claim</th><th scope='col'>Paper</th>"
            "<th scope='col'>Book [95% noise interval]</th><th scope='col'>Verdict</th></tr></thead>")
    cols = "".join(f'<col class="rgr-vcol-{k}">' for k in ("claim", "paper", "book", "verdict"))
    body, section = [], None
    for r in complete_rows(rows):
        c = rep.claim(r.key)
        if c.section != section:
            section = c.section
            body.append(f'<tr class="rgr-vsection"><th colspan="4" scope="colgroup">{escape(section)}</th></tr>')
        status, cause = r.verdict.status, cause_of(r)
        why = f'<span class="rgr-verdict-cause">{escape(CAUSES[cause])}</span>' if cause else ""
        body.append(
            f'<tr class="rgr-vrow" id="verdict-{r.key}"><td class="rgr-vclaim" '
            f'data-label="Claim">{escape(_cap(c.name))}</td>'
            f'<td class="rgr-vpaper" data-label="Paper">{escape(c.paper)}</td>'
            f'<td class="rgr-vbook" data-label="Book">{_book_cell(r)}</td>'
            f'<td class="{_VERDICT_CLASS} {_VERDICT_CLASS}--{status.replace(" ", "-")}" data-label="Verdict">'
            f'<span class="rgr-verdict-label"><span aria-hidden="true">{_MARK[status]} '
            f'</span>{escape(verdict_label(r))}'
            f"</span>{why}</td></tr>"
        )
        body.append(_detail(r))
    return (
        f'<div class="rgr-verdicts-wrap"><table class="rgr-verdicts" '
        f'id="rgr-verdict-table"><caption>{escape(caption)}</caption>'
        f"<colgroup>{cols}</colgroup>{head}<tbody>{''.join(body)}</tbody></table></div>"
    )


def used_frame(loaded: Mapping[str, Mapping[str, object]], smoke: bool = False,
               root: Path | None = None) -> pd.DataFrame:
    """One line per (comparison, experiment): the preset read, its runs and seeds, and the fraction of its planned
    runs present in data/ (under ``root``; None for smoke data). GPT-2's line is the rows its verdicts read
    (:func:`rgr.results.replication.rows.gpt2_source`: the compressive preset once complete, under ``auto``)."""
    rows = []
    for key, g in loaded.items():
        for n, d in g.items():
            if key == "gpt2" and n == "gpt2":
                d = gpt2_source(Source(n, d.preset, d.runs), getattr(d, "requested", "") or d.preset, root)
            rows.append(dict(read_for=key if key in JOINT else "own", experiment=n, preset=d.preset, runs=len(d.runs),
                             seeds=int(d.runs["seed"].nunique()) if len(d.runs) else 0,
                             complete=None if smoke or d.preset == "smoke" else preset_completeness(n, d.preset, root)))
    return pd.DataFrame(rows)


def readings_frame(rows: list[ClaimRow], name: str) -> pd.DataFrame:
    """The fit rows with a reading whose name starts with ``name``: the claim, the paper's value, the verdict's value
    and interval, the reading's value and interval, and whether the paper's value lies in each."""
    out = []
    for r in rows:
        got = [x for x in r.readings if x.name.startswith(name)]
        if not got:
            continue
        x, paper = got[0], rep.claim(r.key).value
        iv = lambda lo, hi: f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) and math.isfinite(hi) else "—"  # noqa: E731
        out.append(
            dict(key=r.key, claim=rep.claim(r.key).claim, paper=rep.claim(r.key).paper,
                 verdict_reading=f"{r.value:.3g} {iv(r.lo, r.hi)}", paper_inside=within(paper, r.lo, r.hi),
                 reading=f"{x.value:.3g} {iv(x.lo, x.hi)}", reading_inside=x.holds, what=x.name)
        )
    return pd.DataFrame(
        out, columns=["key", "claim", "paper", "verdict_reading", "paper_inside", "reading", "reading_inside", "what"]
    )


def arithmetic_frame(checks: tuple[ArithmeticCheck, ...] | list[ArithmeticCheck]) -> pd.DataFrame:
    """One line per fit, log base and R² kind: the assignments tried, those giving the paper's slope (and intercept),
    those giving its R² too, and the nearest R² where none does."""
    return pd.DataFrame([dict(fit=c.fit, log=c.base, r2=c.r2_kind, cells=c.cells, assignments=c.assignments,
                              slope_matches=c.slope_matches, reproduce=c.matches,
                              nearest_r2=None if c.nearest is None else round(c.nearest[2], 3)) for c in checks])


def longer_frame(rows: list[ClaimRow]) -> pd.DataFrame:
    """The rows read again with a longer step budget (:mod:`rgr.results.replication.second_readings`): the claim, the
    protocol's verdict, the budget, the book's value there, the status that reading would get, and whether it is
    settled."""
    out = [dict(claim=rep.claim(r.key).name, protocol=r.verdict.status, budget=f"{r.longer.budget}x",
                book_there=r.longer.book, status_there=r.longer.status, settled="yes" if r.longer.settled else "no")
           for r in rows if r.longer is not None]
    return pd.DataFrame(out, columns=["claim", "protocol", "budget", "book_there", "status_there", "settled"])
