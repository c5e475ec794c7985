"""The regular table read again with its retrained futility stops (issue 45, item 5; chapter *denser graphs*).

The ``unstopped`` extension (:mod:`rgr.experiments.unstopped`, declared before its first row; not the protocol)
retrained, with futility stopping off, the regular table's stopped runs at its false-stop point and on the two
plateau curves. :func:`unstopped_reading` puts them in the stopped rows' place
(:func:`rgr.results.futile.with_retrained`), says per retrained point what changed
(:func:`rgr.results.futile.retrained_points`) and reads the verdict rows of the regular table
(:func:`rgr.results.replication.fig4.regular_rows`: the fit, the bound's form, the plateaus, h*) on both versions.
A second reading only: the protocol table's rows stay the verdicts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...catalog import load_if_present
from ..futile import retrained_points, with_retrained
from .fig4 import regular_rows
from .rows import ClaimRow, Source

__all__ = ["UNSTOPPED", "unstopped_runs", "RowChange", "UnstoppedReading", "unstopped_reading"]

UNSTOPPED = "unstopped"


def unstopped_runs(preset: str, root: Path | None = None) -> pd.DataFrame:
    """The extension's rows at ``preset``; none when data/ has no table or no rows of it
    (:func:`rgr.catalog.load_if_present`)."""
    return load_if_present(UNSTOPPED, preset, root)


@dataclass(frozen=True)
class RowChange:
    """One verdict row of the regular table, read on the protocol's rows (``before``) and with the retrained runs in
    the stopped ones' place (``after``)."""

    key: str
    status_before: str
    status_after: str
    book_before: str
    book_after: str
    interval_before: str
    interval_after: str
    value_before: float
    value_after: float

    @property
    def changed(self) -> bool:
        """Whether the status, the book's reading, its interval or its value differ (values to 1e-9; NaN equals
        NaN)."""
        a, b = self.value_before, self.value_after
        same = (math.isnan(a) and math.isnan(b)) or (not math.isnan(a) and not math.isnan(b) and abs(a - b) <= 1e-9)
        words = (self.status_before, self.book_before, self.interval_before)
        return words != (self.status_after, self.book_after, self.interval_after) or not same


@dataclass(frozen=True)
class UnstoppedReading:
    """What retraining the stopped runs changed. ``points``: :func:`rgr.results.futile.retrained_points`;
    ``rows``: every verdict row of the regular table on both versions; the rest: counts for the chapter's prose
    (``false_*``: the false-stop point(s); ``plateau_*``: the plateau curves' points)."""

    retrained: int
    reached: int
    still_cut: int
    false_retrained: int
    false_reached: int
    false_f1_before: float
    false_f1_after: float
    plateau_retrained: int
    plateau_reached: int
    plateau_points: int
    plateau_shift_max: float  # largest |change| of a plateau point's mean F1
    plateau_shift_where: str  # that point: "r = 4, h = 2, D_K = 4096" ("—" without plateau points)
    plateau_best_before: float  # best mean F1 over the plateau points, before and after
    plateau_best_after: float
    rows_read: int
    rows_changed: int
    statuses_changed: int
    changed_words: str  # "none", or "key (status before -> after)" / "key (values only; still status)", ...
    points: pd.DataFrame
    rows: tuple[RowChange, ...]


def _change(a: ClaimRow, b: ClaimRow) -> RowChange:
    return RowChange(a.key, a.verdict.status, b.verdict.status, a.book, b.book, a.interval, b.interval,
                     float(a.value), float(b.value))


def _words(rows: tuple[RowChange, ...]) -> str:
    moved = [r for r in rows if r.changed]
    if not moved:
        return "none"
    return ", ".join(f"{r.key} ({r.status_before} -> {r.status_after})" if r.status_before != r.status_after
                     else f"{r.key} (values only; still {r.status_before})" for r in moved)


def unstopped_reading(src: Source, retrained: pd.DataFrame, plateaus: tuple[tuple[int, int], ...]) -> UnstoppedReading:
    """The regular table ``src`` read with ``retrained`` (the extension's rows at ``src``'s preset) in its stopped
    rows' place. ``plateaus``: the (r, h) curves read as plateaus (the other retrained points are false stops)."""
    pts = retrained_points(src.runs, retrained)
    after = Source(src.name, src.preset, with_retrained(src.runs, retrained))
    rows = tuple(_change(a, b) for a, b in zip(regular_rows(src), regular_rows(after)))
    on = pd.Series([(int(r), int(h)) in set(plateaus) for r, h in zip(pts["r"], pts["h"])], index=pts.index,
                   dtype=bool)
    fal, pla = pts[~on], pts[on]

    def mean(df: pd.DataFrame, col: str) -> float:  # a mean over the seeds of the points' runs
        return float((df[col] * df["seeds"]).sum() / df["seeds"].sum()) if len(df) else math.nan

    shift = (pla["f1_after"] - pla["f1_before"]).abs()
    top = pla.loc[shift.idxmax()] if len(pla) else None
    where = "—" if top is None else f"r = {int(top.r)}, h = {int(top.h)}, D_K = {int(top.D_K)}"
    return UnstoppedReading(
        retrained=int(pts["retrained"].sum()), reached=int(pts["reached"].sum()), still_cut=int(pts["still_cut"].sum()),
        false_retrained=int(fal["retrained"].sum()), false_reached=int(fal["reached"].sum()),
        false_f1_before=mean(fal, "f1_before"), false_f1_after=mean(fal, "f1_after"),
        plateau_retrained=int(pla["retrained"].sum()), plateau_reached=int(pla["reached"].sum()),
        plateau_points=len(pla), plateau_shift_max=float(shift.max()) if len(pla) else math.nan,
        plateau_shift_where=where,
        plateau_best_before=float(pla["f1_before"].max()) if len(pla) else math.nan,
        plateau_best_after=float(pla["f1_after"].max()) if len(pla) else math.nan,
        rows_read=len(rows), rows_changed=sum(r.changed for r in rows),
        statuses_changed=sum(r.status_before != r.status_after for r in rows), changed_words=_words(rows),
        points=pts, rows=rows,
    )
