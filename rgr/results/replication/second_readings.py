"""Second readings with a longer step budget (issue 45; chapter *Does it replicate?*, "With a longer budget").

The settled-threshold extension (:mod:`rgr.experiments.settled`, declared before its first row; not the paper's
protocol) retrained the runs at and near D_K* with 4x and 16x the protocol's step cutoff at the cells where the
cutoff cut most runs at D_K*: the lambda = 8 diagonal from m = 128 to 2048 and four more base cells. Each verdict
row that reads those cells is read once more here, by the same reader on the same seed resamples, with each
settled cell's draws taken from the extension's runs at one budget (:func:`longer_draws`); a base cell the
extension does not cover keeps its protocol draws (fewer than half of its runs at D_K* were cut).

A row's budget is the longest one complete at every extension cell it reads whose design has it
(:func:`rgr.results.settled.reading_budget`), so one reading never mixes budgets. The reading is *settled* when at
most :data:`rgr.results.settled.SETTLED_SHARE` of the runs at each cell's new D_K* (its h*) still ran to the budget;
otherwise a longer budget might move it further. The diagonal's row replaces the cutoff it offered as a likely
reason with the measurement (:func:`rgr.results.settled.diagonal_budget_reason`, the sentence chapter *permutation
sweeps* gives too).
:func:`with_longer` puts the reading beside the protocol's (:class:`~rgr.results.replication.rows.Longer`) and
makes the cause measured: a deviation that agrees with a longer budget is "budget_bound"; one that still
deviates says "not budget-bound" when settled, and "not settled" otherwise.

The regular table read again with its retrained futility stops (issue 45, item 5; chapter *denser graphs*).

The ``unstopped`` extension (:mod:`rgr.experiments.unstopped`, declared before its first row; not the protocol)
retrained, with futility stopping off, the regular table's stopped runs at its false-stop point and on the two
plateau curves. :func:`unstopped_reading` puts them in the stopped rows' place
(:func:`rgr.experiments.futility.with_retrained`), says per retrained point what changed
(:func:`rgr.experiments.futility.retrained_points`) and reads the verdict rows of the regular table
(:func:`rgr.results.replication.fig4.regular_rows`: the fit, the bound's form, the plateaus, h*) on both versions.
A second reading only: the protocol table's rows stay the verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ...catalog import load_if_present
from ...experiments.futility import retrained_points, with_retrained
from ...task.metrics import F1_TARGET
from ..settled import (
    SETTLED,
    SETTLED_SHARE,
    budget_rows,
    budget_thresholds,
    diagonal_budget_reason,
    lowest_points,
    one_head_budget,
    reading_budget,
    settled_at,
    settled_runs,
)
from ..thresholds import CELL, curves
from . import reported as rep
from .fig4 import diag_heads, diagonal_runs, growth_rows, regular_rows
from .paper_arithmetic import ArithmeticCheck
from .rows import ClaimRow, Longer, Source, reached
from .sec61 import SharedBase, dk_rows, excluded_above, heads_rows, law_rows
from .seed_bootstrap import Draws, seed_draws
from .verdicts import Verdict

__all__ = ["settled_source", "longer_draws", "longer_rows", "with_longer", "longer_summary",
           "UNSTOPPED", "unstopped_runs", "unstopped_reading"]

_LIKELY = "a likely reason, not measured here:"  # how the diagonal's row offers the cutoff (fig4.growth_rows)


def settled_source(preset: str, root: Path | None = None) -> Source:
    """:func:`rgr.results.settled.settled_runs` as a :class:`~rgr.results.replication.rows.Source`."""
    return Source(SETTLED, preset, settled_runs(preset, root))


def longer_draws(draws: Draws, longer: pd.DataFrame) -> Draws:
    """``draws`` with every cell that ``longer`` (runs of one budget) holds replaced by that budget's draws (its
    cells' thresholds and seed replicates); the other cells as they were."""
    if not len(longer):
        return draws
    new = seed_draws(longer, n_boot=draws.n_boot)
    key = lambda c: list(map(tuple, c[CELL].to_numpy(int)))  # noqa: E731
    at = {k: i for i, k in enumerate(key(new.cells))}
    cells, dk, h, dk1 = draws.cells.copy(), draws.dk.copy(), draws.h.copy(), draws.dk1.copy()
    for i, k in enumerate(key(draws.cells)):
        if k in at:
            j = at[k]
            cols = [c for c in cells.columns if c in new.cells.columns]
            cells.loc[i, cols] = new.cells.loc[j, cols].to_numpy()
            dk[i], h[i] = new.dk[j], new.h[j]  # one head's threshold (dk1) is not retrained: kept
    return Draws(cells, dk, h, dk1)


def _cut(frame: pd.DataFrame, cells: Sequence[tuple[int, int]], budget: int) -> tuple[str, bool, str]:
    """Runs at each cell's D_K* still cut at ``budget`` (words), whether the reading is settled
    (:func:`rgr.results.settled.settled_at`), and D_K* per cell from 1x to ``budget``."""
    at = frame.set_index(["m", "d_model", "budget"])
    low = lowest_points()
    cut, moved = [], []
    for m, d in cells:
        b, one = at.loc[(m, d, budget)], at.loc[(m, d, 1)]
        cut.append(f"({m}, {d}) {int(b['cut_at_star'])} of {int(b['at_star'])}")
        floor = " (the design's lowest point: it may lie lower)" if b["D_K_star"] == low.get((m, d)) else ""
        moved.append(f"({m}, {d}) {one['D_K_star']:g} → {b['D_K_star']:g}{floor}")
    return "; ".join(cut), settled_at(frame, cells, budget), "; ".join(moved)


def _longer(row: ClaimRow, budget: int, frame: pd.DataFrame, cells: Sequence[tuple[int, int]],
            reason: str = "") -> Longer:
    cut, settled, moved = _cut(frame, cells, budget)
    return Longer(budget=budget, book=row.book, interval=row.interval, status=row.verdict.status,
                  said=row.verdict.detail.split("; ")[0], settled=settled, cut=cut, moved=moved, reason=reason)


def _base_cells(base: pd.DataFrame, extension: pd.DataFrame) -> list[tuple[int, int]]:
    have = set(map(tuple, base[["m", "d_model"]].drop_duplicates().to_numpy(int))) if len(base) else set()
    return [c for c in dict.fromkeys(map(tuple, extension[["m", "d_model"]].to_numpy(int))) if c in have]


def longer_rows(base: Source, lam: Source, settled: Source, checks: Sequence[ArithmeticCheck],
                base_draws: Draws | None = None) -> dict[str, Longer]:
    """Each verdict row that reads the extension's cells, read at its common budget, by claim key;
    ``base_draws``: the protocol's seed draws of ``base`` where the caller has them (computed otherwise)."""
    if not len(settled.runs) or not len(base.runs):
        return {}
    frame = budget_thresholds(settled.runs, {"base": base.runs, "lambda8": lam.runs})
    out: dict[str, Longer] = {}
    got = reading_budget(frame, _base_cells(base.runs, settled.runs))
    if got is not None:
        b, cells = got
        runs = budget_rows(settled.runs, b)
        runs = runs[[(m, d) in cells for m, d in runs[["m", "d_model"]].to_numpy(int)]]
        draws = base_draws if base_draws is not None else seed_draws(base.runs)
        sb = SharedBase(base, longer_draws(draws, runs), None, "", list(checks))
        for r in law_rows(sb, "") + [excluded_above(sb, "")] + heads_rows(sb, "") + dk_rows(sb, ""):
            out[r.key] = _longer(r, b, frame, cells)
    diag = diagonal_runs(base, lam)
    dcells = [c for c in dict.fromkeys(map(tuple, settled.runs[["m", "d_model"]].to_numpy(int)))
              if c[0] == 8 * c[1] and c in set(map(tuple, diag[["m", "d_model"]].to_numpy(int)))]
    got = reading_budget(frame, sorted(dcells))
    if got is not None:
        b, dcells = got
        runs = budget_rows(settled.runs, b)
        d = reached(seed_draws(runs[[(m, q) in dcells for m, q in runs[["m", "d_model"]].to_numpy(int)]]))
        d = d.take(np.argsort(d.cells["m"].to_numpy(), kind="stable"))
        seeds = {int(m): int(g["seed"].nunique()) for m, g in runs.groupby("m")}
        reason = diagonal_budget_reason(frame, rep.claim("diag_growth").value)
        for r in growth_rows(d, "", seeds) + [diag_heads(d, "")]:
            out[r.key] = _longer(r, b, frame, dcells, reason if r.key == "diag_growth" else "")
    one = _one_head(settled.runs)
    if one is not None:
        out["single_head_never"] = one
    return out


def _one_head(settled: pd.DataFrame) -> Longer | None:
    """One head at the extension's one-head cell, at its longest budget with every point's seeds: best mean F1
    against the target (the claim: it never reaches it)."""
    got = one_head_budget(settled, rep.claim("single_head_never").value)
    if got is None:
        return None
    (m, d), budget, rows = got
    s = curves(rows).sort_values("mean")
    best = s.iloc[-1]
    never = bool(best["hi"] < F1_TARGET)
    cut = int((rows["stop_reason"] == "cutoff").sum())
    book = f"({m}, {d}): best mean F1 {best['mean']:.2f} up to D_K = {int(rows.D_K.max())}"
    return Longer(budget=budget, book=book, interval=f"[{best['lo']:.2f}, {best['hi']:.2f}]",
                  status="agrees" if never else "deviates",
                  said=("one head stays below F1 " if never else "one head reaches F1 ") + f"{F1_TARGET:g} across "
                  "its 95% t-interval", settled=cut <= SETTLED_SHARE * len(rows),
                  cut=f"({m}, {d}) h = 1: {cut} of {len(rows)}", moved="")


def with_longer(rows: Sequence[ClaimRow], longer: Mapping[str, Longer]) -> list[ClaimRow]:
    """``rows`` with their second reading; a deviation that agrees with the longer budget becomes
    "budget_bound" (unless its reader found a cause of its own or it is a near miss)."""
    out = []
    for r in rows:
        x = longer.get(r.key)
        if x is None:
            out.append(r)
            continue
        v = r.verdict
        detail = v.detail
        at = detail.lower().find(_LIKELY)
        if x.reason and at >= 0:  # the cutoff, offered as a likely reason at the protocol's budget, is measured now
            detail = detail[:at].rstrip(" ;.") + ". " + x.reason
        cause = "budget_bound" if (v.status == "deviates" and x.status == "agrees" and not v.cause
                                   and not v.near_miss) else v.cause
        v = Verdict(v.status, detail, v.near_miss, cause)
        out.append(replace(r, verdict=v, longer=x))
    return out


@dataclass(frozen=True)
class _LongerSummary:
    """How the rows read again with a longer budget fare: how many have a second reading, how many keep their
    status there and how many change it, the deviations that become budget-bound, the settled readings, and the
    budgets read ("4x", "4x–16x"; "none")."""

    n_rows: int
    n_same: int
    n_changed: int
    n_budget_bound: int
    n_settled: int
    budgets: str


def longer_summary(rows: Sequence[ClaimRow]) -> _LongerSummary:
    """:class:`_LongerSummary` of verdict ``rows`` (after :func:`with_longer`)."""
    got = [r for r in rows if r.longer is not None]
    same = sum(r.longer.status == r.verdict.status for r in got)
    budgets = sorted({r.longer.budget for r in got})
    return _LongerSummary(n_rows=len(got), n_same=same, n_changed=len(got) - same,
                         n_budget_bound=sum(r.verdict.cause == "budget_bound" for r in got),
                         n_settled=sum(r.longer.settled for r in got),
                         budgets="–".join(f"{b}x" for b in budgets) or "none")


UNSTOPPED = "unstopped"


def unstopped_runs(preset: str, root: Path | None = None) -> pd.DataFrame:
    """The extension's rows at ``preset``; none when data/ has no table or no rows of it
    (:func:`rgr.catalog.load_if_present`)."""
    return load_if_present(UNSTOPPED, preset, root)


@dataclass(frozen=True)
class _RowChange:
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
class _UnstoppedReading:
    """What retraining the stopped runs changed. ``points``: :func:`rgr.experiments.futility.retrained_points`;
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
    rows: tuple[_RowChange, ...]


def _change(a: ClaimRow, b: ClaimRow) -> _RowChange:
    return _RowChange(a.key, a.verdict.status, b.verdict.status, a.book, b.book, a.interval, b.interval,
                     float(a.value), float(b.value))


def _words(rows: tuple[_RowChange, ...]) -> str:
    moved = [r for r in rows if r.changed]
    if not moved:
        return "none"
    return ", ".join(f"{r.key} ({r.status_before} -> {r.status_after})" if r.status_before != r.status_after
                     else f"{r.key} (values only; still {r.status_before})" for r in moved)


def unstopped_reading(src: Source, retrained: pd.DataFrame, plateaus: tuple[tuple[int, int], ...]) -> _UnstoppedReading:
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
    return _UnstoppedReading(
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
