"""Futility stopping: end a run whose validation curve shows it cannot reach the F1 target
(chapter *permutation sweeps*).

An optional, declared part of the protocol for the sweeps of the paper preset
still to run (data/SCHEMA.md, README "Futility stopping"). Early termination of
trials that cannot succeed is old practice in sequential trials (futility
stopping; Jennison and Turnbull, *Group Sequential Methods with Applications to
Clinical Trials*, 2000) and in hyperparameter search (the median stopping rule of
Golovin et al., Google Vizier, KDD 2017; successive halving, Jamieson and
Talwalkar, AISTATS 2016; learning-curve extrapolation, Domhan et al., IJCAI 2015).
The first two compare a trial with its peers; the rule here, like curve
extrapolation, reads the run's own curve only, so a run's fate never depends on
the stack or the sweep it is in.

The rule (:class:`FutilityRule`, the one named ``"trend-v1"``), at every
validation check from ``start`` x the step cutoff on:

- the *window* is the later half of the checks so far (at least ``min_window``);
- a run whose best validation F1 in the window reaches ``level`` is never stopped;
- otherwise the window's least-squares slope (clipped at 0) is extended from
  that best value to the cutoff; if even that line stays below the F1 target,
  the run is *futile*: it stops, counts as failing, keeps the F1 it had and
  records ``stop_reason = "futile"``.

Linear extension of a saturating curve from its best point is optimistic, so the
rule errs towards training on. It was chosen on the base grid's paper rows only
and then replayed, unchanged, on every other table
(``python -m rgr replay-stopping``; :mod:`rgr.results.futility_replay`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..task.metrics import F1_TARGET

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FutilityRule", "RULES", "rule_named", "futile", "first_futile_check", "replayed_stops", "kept_share"]


@dataclass(frozen=True)
class FutilityRule:
    """A futility rule on a run's own validation F1 curve (see the module doc). Frozen: a name means one rule."""

    name: str
    start: float = 0.1  # no stop before this fraction of the step cutoff
    level: float = 0.8  # a window whose best validation F1 reaches this is never stopped
    min_window: int = 4  # checks in the trend window, at least
    target: float = F1_TARGET  # the F1 the projection must fall short of

    def __post_init__(self) -> None:
        if not 0.0 <= self.start <= 1.0:
            raise ValueError(f"start must be in [0, 1], got {self.start}")
        if not 0.0 < self.level <= self.target:
            raise ValueError(f"level must be in (0, target], got {self.level}")
        if not (isinstance(self.min_window, int) and self.min_window >= 2):
            raise ValueError(f"min_window must be an integer >= 2, got {self.min_window!r}")

    def is_futile(self, curve: Sequence[tuple[int, float]], max_steps: int) -> bool:
        """Whether a run with validation ``curve`` [(step, F1), ...] so far should stop as futile now."""
        step = curve[-1][0] if curve else 0
        n = max(self.min_window, len(curve) // 2)
        if step < self.start * max_steps or len(curve) < n:
            return False
        window = curve[-n:]
        best = max(v for _, v in window)
        if best >= self.level:
            return False
        return best + max(_slope(window), 0.0) * (max_steps - step) < self.target


def _slope(points: Sequence[tuple[int, float]]) -> float:
    """Least-squares slope of F1 on step (float64, in a fixed order: the same on every machine for the same curve)."""
    n = len(points)
    mx = sum(float(s) for s, _ in points) / n
    my = sum(float(v) for _, v in points) / n
    sxx = sum((float(s) - mx) ** 2 for s, _ in points)
    sxy = sum((float(s) - mx) * (float(v) - my) for s, v in points)
    return sxy / sxx if sxx > 0 else 0.0


RULES: dict[str, FutilityRule] = {r.name: r for r in (FutilityRule("trend-v1"),)}


def rule_named(name: str) -> FutilityRule:
    """The rule called ``name``; a ValueError naming the field otherwise."""
    if name not in RULES:
        raise ValueError(f"futility must be one of {sorted(RULES)} or None, got {name!r}")
    return RULES[name]


def futile(name: str | None, curve: Sequence[tuple[int, float]], max_steps: int) -> bool:
    """The engine's test at a check: False when the run has no rule (``name`` None)."""
    return name is not None and rule_named(name).is_futile(curve, max_steps)


def first_futile_check(rule: FutilityRule, curve: Sequence[tuple[int, float]], max_steps: int,
                       steps: int) -> int | None:
    """Index of the check at which ``rule`` would have stopped a run that ended at ``steps``; None if it would not.

    The engine applies the rule after every check at which the run neither converged nor reached its
    cutoff, i.e. before step ``steps``; so does this replay.
    """
    for k in range(1, len(curve) + 1):
        if curve[k - 1][0] >= steps:
            return None
        if rule.is_futile(curve[:k], max_steps):
            return k - 1
    return None


def replayed_stops(runs: "pd.DataFrame", rule: FutilityRule) -> "pd.Series":
    """Per row of a finished table: (step, validation F1) at which ``rule`` would have stopped it, or None.

    The one replay of the stored curves; value-channel rows (no F1 curve) get None.
    """
    def stop(row) -> tuple[int, float] | None:
        if row["model"] == "value":
            return None
        curve = [(int(s), float(v)) for s, v in row["val_curve"]]
        k = first_futile_check(rule, curve, int(row["max_steps"]), int(row["steps"]))
        return None if k is None else curve[k]

    return runs.apply(stop, axis=1)


def kept_share(runs: "pd.DataFrame", rule: FutilityRule) -> float:
    """Model-steps the runs would have taken with ``rule`` on, as a share of their bound (every run to its cutoff).

    ``runs``: rows of a finished table (F1 models); the projection's estimate of what the rule leaves to train.
    """
    f1 = runs[runs["model"] != "value"]
    if f1.empty:
        raise ValueError("runs: no rows with an F1 curve")
    stops = replayed_stops(f1, rule)
    kept = sum(int(st) if at is None else at[0] for at, st in zip(stops, f1["steps"]))
    return kept / float(f1["max_steps"].sum())
