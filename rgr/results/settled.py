"""D_K* against the step budget, cell by cell: the settled-threshold extension read beside the protocol (issue 45;
chapters *permutation sweeps* and *does it replicate?*).

For each cell of :data:`rgr.experiments.settled.UNITS` and each budget (1x: the ``paper`` table's own rows at the
same (h, D_K) points; 4x and 16x: ``settled``'s rows), :func:`budget_thresholds` gives D_K* (central, optimistic,
conservative) and h* over the design's points only, so the budgets are compared on the same ladder; how many runs at
D_K* still ran to their cutoff; and whether the budget's points are all there (a cell's reading counts only then).
A D_K* that falls with the budget measured training speed at the protocol's cutoff, not capacity; one that stays
put did not depend on the cutoff.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from ..experiments.engine.config import step_cutoff
from ..experiments.settled import UNITS, Unit, seeds_for
from .stats import dk_star, summarize

__all__ = ["budget_thresholds", "points_of"]


def points_of(units: Sequence[Unit]) -> pd.DataFrame:
    """The design's (m, d_model, h, D_K) points."""
    return pd.DataFrame([(u.m, u.d_model, u.h, dk) for u in units for dk in u.D_K],
                        columns=["m", "d_model", "h", "D_K"])


def _budget_rows(runs: pd.DataFrame, units: Sequence[Unit], budget: int) -> pd.DataFrame:
    if not len(runs):
        return runs
    pts = points_of(units)
    on = runs.merge(pts, on=["m", "d_model", "h", "D_K"])
    cut = [budget * step_cutoff(int(m), int(d)) for m, d in zip(on["m"], on["d_model"])]
    return on[on["max_steps"].to_numpy() == cut] if len(on) else on


def budget_thresholds(settled: pd.DataFrame, paper: Mapping[str, pd.DataFrame],
                      units: Sequence[Unit] = UNITS) -> pd.DataFrame:
    """One row per (m, d_model, budget): D_K* [opt, cons], h*, the runs at D_K* cut by their budget, the points'
    completeness. ``paper``: the paper tables the 1x reading comes from (``base``, ``lambda8``), rows of any cell."""
    cells = list(dict.fromkeys((u.m, u.d_model) for u in units))
    frames = [_budget_rows(t, units, 1).assign(budget=1) for t in paper.values() if len(t)]
    one = pd.concat(frames).drop_duplicates(["m", "d_model", "h", "D_K", "seed"]) if frames else pd.DataFrame()
    by_budget = {1: one, **{b: _budget_rows(settled, units, b) for b in (4, 16)}}  # each budget's rows, read once
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
