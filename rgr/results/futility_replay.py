"""Replay a futility rule on a finished table: what it saves and whether it changes any answer
(chapter *permutation sweeps*).

Every row keeps its validation curve (``val_curve``), so a rule
(:class:`rgr.experiments.futility.FutilityRule`) can be replayed exactly: a run
the rule would have stopped at check k ends there, with ``steps`` = that check's
step, ``stop_reason = "futile"`` and, as its F1, the validation F1 at that check
(the engine measures the test F1 at the stop; the table has no test F1 there, and
the validation F1 on 500 contexts is its estimate). Then the per-cell answers are
recomputed (:func:`rgr.results.thresholds.thresholds`) and compared with the
table's own: D_K* (central, optimistic, conservative), h* and its tied range, and
every (cell, h, D_K) point whose mean F1 passes or fails the target (the points
the planner's refinement rounds follow: no changed point means the sweep would
have tested the same budgets).

``python -m rgr replay-stopping <table> --preset <p>`` prints :func:`_report_lines`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import catalog
from ..experiments.futility import FutilityRule, replayed_stops, rule_named
from ..protocol import F1_TARGET, reaches_target
from .thresholds import CELL, curves, thresholds

_ANSWERS = ("D_K_star", "D_K_opt", "D_K_cons", "h_star")  # a cell's answers: any change fails the replay
_TIED = ("h_lo", "h_hi")


def replay(runs: pd.DataFrame, rule: FutilityRule) -> pd.DataFrame:
    """The table as it would be had ``rule`` been on: stopped runs shortened, their F1 the validation F1 at the stop.

    Rows of the value channel (MSE; no F1 curve) are left as they are.
    """
    out = runs.copy()
    for i, at in replayed_stops(runs, rule).items():
        if at is not None:
            out.at[i, "steps"], out.at[i, "test_f1"], out.at[i, "stop_reason"] = at[0], at[1], "futile"
    return out


@dataclass(frozen=True)
class _Replay:
    """What a replay found on one table (see the module doc)."""

    runs: int
    stopped: int  # runs the rule stops
    steps_before: int  # model-steps the table's runs took
    steps_after: int  # model-steps with the rule on
    passing_stopped: int  # runs with final test F1 >= the target that the rule would stop
    changed_cells: pd.DataFrame  # one row per (cell, answer) that moved: before, after
    changed_points: pd.DataFrame  # (cell, h, D_K) whose mean F1 passes on one side only
    changed_tied: pd.DataFrame  # cells whose h* tied range moved

    @property
    def saved(self) -> float:
        """Share of model-steps the rule saves."""
        return 1.0 - self.steps_after / self.steps_before if self.steps_before else 0.0

    @property
    def unchanged(self) -> bool:
        """No passing run stopped, no answer of any cell and no pass/fail of any point changed."""
        return self.passing_stopped == 0 and self.changed_cells.empty and self.changed_points.empty


def compare(runs: pd.DataFrame, rule: FutilityRule, law: str = "permutation") -> _Replay:
    """Replay ``rule`` on ``runs`` (rows of one preset) and compare every answer with the table's own."""
    f1 = runs[runs["model"] != "value"]
    if f1.empty:
        raise ValueError("runs: no rows with an F1 curve to replay (the value channel has none)")
    after = replay(f1, rule)
    before_cells, after_cells = thresholds(f1, law), thresholds(after, law)
    both = before_cells.merge(after_cells, on=CELL, suffixes=("_before", "_after"))
    moved = [dict(zip(CELL, key), answer=a, before=_txt(r[f"{a}_before"]), after=_txt(r[f"{a}_after"]))
             for key, r in zip(both[CELL].itertuples(index=False), both.to_dict("records"))
             for a in _ANSWERS if _txt(r[f"{a}_before"]) != _txt(r[f"{a}_after"])]
    tied = both[[any(_txt(r[f"{c}_before"]) != _txt(r[f"{c}_after"]) for c in _TIED)
                 for r in both.to_dict("records")]]
    return _Replay(
        runs=len(f1), stopped=int((after["stop_reason"] == "futile").sum()),
        steps_before=int(f1["steps"].sum()), steps_after=int(after["steps"].sum()),
        passing_stopped=int(((f1["test_f1"] >= F1_TARGET) & (after["stop_reason"] == "futile")).sum()),
        changed_cells=pd.DataFrame(moved, columns=[*CELL, "answer", "before", "after"]),
        changed_points=_changed_points(f1, after),
        changed_tied=tied[[*CELL, *(f"{c}_{s}" for c in _TIED for s in ("before", "after"))]].reset_index(drop=True),
    )


def _changed_points(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    key = [*CELL, "h", "D_K"]
    a, b = curves(before), curves(after)
    both = a[key].assign(before=reaches_target(a["mean"]).to_numpy(), after=reaches_target(b["mean"]).to_numpy())
    return both[both["before"] != both["after"]].reset_index(drop=True)


def _txt(v: object) -> str:
    return "-" if v is None or pd.isna(v) else str(int(v))


def _report_lines(name: str, preset: str, rule: FutilityRule, result: _Replay) -> list[str]:
    """What ``replay-stopping`` prints."""
    lines = [
        f"{name}/{preset}: rule {rule.name!r} replayed on {result.runs} runs' validation curves",
        f"  stops {result.stopped} runs; model-steps {result.steps_before:,} -> {result.steps_after:,} "
        f"({100 * result.saved:.1f}% saved)",
        f"  passing runs (final test F1 >= {F1_TARGET}) it would stop: {result.passing_stopped}",
        f"  cells whose D_K* (central, optimistic, conservative) or h* changes: "
        f"{result.changed_cells[CELL].drop_duplicates().shape[0]}",
    ]
    lines += [f"    (m={r.m}, d_model={r.d_model}, r={r.r}) {r.answer}: {r.before} -> {r.after}"
              for r in result.changed_cells.itertuples()]
    lines.append(f"  (cell, h, D_K) points whose mean F1 passes on one side only: {len(result.changed_points)}")
    lines += [f"    (m={r.m}, d_model={r.d_model}, r={r.r}) h={r.h} D_K={r.D_K}: "
              f"{'pass' if r.before else 'fail'} -> {'pass' if r.after else 'fail'}"
              for r in result.changed_points.itertuples()]
    lines.append(f"  cells whose h* tied range changes (reported, not an answer): {len(result.changed_tied)}")
    lines.append("  verdict: " + ("no answer changes" if result.unchanged else "ANSWERS CHANGE"))
    return lines


def replay_table(table: str, preset: str, rule: str = "trend-v1") -> list[str]:
    """``python -m rgr replay-stopping``: replay ``rule`` on a table (a name, or a path to data/<name>.csv)."""
    path = Path(table) if table.endswith(".csv") else None
    name = catalog.schema_for_file(path).name if path is not None else catalog.get(table).name
    sweep = catalog.get(name)
    if not hasattr(sweep, "graph"):
        raise ValueError(f"table: {name} is not a protocol sweep with validation curves")
    if preset not in sweep.presets:
        raise ValueError(f"--preset must be one of {sorted(sweep.presets)}, got {preset!r}")
    try:
        chosen = rule_named(rule)
    except ValueError as e:
        raise ValueError(str(e).replace("futility must", "--rule must")) from None
    runs = catalog.load(name, preset, root=None if path is None else path.parent)
    if runs.empty:
        raise ValueError(f"--preset: {name} has no rows of preset {preset!r}")
    result = compare(runs, chosen, law="regular" if sweep.graph == "regular" else "permutation")
    return _report_lines(name, preset, chosen, result)
