"""The verdict table of the chapter *Does it replicate?*: :func:`evaluate`, which reads every claim of
:data:`rgr.results.replication.reported.CLAIMS` once, and the words the chapter says about its rows.

Which reader reads which claim, and the walk over them: :data:`rgr.results.replication.registry.READERS` (Sec. 6.1 in
:mod:`~rgr.results.replication.sec61`, Fig. 4 and App. A.3 in :mod:`~rgr.results.replication.fig4`, the extensions in
:mod:`~rgr.results.replication.extensions`). Experiments compared with each other (the diagonal's two tables, softmax
against
max-over-heads, every configuration tested) are read at one preset (:data:`JOINT`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from ..diagonals import with_cells_of
from . import reported as rep
from .budget import SETTLED, longer_rows, with_longer
from .paper_arithmetic import ArithmeticCheck, arithmetic_summary, table1_checks
from .registry import Inputs, read
from .rows import ClaimRow, Source, cutoffs
from .seed_bootstrap import Draws, seed_draws
from .verdicts import CONVENTION, LAW_BASE, STATUSES, Verdict, cause_of, table1_basis_words, verdict_label

__all__ = ["evaluate", "complete_rows", "claims_frame", "CHAPTER_TITLES", "verdict_counts", "near_misses", "row_value",
           "fit_words", "base_words", "JOINT", "every_configuration", "arithmetic", "Headline", "headline",
           "LawWords", "law_words", "ChapterWords", "chapter_words"]

CHAPTER_TITLES = {"permutation_sweeps": "Permutation sweeps", "denser_graphs": "Denser graphs", "softmax": "Softmax",
                  "value_channel": "Value channel", "gpt2_block": "GPT-2 block"}
# experiments read together at one preset, per comparison: the diagonal's cells, softmax against max-over-heads,
# and every configuration the book tested with the max-over-heads model on permutation graphs. "shift" is the
# softmax chapter's own group (softmax, linear, base read together), so both softmax rows read exactly the rows that
# chapter shows: one D_K* per cell and model in the book, whichever preset the group resolves to.
JOINT: dict[str, tuple[str, ...]] = {"diagonal": ("base", "lambda8"), "shift": ("softmax", "linear", "base"),
                                     "every": ("base", "lambda8", "lambda32")}


@lru_cache(maxsize=1)
def arithmetic() -> tuple[ArithmeticCheck, ...]:
    """:func:`rgr.results.replication.paper_arithmetic.table1_checks`, computed once (it depends on the paper's numbers
    only)."""
    return tuple(table1_checks())


def every_configuration(group: dict[str, Source]) -> tuple[Draws | None, str]:
    """Seed draws of every configuration the book tested with max-over-heads on permutation graphs (``group``: base,
    lambda8, lambda32 at one preset; a cell in several tables takes the base grid's runs) and what they are; None and
    the reason when the tables are at different presets or empty."""
    have = {n: s for n, s in group.items() if len(s.runs)}
    if not have:
        return None, "no runs"
    presets = {s.preset for s in have.values()}
    if len(presets) > 1:
        return None, "not read: the tables are at different presets (" + ", ".join(f"{n} {s.preset}" for n,
                                                                                   s in have.items()) + ")"
    base = have.get("base")
    others = [s.runs for n, s in have.items() if n != "base"]
    extra = pd.concat(others, ignore_index=True) if others else None
    runs = base.runs if extra is None else (extra if base is None else with_cells_of(base.runs, extra))
    runs = runs.reset_index(drop=True)
    return seed_draws(runs), f"{presets.pop()}: {', '.join(have)}; cutoff {cutoffs(runs)} steps"


def evaluate(sources: dict[str, Source], joint: dict[str, dict[str, Source]] | None = None,
             checks: tuple[ArithmeticCheck, ...] | None = None) -> list[ClaimRow]:
    """Every claim of :data:`rgr.results.replication.reported.CLAIMS`, once each, in its order.

    ``sources``: base, lambda8, regular, softmax, value, gpt2 (each a :class:`Source`; lambda32, value_long and
    settled optional), each at its own preset; with settled, the rows reading its cells get a second reading with a
    longer budget (:mod:`rgr.results.replication.budget`). ``joint``: per comparison of :data:`JOINT`, its
    experiments read at one preset; where missing, the ``sources`` themselves (a comparison across presets is then
    not read). ``checks``: the Table 1 arithmetic
    (computed when None).
    """
    need = {"base", "lambda8", "regular", "softmax", "value", "gpt2"}
    if need - set(sources):
        raise ValueError(f"sources lacks {sorted(need - set(sources))}")
    joint = joint or {}
    groups = {name: joint.get(name) or {n: sources[n] for n in names if n in sources} for name, names in JOINT.items()}
    if not len(sources["base"].runs):  # Sec. 6.1 is not read: nothing of it is computed
        return read(Inputs(sources, groups, (None, "no runs"), ()))
    draws = seed_draws(sources["base"].runs)  # once: the verdicts and the longer-budget reading share them
    rows = read(Inputs(sources, groups, every_configuration(groups["every"]), tuple(checks or arithmetic()), draws))
    settled = sources.get(SETTLED)
    if settled is not None and len(settled.runs):  # the second reading with a longer budget (issue 45)
        rows = with_longer(rows, longer_rows(sources["base"], groups["diagonal"]["lambda8"], settled,
                                             checks or arithmetic(), draws))
    return rows


def complete_rows(rows: list[ClaimRow]) -> list[ClaimRow]:
    """One row per claim of :data:`rgr.results.replication.reported.CLAIMS`, in its order; a claim missing from
    ``rows`` (no data
    at all) is marked not testable. Two rows for one claim, or a row of no claim, are an error."""
    by_key: dict[str, ClaimRow] = {}
    for r in rows:
        rep.claim(r.key)  # a KeyError for a row of no claim
        if r.key in by_key:
            raise ValueError(f"two rows for the claim {r.key!r}: one row per claim")
        by_key[r.key] = r
    return [
        by_key.get(
            c.key, ClaimRow(c.key, "—", "—", "—", Verdict("not testable", "no data for this claim", cause="no_data"))
        )
        for c in rep.CLAIMS
    ]


def claims_frame(rows: list[ClaimRow], link: bool = True) -> pd.DataFrame:
    """The verdict table as a frame: one line per claim (:func:`complete_rows`), with its verdict in words
    (:func:`rgr.results.replication.verdicts.verdict_label`) and its cause
    (:func:`rgr.results.replication.verdicts.cause_of`)."""
    out = []
    for r in complete_rows(rows):
        c = rep.claim(r.key)
        title = CHAPTER_TITLES.get(c.chapter, c.chapter)
        out.append(dict(key=r.key, section=c.section, claim=c.claim, paper=c.paper, book=r.book, interval=r.interval,
                        cells=r.cells, basis=r.basis, verdict=verdict_label(r), cause=cause_of(r), why=r.verdict.detail,
                        chapter=f'<a href="{c.chapter}.html">{title}</a>' if link else title))
    return pd.DataFrame(out)


def verdict_counts(rows: list[ClaimRow]) -> dict[str, int]:
    """How many rows of the verdict table have each status (every status present, 0 when none)."""
    return {s: sum(r.verdict.status == s for r in rows) for s in STATUSES}


def near_misses(rows: list[ClaimRow]) -> int:
    """How many deviations are near misses (the paper's value inside the book's 99% noise interval)."""
    return sum(r.verdict.near_miss for r in rows)


def row_value(rows: list[ClaimRow], key: str, digits: int = 2, reading: str | None = None) -> str:
    """The book's number of one row as prose: "1.21 (95% noise interval 1.01–1.26)", or "not testable here";
    ``reading``: the row's :class:`~rgr.results.replication.rows.Reading` whose name starts with it instead."""
    found = [r for r in rows if r.key == key]
    if not found or not math.isfinite(found[0].value):
        return "not testable here"
    r = found[0]
    if reading is not None:
        got = [x for x in r.readings if x.name.startswith(reading)]
        if not got:
            return "not testable here"
        value, lo, hi = got[0].value, got[0].lo, got[0].hi
    else:
        value, lo, hi = r.value, r.lo, r.hi
    if math.isfinite(lo) and math.isfinite(hi):
        return f"{value:.{digits}f} (95% noise interval {lo:.{digits}f}–{hi:.{digits}f})"
    return f"{value:.{digits}f}"


def fit_words(rows: list[ClaimRow], key: str = "law_r2_pre") -> str:
    """How the book's R² of a fit reads against the paper's, for the start of a sentence:
    "The line itself replicates" (the paper's value in the book's interval), "The line is looser than the
    paper's" / "... tighter ..." (outside it), or "The line's R² cannot be compared here"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable" or not math.isfinite(found[0].value):
        return "The line's R² cannot be compared here"
    if found[0].verdict.status == "agrees":
        return "The line itself replicates"
    return f"The line is {'looser' if found[0].value < rep.claim(key).value else 'tighter'} than the paper's"


def base_words(rows: list[ClaimRow], key: str) -> str:
    """For a law slope row: where the paper's constant lies under the law's base (the verdict's) and under the other
    (a reading), e.g. "outside the book's noise interval with ln (the verdict's base), inside it with log2"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable":
        return "not testable here"
    r = found[0]
    side = {"agrees": "inside", "deviates": "outside"}[r.verdict.status]
    other = [x for x in r.readings if x.name.startswith("with ")]
    said = f"{side} the book's noise interval with {LAW_BASE} (the verdict's base)"
    if other and other[0].holds is not None:
        said += f", {'inside' if other[0].holds else 'outside'} it {other[0].name}"
    return said


@dataclass(frozen=True)
class Headline:
    """The verdict table in numbers, as the chapter and the introduction paste them (see :func:`headline`)."""

    n_rows: int
    n_agrees: int
    n_deviates: int
    n_not_testable: int
    n_near_miss: int  # deviations whose paper value lies in the book's 99% noise interval


def headline(rows: list[ClaimRow]) -> Headline:
    """How many rows there are, per status (:func:`verdict_counts`), and how many deviations are near misses."""
    n = verdict_counts(rows)
    return Headline(n_rows=len(rows), n_agrees=n["agrees"], n_deviates=n["deviates"],
                    n_not_testable=n["not testable"], n_near_miss=near_misses(rows))


@dataclass(frozen=True)
class ChapterWords:
    """The chapter's sentences that belong to no one row (see :func:`chapter_words`): the interval convention, the
    law's log base, what the base rows behind Table 1 are, and what the paper's fits' arithmetic shows."""

    convention: str
    law_base: str
    t1_basis: str
    arith_summary: str


def chapter_words(base_runs: pd.DataFrame, checks: tuple[ArithmeticCheck, ...]) -> ChapterWords:
    """The sentences of :class:`ChapterWords` from the base rows ``base_runs`` (columns h, seed; may be empty) and the
    paper-arithmetic ``checks`` (:func:`arithmetic`); chapter ``replication.ipynb``."""
    t1_basis = table1_basis_words(base_runs) if len(base_runs) else "No base rows are read here."
    return ChapterWords(convention=CONVENTION, law_base=LAW_BASE, t1_basis=t1_basis,
                        arith_summary=arithmetic_summary(list(checks)))


@dataclass(frozen=True)
class LawWords:
    """The law's rows in words, as the chapter's section on the scaling law pastes them (see :func:`law_words`):
    the book's value with its interval per fit and log base, how the R² reads, where the paper's constants fall,
    and the paper's values."""

    slope_all_ln: str
    slope_all_log2: str
    slope_pre_ln: str
    slope_pre_log2: str
    r2_pre: str
    r2_pre_words: str
    base_all: str
    base_pre: str
    heads_slope: str
    regular_slope: str
    paper_law_slope_all: str
    paper_law_slope_pre: str
    paper_law_r2_pre: str
    paper_heads_slope: str
    paper_regular_slope: str


def law_words(rows: list[ClaimRow]) -> LawWords:
    """:func:`row_value`, :func:`fit_words` and :func:`base_words` of the law's rows, beside the paper's values."""
    paper = {f"paper_{k}": rep.claim(k).paper
             for k in ("law_slope_all", "law_slope_pre", "law_r2_pre", "heads_slope", "regular_slope")}
    return LawWords(
        slope_all_ln=row_value(rows, "law_slope_all"),
        slope_all_log2=row_value(rows, "law_slope_all", reading="with log2"),
        slope_pre_ln=row_value(rows, "law_slope_pre"),
        slope_pre_log2=row_value(rows, "law_slope_pre", reading="with log2"),
        r2_pre=row_value(rows, "law_r2_pre"), r2_pre_words=fit_words(rows), base_all=base_words(rows, "law_slope_all"),
        base_pre=base_words(rows, "law_slope_pre"), heads_slope=row_value(rows, "heads_slope"),
        regular_slope=row_value(rows, "regular_slope"), **paper,
    )
