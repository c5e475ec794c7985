"""One verdict row for each cause of :data:`rgr.results.replication.verdicts.CAUSES`: the chapters' words for every
cause are checked from rows (the bottom line, the summary), not from their private tables."""

from __future__ import annotations

from rgr.results.replication.rows import ClaimRow, Reading
from rgr.results.replication.verdicts import LOG_SPACE, NOT_TESTABLE_CAUSES, Verdict, cause_of


def _row(status: str, cause: str = "", near: bool = False, readings=()) -> ClaimRow:
    return ClaimRow("law_slope_all", "b", "[0, 1]", "basis", Verdict(status, "why", near, cause), 1.0, 0.0, 2.0,
                    readings=tuple(readings))


def row_of(cause: str) -> ClaimRow:
    """A row of the law's slope whose cause (:func:`cause_of`) is ``cause``: its reader's, or the one its readings
    imply."""
    implied = {"log_base": lambda: _row("deviates", readings=[Reading("with log2", 1.2, 1.1, 1.3, True)]),
               "near_miss": lambda: _row("deviates", near=True),
               "weighting": lambda: _row("deviates", readings=[Reading(LOG_SPACE, 1.2, 1.1, 1.3, True)]),
               "unexplained": lambda: _row("deviates")}
    row = implied[cause]() if cause in implied else _row(
        "not testable" if cause in NOT_TESTABLE_CAUSES else "deviates", cause)
    assert cause_of(row) == cause, (cause, cause_of(row))
    return row
