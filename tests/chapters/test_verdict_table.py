"""The answer first (issue 30): every verdict row has a machine-readable cause, the summary and the verdict table are
rendered from the rows, and the committed chapter and introduction name exactly the claims the verdict data make
deviate."""

from __future__ import annotations

import json
import math
import re
from html import escape

import pytest

from rgr.chapters.verdict_table import summary_html, verdict_table_html
from rgr.results import reported as rep
from rgr.results.replication.registry import JOINT, complete_rows
from rgr.results.replication.rows import ClaimRow, Reading
from rgr.results.replication.verdicts import (
    CAUSES,
    DEVIATION_CAUSES,
    NOT_TESTABLE_CAUSES,
    Verdict,
    by_cause,
    cause_of,
    verdict_label,
)
from tests import ROOT
from tests.chapters.cause_rows import row_of

NAN = math.nan
VERDICT_CLASS = "rgr-verdict"  # every verdict cell's class (book/_static/verdict.css)


def _row(key: str, status: str, cause: str = "", near: bool = False, value: float = NAN, readings=(),
         preset: str = "paper") -> ClaimRow:
    return ClaimRow(key, "b", "[0, 1]", "basis", Verdict(status, f"why {key}", near, cause), value, 0.0, 1.0,
                    readings=tuple(readings), preset=preset)


def _synthetic() -> list[ClaimRow]:
    log2_holds = Reading("with log2", 1.2, 1.1, 1.3, True)
    return [_row("law_slope_all", "deviates", value=1.8, readings=[log2_holds]),
            _row("law_r2_all", "agrees", value=0.95),
            _row("law_slope_pre", "deviates", near=True, value=1.3,
                 readings=[Reading("with log2", 0.9, 0.8, 0.95, False)]),
            _row("heads_slope", "deviates", "paper_table1", value=1.9),
            _row("diag_growth", "deviates", "thin", value=0.7, preset="book"),
            _row("dk_range", "deviates"),
            _row("softmax_advantage", "not testable", "undecided"),
            _row("value_d32_best", "not testable", "unsettled")]


def test_a_verdict_names_its_cause_where_only_its_reader_knows_it():
    with pytest.raises(ValueError, match="cause"):
        Verdict("not testable", "why")  # an untestable row must say why, as a cause
    with pytest.raises(ValueError, match="cause"):
        Verdict("agrees", "", cause="budget")
    with pytest.raises(ValueError, match="cause"):
        Verdict("deviates", "", cause="log_base")  # computed from the row, never set by a reader
    assert set(CAUSES) == set(DEVIATION_CAUSES) | set(NOT_TESTABLE_CAUSES)
    said = lambda c: re.search(rf'<li data-cause="{c}"><strong>[^<]*</strong> \(\d+\)\. (.*?) <a ',  # noqa: E731
                               summary_html([row_of(c)])).group(1)
    explained = [said(c) for c in CAUSES]
    assert all(explained) and len(set(explained)) == len(CAUSES)  # one sentence per cause, its own


def test_cause_is_computed_from_the_rows_statistics():
    by = {r.key: r for r in _synthetic()}
    assert cause_of(by["law_r2_all"]) == ""
    assert cause_of(by["law_slope_all"]) == "log_base"  # the other base's reading holds
    assert cause_of(by["law_slope_pre"]) == "near_miss"  # it does not; inside the 99% interval
    assert cause_of(by["heads_slope"]) == "paper_table1" and cause_of(by["diag_growth"]) == "thin"
    assert cause_of(by["dk_range"]) == "unexplained"
    assert cause_of(by["softmax_advantage"]) == "undecided"
    # one claim, both readings of the logarithm, one verdict that names the reading that agrees
    assert verdict_label(by["law_slope_all"]) == "deviates with ln; agrees with log2"
    assert verdict_label(by["law_slope_pre"]) == "deviates (near miss)"


def test_the_summary_follows_the_verdict_rows():
    rows = _synthetic()
    got = summary_causes(summary_html(rows))
    assert got["log_base"] == {"law_slope_all"} and got["near_miss"] == {"law_slope_pre"}
    assert got["unexplained"] == {"dk_range"} and got["thin"] == {"diag_growth"}
    assert got["undecided"] == {"softmax_advantage"} and got["unsettled"] == {"value_d32_best"}
    # the claims no row reads are not testable for want of data
    assert got["no_data"] == {c.key for c in rep.CLAIMS} - {r.key for r in rows}
    # change one verdict of the table: the summary moves that claim and nothing else
    flipped = [r if r.key != "law_r2_all" else _row("law_r2_all", "deviates", value=0.5) for r in rows]
    after = summary_causes(summary_html(flipped))
    assert "law_r2_all" not in after.get("agrees", set()) and after["unexplained"] == {"dk_range", "law_r2_all"}
    assert summary_html(flipped) != summary_html(rows)
    assert "law_r2_all" in got["agrees"]
    # a claim's name and numbers come from the rows and reported.py
    html = summary_html(rows)
    assert rep.claim("law_slope_all").name.replace("'", "&#x27;") in html and "1.8 with ln, 1.2 with log2" in html
    assert "book preset" in html  # diag_growth is read at the book preset


def test_by_cause_orders_deviations_before_untestable_rows():
    groups = list(by_cause(_synthetic()))
    assert groups == [c for c in (*DEVIATION_CAUSES, *NOT_TESTABLE_CAUSES) if c in groups]


def test_the_verdict_table_has_one_labelled_verdict_per_claim():
    rows = _synthetic()
    html = verdict_table_html(rows, "caption")
    cells = re.findall(rf'<tr class="rgr-vrow" id="verdict-([a-z0-9_]+)">.*?<td class="{VERDICT_CLASS} '
                       rf'{VERDICT_CLASS}--([a-z-]+)"[^>]*><span class="rgr-verdict-label">(.*?)</span>'
                       r'(?=<span|</td>)', html)
    assert [k for k, _, _ in cells] == [c.key for c in rep.CLAIMS]
    by = {r.key: r for r in complete_rows(rows)}
    for key, status, label in cells:
        assert status == by[key].verdict.status.replace(" ", "-")
        assert label.endswith(verdict_label(by[key]))  # the label in words, after its mark
    assert html.count("<details>") == len(rep.CLAIMS)  # basis and why folded under each claim
    assert "ln: 1.8" in html and "log2: 1.2" in html  # the law's slope shows both readings in one row


# ----------------------------------------------------------------------------- the committed pages


def _outputs(nb: dict) -> list[dict]:
    return [o for c in nb["cells"] for o in c.get("outputs", [])]


def _committed_chapter() -> tuple[str, str, dict[str, str]]:
    nb = json.loads((ROOT / "book" / "replication.ipynb").read_text(encoding="utf-8"))
    summary, table, glued = "", "", {}
    for o in _outputs(nb):
        name = o.get("metadata", {}).get("scrapbook", {}).get("name")
        html = "".join(o.get("data", {}).get("text/html", ""))
        plain = "".join(o.get("data", {}).get("application/papermill.record/text/plain", ""))
        if name == "verdict_summary":
            summary = html
        elif name:
            glued[name] = plain
        elif 'class="rgr-verdicts"' in html:
            table = html
    return summary, table, glued


def test_the_committed_summary_names_exactly_the_claims_the_committed_table_makes_deviate():
    summary, table, glued = _committed_chapter()
    assert summary and table, "replication.ipynb lacks its glued summary or its verdict table: re-execute it"
    got = summary_causes(summary)
    status = dict(re.findall(rf'id="verdict-([a-z0-9_]+)">.*?{VERDICT_CLASS}--([a-z-]+)"', table))
    assert sorted(status) == sorted(c.key for c in rep.CLAIMS)
    deviating = {k for k, s in status.items() if s == "deviates"}
    assert set().union(*(got.get(c, set()) for c in DEVIATION_CAUSES)) == deviating
    assert (set().union(*(got.get(c, set()) for c in NOT_TESTABLE_CAUSES))
            == {k for k, s in status.items() if s == "not-testable"})
    assert got.get("agrees", set()) == {k for k, s in status.items() if s == "agrees"}
    assert int(glued["n_deviates"]) == len(deviating)


@pytest.fixture(scope="module")
def data_rows(committed_verdict):
    """The verdict rows of data/, read as the chapter reads them, and the softmax chapter's group."""
    rows, loaded = committed_verdict
    return list(rows), loaded["shift"]


def test_the_committed_summary_is_what_the_verdict_data_give_now(data_rows):
    """The committed outputs list exactly the deviating claims of the verdict data (data/ read as the chapter
    reads it)."""
    rows, _ = data_rows
    summary, _, _ = _committed_chapter()
    assert summary_causes(summary) == summary_causes(summary_html(rows)), "data/ changed: re-execute replication.ipynb"


def test_the_shift_row_shows_the_softmax_chapters_thresholds(data_rows):
    """Max-over-heads D_K* per cell has one value in the book: the shift row's is the softmax chapter's."""
    from rgr.results.softmax import threshold_shift
    from rgr.results.thresholds import paired_seeds, thresholds

    rows, group = data_rows
    maxed = thresholds(paired_seeds(group["base"].runs, group["softmax"].runs))  # on the seeds both ran, as the chapter
    shift = threshold_shift(maxed, thresholds(group["softmax"].runs))
    row = {r.key: r for r in rows}["softmax_shift"]
    assert row.preset == group["softmax"].preset == group["base"].preset
    for c in shift.cells:
        if c.D_K_star_max is not None and c.D_K_star_soft is not None:
            assert f"({c.m}, {c.d_model}): {c.D_K_star_soft} vs {c.D_K_star_max}" in row.book


def test_the_rows_behind_every_number_are_the_rows_the_verdicts_read(committed_verdict):
    """GPT-2's line of the chapter's table of rows is the table its verdict rows read (the compressive preset once
    complete, issue 50), not the preset the chapter's loader resolved."""
    from rgr.chapters.verdict_table import used_frame
    from rgr.results.replication.registry import sources_of

    rows, loaded = committed_verdict
    gpt2 = sources_of(loaded)[0]["gpt2"]
    line = used_frame(loaded).set_index(["read_for", "experiment"]).loc[("own", "gpt2")]
    assert (line["preset"], line["runs"], line["seeds"]) == (gpt2.preset, len(gpt2.runs), gpt2.runs["seed"].nunique())
    assert {r.preset for r in rows if r.key.startswith("gpt2_")} == {gpt2.preset}


def test_the_introduction_pastes_the_chapters_summary():
    intro = (ROOT / "book" / "intro.md").read_text(encoding="utf-8")
    assert re.search(r"```\{glue\} verdict_summary\n:doc: replication.ipynb\n```", intro)
    # its theory findings come from the constructions chapter's glued numbers, none typed
    for key in ("paper_gap_ell", "paper_gap_present_lo", "paper_gap_present_hi", "paper_gap_d_k_lo", "paper_gap_d_k_hi",
                "paper_onset_lo", "paper_onset_hi"):
        assert f"constructions.ipynb::{key}" in intro
    nb = json.loads((ROOT / "book" / "constructions.ipynb").read_text(encoding="utf-8"))
    names = {o.get("metadata", {}).get("scrapbook", {}).get("name") for o in _outputs(nb)}
    pasted = set(re.findall(r"constructions\.ipynb::([a-z0-9_]+)", intro))
    assert pasted <= names, f"constructions.ipynb no longer glues {sorted(pasted - names)}"


def test_the_softmax_rows_read_the_softmax_chapters_own_group():
    """One D_K* per cell and model: the shift row reads the experiments the softmax chapter loads together."""
    nb = json.loads((ROOT / "book" / "softmax.ipynb").read_text(encoding="utf-8"))
    src = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    found = re.search(r"load_experiments\(\(([^)]*)\)[^\n]*together=True", src)
    assert found, "the softmax chapter no longer loads its experiments together"
    assert tuple(re.findall(r'"([a-z0-9]+)"', found.group(1))) == JOINT["shift"]


def summary_causes(html: str) -> dict[str, set[str]]:
    """Read a :func:`summary_html` back: per cause ("agrees" for the claims that agree), the claim keys it names, each
    checked to be shown under its name from :data:`rgr.results.reported.CLAIMS`."""
    out: dict[str, set[str]] = {}
    for cause, block in re.findall(r'data-cause="([a-z0-9_]+)">(.*?)</(?:li|p)>', html, flags=re.S):
        for key, name in re.findall(r'data-claim="([a-z0-9_]+)">(.*?)</a>', block):
            if name != escape(rep.claim(key).name):
                raise ValueError(f"claim {key!r} shown as {name!r}, not as its name")
            out.setdefault(cause, set()).add(key)
    return out
