"""Second readings with a longer step budget (issue 45; chapter *Does it replicate?*, "With a longer budget").

Each verdict row that reads the settled-threshold extension's cells (:mod:`rgr.experiments.settled`: which cells,
budgets and runs, and why) is read once more, by the same reader on the same seed resamples, with each settled cell's
draws taken from the extension's runs at one budget (:func:`_longer_draws`; the budget:
:func:`rgr.results.settled.reading_budget`); :func:`with_longer` puts that reading beside the protocol's (what
"settled" and "budget-bound" mean: the chapter's section and :func:`rgr.chapters.verdict_table.longer_frame`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...protocol import F1_TARGET
from .. import reported as rep
from ..settled import (
    SETTLED_SHARE,
    at_floor,
    budget_rows,
    budget_thresholds,
    diagonal_budget_reason,
    one_head_budget,
    reading_budget,
    settled_at,
)
from ..thresholds import CELL, curves
from .fig4 import diag_heads, diagonal_runs, growth_rows
from .paper_arithmetic import ArithmeticCheck
from .rows import ClaimRow, Longer, Source, reached
from .sec61 import SharedBase, dk_rows, excluded_above, heads_rows, law_rows
from .seed_bootstrap import Draws, seed_draws
from .verdicts import Verdict

_LIKELY = "a likely reason, not measured here:"  # how the diagonal's row offers the cutoff (fig4.growth_rows)


def _longer_draws(draws: Draws, longer: pd.DataFrame) -> Draws:
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
    (:func:`rgr.results.settled.settled_at`: few runs cut and no D_K* at the design's lowest point), and D_K* per
    cell from 1x to ``budget``, each one at the design's lowest point named (:func:`~rgr.results.settled.at_floor`:
    floor-censored, an upper bound)."""
    at = frame.set_index(["m", "d_model", "budget"])
    cut, moved = [], []
    for m, d in cells:
        b, one = at.loc[(m, d, budget)], at.loc[(m, d, 1)]
        cut.append(f"({m}, {d}) {int(b['cut_at_star'])} of {int(b['at_star'])}")
        floor = " (at the design's lowest point: an upper bound)" if at_floor(frame, m, d, budget) else ""
        moved.append(f"({m}, {d}) {one['D_K_star']:g} → {b['D_K_star']:g}{floor}")
    return "; ".join(cut), settled_at(frame, cells, budget), "; ".join(moved)


def _floor_note(frame: pd.DataFrame, cells: Sequence[tuple[int, int]], budget: int) -> str:
    """Words for a value built on D_K* at the design's lowest point (an upper bound, not a measurement): which of the
    reading's cells are floor-censored; "" where none is."""
    low = [c for c in cells if at_floor(frame, *c, budget)]
    if not low:
        return ""
    n = len(cells)
    which = ({1: "the cell retrained", 2: "both cells"}.get(n, "every cell") if len(low) == n else
             f"{len(low)} of the {n} cells retrained")
    return f" (built on D_K* at the design's lowest point, an upper bound, at {which})"


def _longer(row: ClaimRow, budget: int, frame: pd.DataFrame, cells: Sequence[tuple[int, int]],
            reason: str = "", built_on: Sequence[tuple[int, int]] | None = None) -> Longer:
    """The second reading of ``row`` at ``budget`` over ``cells``; ``built_on``: the cells the row's value is built
    from, where fewer (the diagonal's rise from m = 512), for the floor note (:func:`_floor_note`)."""
    cut, settled, moved = _cut(frame, cells, budget)
    note = _floor_note(frame, cells if built_on is None else built_on, budget)
    return Longer(budget=budget, book=row.book + note, interval=row.interval,
                  status=row.verdict.status, said=row.verdict.detail.split("; ")[0], settled=settled, cut=cut,
                  moved=moved, reason=reason)


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
        sb = SharedBase(base, _longer_draws(draws, runs), None, "", list(checks))
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
        m_from = rep.claim("diag_growth").value
        reason = diagonal_budget_reason(frame, m_from)
        rise = [c for c in dcells if c[0] >= m_from]  # the cells the rise is read on
        for r in growth_rows(d, "", seeds) + [diag_heads(d, "")]:
            grow = r.key == "diag_growth"
            out[r.key] = _longer(r, b, frame, dcells, reason if grow else "", rise if grow else None)
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
