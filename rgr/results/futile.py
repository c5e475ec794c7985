"""How many runs a table's futility rule stopped, and where (chapters *permutation sweeps*, *denser graphs*, *does it
replicate?*).

Futility stopping (:mod:`rgr.experiments.futility`, README "Futility stopping") is not in the paper's protocol: it
was added to three ``paper`` presets (lambda8, lambda32, regular) after the release, to save CPU. A stopped run
keeps its F1 at the stop and counts as failing. Every chapter that reads such a table says how many runs the rule
stopped (:func:`futile_stops`); a *false stop* is a stopped run at a (cell, h, D_K) point where a sibling seed
reached the F1 target, the clearest case where the rule may have cut a run that would have passed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..task.metrics import F1_TARGET, reaches_target

__all__ = ["FutileStops", "futile_stops", "false_stops"]

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
