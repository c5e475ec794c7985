"""D_K* against the step budget, cell by cell: the settled-threshold extension read beside the protocol (issue 45;
chapters *permutation sweeps* and *does it replicate?*).

For each cell of :data:`rgr.experiments.settled.UNITS` (and :data:`~rgr.experiments.settled.WIDE_UNITS`, the
preset ``wide``, once its rows are in the table) and each budget (1x: the ``paper`` table's own rows at the
same (h, D_K) points; 4x and 16x: ``settled``'s rows), :func:`budget_thresholds` gives D_K* (central, optimistic,
conservative) and h* over the design's points only, so the budgets are compared on the same ladder; how many runs at
D_K* still ran to their cutoff; and whether the budget's points are all there (a cell's reading counts only then).
A D_K* that falls with the budget measured training speed at the protocol's cutoff, not capacity; one that stays
put did not depend on the cutoff. A D_K* at the design's lowest point is censored from below, an upper bound: never
settled (:func:`settled_at`), and a ratio built on it says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..catalog import get, load_if_present, preset_completeness
from ..experiments.engine.config import step_cutoff
from ..experiments.settled import UNITS, WIDE_UNITS, Unit, budgets_for, seeds_for
from .stats import dk_star, summarize

SETTLED = "settled"
_WIDE = "wide"  # the preset of the (4096, 512) cell, read with the paper preset's rows
_ALL_UNITS: tuple[Unit, ...] = UNITS + WIDE_UNITS


def _presets_read(preset: str) -> list[str]:
    return [preset, _WIDE] if preset == "paper" else [preset]


def settled_runs(preset: str, root: Path | None = None) -> pd.DataFrame:
    """The extension's rows at ``preset`` (the preset the base grid is read at: paper or smoke), at paper with the
    ``wide`` preset's rows (the same rule at (4096, 512)); none where data/ has no table or no rows of it
    (:func:`rgr.catalog.load_if_present`)."""
    return load_if_present(SETTLED, _presets_read(preset), root)


def share_done(runs: pd.DataFrame, preset: str) -> float:
    """Of the runs the extension plans at ``preset`` (at paper with the wide cell's), the share in ``runs``
    (:func:`settled_runs` of that preset)."""
    n = {p: len(get(SETTLED).planned_runs(p)) for p in _presets_read(preset)}
    return sum((preset_completeness(SETTLED, p, done=runs) or 0.0) * k for p, k in n.items()) / sum(n.values())


def _design_units(settled: pd.DataFrame) -> tuple[Unit, ...]:
    """The design's units a reading of ``settled`` covers: :data:`UNITS`, and the wide cell's once it has rows."""
    wide = {(u.m, u.d_model) for u in WIDE_UNITS}
    has = bool(len(settled)) and any(c in wide for c in zip(settled["m"], settled["d_model"]))
    return _ALL_UNITS if has else UNITS


def _points_of(units: Sequence[Unit]) -> pd.DataFrame:
    """The design's (m, d_model, h, D_K) points."""
    return pd.DataFrame([(u.m, u.d_model, u.h, dk) for u in units for dk in u.D_K],
                        columns=["m", "d_model", "h", "D_K"])


def budget_rows(runs: pd.DataFrame, budget: int, units: Sequence[Unit] = _ALL_UNITS) -> pd.DataFrame:
    """The rows of ``runs`` on the design's points trained to ``budget`` times their cell's protocol cutoff."""
    if not len(runs):
        return runs
    pts = _points_of(units)
    on = runs.merge(pts, on=["m", "d_model", "h", "D_K"])
    cut = [budget * step_cutoff(int(m), int(d)) for m, d in zip(on["m"], on["d_model"])]
    return on[on["max_steps"].to_numpy() == cut] if len(on) else on


def budget_thresholds(settled: pd.DataFrame, paper: Mapping[str, pd.DataFrame],
                      units: Sequence[Unit] | None = None) -> pd.DataFrame:
    """One row per (m, d_model, budget): D_K* [opt, cons], h*, the runs at D_K* cut by their budget, the points'
    completeness. ``paper``: the paper tables the 1x reading comes from (``base``, ``lambda8``), rows of any cell;
    ``units``: by default :func:`_design_units` of ``settled``."""
    units = _design_units(settled) if units is None else units
    cells = list(dict.fromkeys((u.m, u.d_model) for u in units))
    frames = [budget_rows(t, 1, units).assign(budget=1) for t in paper.values() if len(t)]
    one = pd.concat(frames).drop_duplicates(["m", "d_model", "h", "D_K", "seed"]) if frames else pd.DataFrame()
    by_budget = {1: one, **{b: budget_rows(settled, b, units) for b in (4, 16)}}  # each budget's rows, read once
    out = []
    for m, d in cells:
        cell_units = [u for u in units if (u.m, u.d_model) == (m, d)]
        seeds = set(seeds_for(m))
        want = sum(len(u.D_K) for u in cell_units) * len(seeds)
        for budget in (1, 4, 16):
            src = by_budget[budget]
            rows = src[(src.m == m) & (src.d_model == d) & src.seed.isin(seeds)] if len(src) else src
            if budget == 16 and m > 1024:
                continue
            if not len(rows):
                out.append(dict(m=m, d_model=d, budget=budget, complete=0.0))
                continue
            s = summarize(rows, ["h", "D_K"], "test_f1")
            star = dk_star(s)
            at = rows[(rows.D_K == star.central) & (rows.h == star.h_star)] if star.central is not None else rows[:0]
            out.append(dict(m=m, d_model=d, budget=budget, D_K_star=star.central, D_K_opt=star.optimistic,
                            D_K_cons=star.conservative, h_star=star.h_star, at_star=len(at),
                            cut_at_star=int((at["stop_reason"] == "cutoff").sum()), complete=len(rows) / want))
    cols = ["m", "d_model", "budget", "D_K_star", "D_K_opt", "D_K_cons", "h_star", "at_star", "cut_at_star", "complete"]
    frame = pd.DataFrame(out).reindex(columns=cols)
    for c in ("D_K_star", "D_K_opt", "D_K_cons", "h_star", "at_star", "cut_at_star"):
        frame[c] = frame[c].astype("Int64")
    return frame


def lowest_points(units: Sequence[Unit] = _ALL_UNITS) -> dict[tuple[int, int], int]:
    """Each cell's smallest design D_K: a threshold found there may lie lower (the design has no point below)."""
    out: dict[tuple[int, int], int] = {}
    for u in units:
        out[(u.m, u.d_model)] = min(out.get((u.m, u.d_model), min(u.D_K)), min(u.D_K))
    return out


def one_head_budget(settled: pd.DataFrame, cells: Sequence[tuple[int, int]], units: Sequence[Unit] = UNITS
                    ) -> tuple[tuple[int, int], int, pd.DataFrame] | None:
    """The design's first one-head unit at one of ``cells`` (the paper's "one head never reaches the target"
    cells): its cell, its longest budget with every point's seeds, and those rows; None without one."""
    ones = [u for u in units if u.h == 1 and (u.m, u.d_model) in {tuple(c) for c in cells}]
    if not ones or not len(settled):
        return None
    u = ones[0]
    for budget in sorted(set(budgets_for(u.m)), reverse=True):
        rows = budget_rows(settled, budget, [u])
        if len(rows) == len(u.D_K) * len(seeds_for(u.m)):
            return (u.m, u.d_model), budget, rows.reset_index(drop=True)
    return None


SETTLED_SHARE = 0.2  # at most a fifth of the runs at a cell's new D_K* still cut (2 of 10, 0 of 3): few enough


def reading_budget(frame: pd.DataFrame, cells: Sequence[tuple[int, int]]) -> tuple[int, list[tuple[int, int]]] | None:
    """The longest budget (> 1x) to read ``cells`` at, and the cells read there: the longest one complete at every
    cell whose design has it (a cell without it in the design, m > 1024 at 16x, is left out), with at least two
    cells, else one cell alone when ``cells`` has one; None where no budget qualifies. ``frame``:
    :func:`budget_thresholds`."""
    if not len(cells):
        return None
    done = frame[(frame["budget"] > 1) & (frame["complete"] >= 1.0)]
    for b in sorted(set(frame["budget"]) - {1}, reverse=True):
        have = [c for c in cells if b in budgets_for(c[0])]
        ok = all(((done.m == m) & (done.d_model == d) & (done.budget == b)).any() for m, d in have)
        if ok and len(have) >= min(2, len(cells)):
            return int(b), have
    return None


def at_floor(frame: pd.DataFrame, m: int, d_model: int, budget: int) -> bool:
    """Whether the cell's D_K* at ``budget`` sits at the design's lowest tested D_K (:func:`lowest_points`): the
    reading is censored from below, an upper bound (the threshold may lie lower), not a measurement."""
    at = frame.set_index(["m", "d_model", "budget"])["D_K_star"]
    v = at.get((m, d_model, budget))
    return v is not None and not pd.isna(v) and v == lowest_points().get((m, d_model))


def settled_at(frame: pd.DataFrame, cells: Sequence[tuple[int, int]], budget: int) -> bool:
    """Whether the reading at ``budget`` is settled at every cell: at most :data:`SETTLED_SHARE` of the runs at the
    cell's D_K* still ran to ``budget``, and that D_K* lies above the design's lowest point (:func:`at_floor`: one at
    the lowest point is floor-censored, an upper bound, and not settled)."""
    at = frame.set_index(["m", "d_model", "budget"])
    return all(int(at.loc[(m, d, budget), "cut_at_star"]) <= SETTLED_SHARE * int(at.loc[(m, d, budget), "at_star"])
               and not at_floor(frame, m, d, budget) for m, d in cells)


def _full_budget(frame: pd.DataFrame, cells: Sequence[tuple[int, int]]) -> int | None:
    """The longest budget (> 1x) complete at every one of ``cells``; None without one."""
    done = frame[(frame["budget"] > 1) & (frame["complete"] >= 1.0)]
    for b in sorted(set(done["budget"].astype(int)), reverse=True):
        if all(((done.m == m) & (done.d_model == d) & (done.budget == b)).any() for m, d in cells):
            return b
    return None


def _rise_reading(frame: pd.DataFrame, cells: Sequence[tuple[int, int]], b: int, lead: str) -> str:
    """One budget's reading of the rise from ``cells``' first to last cell (D_K* at both ends at 1x and ``b``, the
    rise against the law's ln m_last / ln m_first, a floor-censored end named, settled or not); "" where an end has
    no threshold."""
    (m0, d0), (m1, d1) = cells[0], cells[-1]
    at = frame.set_index(["m", "d_model", "budget"])["D_K_star"]
    one, long = (at[(m0, d0, 1)], at[(m1, d1, 1)]), (at[(m0, d0, b)], at[(m1, d1, b)])
    if any(pd.isna(v) for v in (*one, *long)):
        return ""
    law = math.log(m1) / math.log(m0)
    r1, rb = one[1] / one[0], long[1] / long[0]
    span = f"the rise from m = {m0} to m = {m1}"
    low0, low1 = at_floor(frame, m0, d0, b), at_floor(frame, m1, d1, b)
    if low0 or low1:
        where = "at both cells" if low0 and low1 else f"at m = {m1 if low1 else m0}"
        what = ("so both are upper bounds (D_K* may lie lower) and" if low0 and low1 else
                "an upper bound (D_K* may lie lower), so")
        is_ = ("floor-censored, not a measurement" if low0 and low1 else
               "an upper bound" if low1 else "a lower bound")
        said = (f", but {long[1] if low1 else long[0]:g} is the design's lowest point {where}, {what} {span}, "
                f"{rb:.2f} (1x: {r1:.2f}; the law's {law:.2f}), is {is_}")
    elif round(rb, 2) == round(r1, 2):
        said = f", so {span} stays at {rb:.2f} (as at 1x), against the law's {law:.2f}"
    else:
        toward = "toward" if abs(rb - law) < abs(r1 - law) else "away from"
        said = f", so {span} moves from {r1:.2f} to {rb:.2f}, {toward} the law's {law:.2f}"
    cut = frame.set_index(["m", "d_model", "budget"])
    still = ", ".join(f"m = {m}: {int(cut.loc[(m, d, b), 'cut_at_star'])} of {int(cut.loc[(m, d, b), 'at_star'])}"
                      for m, d in cells)
    few = all(int(cut.loc[(m, d, b), "cut_at_star"]) <= SETTLED_SHARE * int(cut.loc[(m, d, b), "at_star"])
              for m, d in cells)
    more = [m for m, d in cells[1:-1] if at_floor(frame, m, d, b)]  # the ends' floors are named above
    parts = ([f"D_K* at the design's lowest point, an upper bound, at m = {', '.join(map(str, more))}"] * bool(more)
             + [f"runs at the new D_K* still cut ({still}), so a longer budget may move it further"] * (not few))
    tail = ("not settled: " + "; ".join(parts) if parts else "not settled" if low0 or low1
            else "settled: few runs at the new thresholds still ran to the budget")
    return (f"{lead}with {b}x the cutoff, D_K* {_moves(one[0], long[0])} at m = {m0} and "
            f"{_moves(one[1], long[1])} at m = {m1}{said}; {tail}.")


def diagonal_budget_reason(frame: pd.DataFrame, m_from: int, lam: int = 8) -> str:
    """The step cutoff's effect on the diagonal's rise from m = ``m_from`` on, measured with a longer budget
    (:func:`_rise_reading`) at the longest budget read (:func:`reading_budget`), naming the cell it reaches; where
    that budget stops short of the diagonal's last cell (16x: m <= 1024), also at the longest budget complete up to
    it; "" without a longer budget. Shared by chapters *permutation sweeps* and *does it replicate?*."""
    diag = sorted({(int(m), int(d)) for m, d in frame[(frame.m == lam * frame.d_model)
                                                        & (frame.m >= m_from)][["m", "d_model"]].to_numpy()})
    got = reading_budget(frame, diag)
    if got is None:
        return ""
    b, cells = got
    first = _rise_reading(frame, cells, b, "Measured with a longer step budget (the settled extension, not the "
                                           "protocol): ")
    if not first or cells[-1] == diag[-1]:
        return first
    full = _full_budget(frame, diag)
    if full is None or full == b:
        return first
    lead = f"Up to m = {diag[-1][0]} (the design has {b}x only to m = {cells[-1][0]}): "
    return f"{first} {_rise_reading(frame, diag, full, lead)}".rstrip()


def _moves(a: float, b: float) -> str:
    return f"falls from {a:g} to {b:g}" if b < a else f"stays at {a:g}" if b == a else f"rises from {a:g} to {b:g}"


@dataclass(frozen=True)
class _SettledFinding:
    """What the extension shows so far, for the chapters' prose: the share of its planned runs in the table, the
    cells with a complete longer budget, at their longest one how many D_K* fell below, stayed at or rose above the
    protocol's, how many of those readings are settled (:func:`settled_at`) and how many sit at the design's lowest
    point (floor-censored: upper bounds, never settled), the longest
    budget read, and the diagonal's measured reason (:func:`diagonal_budget_reason`, from ``m_from``)."""

    share_done: float
    n_cells: int
    n_fell: int
    n_same: int
    n_rose: int
    n_settled: int
    n_floor: int
    longest: str
    diagonal_reason: str


def settled_finding(frame: pd.DataFrame, share_done: float, m_from: int = 512) -> _SettledFinding:
    """:class:`_SettledFinding` of :func:`budget_thresholds`'s ``frame``; ``share_done``: of the extension's planned
    runs, the share in the table (:func:`rgr.catalog.preset_completeness`)."""
    done = frame[(frame["budget"] > 1) & (frame["complete"] >= 1.0) & frame["D_K_star"].notna()]
    last = done.sort_values("budget").groupby(["m", "d_model"]).tail(1)
    one = frame[frame["budget"] == 1].set_index(["m", "d_model"])["D_K_star"]
    before = np.array([one.get((m, d), np.nan) for m, d in last[["m", "d_model"]].to_numpy()], float)
    after = last["D_K_star"].to_numpy(float)
    low = lowest_points()
    settled = [settled_at(frame, [(int(m), int(d))], int(b)) for m, d, b in last[["m", "d_model", "budget"]].to_numpy()]
    floor = [a == low.get((int(m), int(d))) for a, (m, d) in zip(after, last[["m", "d_model"]].to_numpy())]
    budgets = sorted(set(last["budget"].astype(int)))
    reason = diagonal_budget_reason(frame, m_from)
    return _SettledFinding(share_done=float(share_done), n_cells=len(last),
                          n_fell=int((after < before).sum()), n_same=int((after == before).sum()),
                          n_rose=int((after > before).sum()), n_settled=int(sum(settled)), n_floor=int(sum(floor)),
                          longest="–".join(f"{b}x" for b in budgets) or "none",
                          diagonal_reason=reason or "No longer budget is complete on the diagonal yet.")
