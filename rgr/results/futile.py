"""How many runs a table's futility rule stopped, and where (chapters *permutation sweeps*, *denser graphs*, *does it
replicate?*).

Futility stopping (:mod:`rgr.experiments.futility`, README "Futility stopping") is not in the paper's protocol: it
was added to three ``paper`` presets (lambda8, lambda32, regular) after the release, to save CPU. A stopped run
keeps its F1 at the stop and counts as failing. Every chapter that reads such a table says how many runs the rule
stopped (:func:`futile_stops`); a *false stop* is a stopped run at a (cell, h, D_K) point where a sibling seed
reached the F1 target, the clearest case where the rule may have cut a run that would have passed.

The ``unstopped`` extension (:mod:`rgr.experiments.unstopped`) retrained some stopped runs with the rule off, under
the stopped rows' run keys; :func:`with_retrained` puts them in those rows' place and :func:`retrained_points`
says, per retrained point, what changed (a second reading: the protocol table's stays the verdict).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..task.metrics import F1_TARGET, reaches_target

__all__ = ["FutileStops", "futile_stops", "false_stops", "with_retrained", "retrained_points"]

POINT = ["m", "d_model", "r", "h", "D_K"]


@dataclass(frozen=True)
class FutileStops:
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


def futile_stops(runs: pd.DataFrame) -> FutileStops:
    """Counts of :class:`FutileStops` for a table's rows (any experiment; none stopped when it has no such rows)."""
    if not len(runs) or "stop_reason" not in runs:
        return FutileStops(0, len(runs), 0, 0, pd.DataFrame(columns=["m", "d_model", "r", "stopped", "runs"]))
    keys = [c for c in POINT if c in runs]
    futile = runs["stop_reason"] == "futile"
    cell_keys = [c for c in ("m", "d_model", "r") if c in runs]
    cells = (runs.assign(stopped=futile.astype(int)).groupby(cell_keys)
             .agg(stopped=("stopped", "sum"), runs=("stopped", "size")).reset_index())
    return FutileStops(int(futile.sum()), len(runs), int(runs[futile][keys].drop_duplicates().shape[0]),
                       len(false_stops(runs)), cells)


def with_retrained(runs: pd.DataFrame, retrained: pd.DataFrame) -> pd.DataFrame:
    """``runs`` with every futile-stopped row whose run key ``retrained`` holds replaced by that row (columns of
    ``runs``, order kept); every other row as it is."""
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
