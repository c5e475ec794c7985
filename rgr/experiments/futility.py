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

from ..protocol import F1_TARGET, reaches_target

if TYPE_CHECKING:
    import pandas as pd


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


def _first_futile_check(rule: FutilityRule, curve: Sequence[tuple[int, float]], max_steps: int,
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
        k = _first_futile_check(rule, curve, int(row["max_steps"]), int(row["steps"]))
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

# ----------------------------------------------------------------------------- reading a table's stops
# Reading a table's stops (chapters *permutation sweeps*, *denser graphs*, *does it replicate?*): the rule is not in
# the paper's protocol; it was added to three ``paper`` presets (lambda8, lambda32, regular) after the release, to
# save CPU. A stopped run keeps its F1 at the stop and counts as failing. Every chapter that reads such a table says
# how many runs the rule stopped (:func:`futile_stops`); a *false stop* is a stopped run at a (cell, h, D_K) point
# where a sibling seed reached the F1 target, the clearest case where the rule may have cut a run that would have
# passed.
#
# The ``unstopped`` extension (:mod:`rgr.experiments.unstopped`) retrained some stopped runs with the rule off, under
# the stopped rows' run keys; :func:`with_retrained` puts them in those rows' place and :func:`retrained_points`
# says, per retrained point, what changed (a second reading: the protocol table's stays the verdict).

POINT = ["m", "d_model", "r", "h", "D_K"]


@dataclass(frozen=True)
class _FutileStops:
    """``stopped`` of ``runs`` rows ended by the futility rule, at ``points`` (cell, h, D_K) points; ``false``: those
    at points where another seed reached the target; ``cells``: per (m, d_model, r), its stopped and total runs."""

    stopped: int
    runs: int
    points: int
    false: int
    cells: pd.DataFrame

    @property
    def cell_list(self) -> str:
        """"(128, 32, r = 8): 12 of 400, ..." for the cells with a stopped run (r shown only where it is not 1)."""
        rows = self.cells[self.cells.stopped > 0]
        return ", ".join(f"({r.m}, {r.d_model}{'' if r.r == 1 else f', r = {r.r}'}): {r.stopped} of {r.runs}"
                         for r in rows.itertuples())


def false_stops(runs: pd.DataFrame) -> pd.DataFrame:
    """The futile-stopped rows at points where a sibling seed reached the F1 target."""
    if not len(runs) or not {"stop_reason", "test_f1"} <= set(runs) or not (runs["stop_reason"] == "futile").any():
        return runs.iloc[:0]
    keys = [c for c in POINT if c in runs]
    passed = runs[reaches_target(runs["test_f1"].astype(float), F1_TARGET)][keys].drop_duplicates()
    stopped = runs[runs["stop_reason"] == "futile"]
    return stopped.merge(passed, on=keys, how="inner")


def futile_stops(runs: pd.DataFrame) -> _FutileStops:
    """Counts of :class:`_FutileStops` for a table's rows (any experiment; none stopped when it has no such rows)."""
    import pandas as pd

    if not len(runs) or "stop_reason" not in runs:
        return _FutileStops(0, len(runs), 0, 0, pd.DataFrame(columns=["m", "d_model", "r", "stopped", "runs"]))
    keys = [c for c in POINT if c in runs]
    futile = runs["stop_reason"] == "futile"
    cell_keys = [c for c in ("m", "d_model", "r") if c in runs]
    cells = (runs.assign(stopped=futile.astype(int)).groupby(cell_keys)
             .agg(stopped=("stopped", "sum"), runs=("stopped", "size")).reset_index())
    return _FutileStops(int(futile.sum()), len(runs), int(runs[futile][keys].drop_duplicates().shape[0]),
                       len(false_stops(runs)), cells)


def with_retrained(runs: pd.DataFrame, retrained: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with every futile-stopped row whose run key ``retrained`` holds replaced by that row (columns of
    ``runs``, order kept); every other row as it is."""
    import pandas as pd

    if not len(runs) or not len(retrained):
        return runs
    new = retrained.drop_duplicates("run_key").set_index("run_key", drop=False)
    hit = (runs["stop_reason"] == "futile") & runs["run_key"].isin(new.index)
    if not hit.any():
        return runs
    swap = new.loc[runs.loc[hit, "run_key"], list(runs.columns)].set_axis(runs.index[hit])
    return pd.concat([runs[~hit], swap]).loc[runs.index]


def retrained_points(runs: pd.DataFrame, retrained: pd.DataFrame) -> pd.DataFrame:
    """Per (cell, h, D_K) point where :func:`with_retrained` replaced a row: its seeds, ``retrained`` (rows
    replaced), ``reached`` (of those, how many retrained runs reached the F1 target), ``still_cut`` (of those, how
    many ran to the cutoff), the point's mean test F1 ``f1_before`` / ``f1_after`` and whether that mean reaches the
    target, before and after. No rows when nothing was replaced."""
    import pandas as pd

    cols = ["seeds", "retrained", "reached", "still_cut", "f1_before", "f1_after", "passes_before", "passes_after"]
    after = with_retrained(runs, retrained)
    keys = [c for c in POINT if c in runs]
    changed = (runs["stop_reason"] == "futile") & (after["stop_reason"] != "futile") if len(runs) else runs.index == 0
    if not len(runs) or not changed.any():
        return pd.DataFrame(columns=keys + cols)
    new = after[changed]
    per = new.assign(reached=reaches_target(new["test_f1"].astype(float), F1_TARGET),
                     still_cut=new["stop_reason"] == "cutoff").groupby(keys).agg(
        retrained=("run_key", "size"), reached=("reached", "sum"), still_cut=("still_cut", "sum"))
    points = per.index.to_frame(index=False)
    at = lambda df: points.merge(df, on=keys, how="left")  # noqa: E731
    before = at(runs.groupby(keys).agg(seeds=("seed", "nunique"), f1_before=("test_f1", "mean")).reset_index())
    f1_after = at(after.groupby(keys)["test_f1"].mean().rename("f1_after").reset_index())["f1_after"]
    out = before.assign(retrained=per["retrained"].to_numpy(int), reached=per["reached"].to_numpy(int),
                        still_cut=per["still_cut"].to_numpy(int), f1_after=f1_after.to_numpy(float))
    out = out.assign(passes_before=reaches_target(out["f1_before"].astype(float), F1_TARGET),
                     passes_after=reaches_target(out["f1_after"].astype(float), F1_TARGET))
    return out[keys + cols].reset_index(drop=True)
