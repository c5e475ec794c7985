"""D_K* against the step budget (rgr.results.settled; issue 45)."""

from __future__ import annotations

import pandas as pd

from rgr import catalog
from rgr.experiments.settled import Unit, planned_runs
from rgr.results.settled import budget_thresholds
from rgr.results.thresholds import thresholds


def test_the_1x_reading_on_the_design_points_is_the_paper_tables_threshold():
    """A sanity check of the restriction to the design's points: at 1x they hold each cell's D_K* and h*."""
    paper = {n: catalog.load(n, "paper") for n in ("base", "lambda8")}
    got = budget_thresholds(pd.DataFrame(columns=["m", "d_model", "h", "D_K", "seed", "max_steps"]), paper)
    one = got[got.budget == 1].set_index(["m", "d_model"])
    for name, t in paper.items():
        th = thresholds(t).set_index(["m", "d_model"])
        for key in one.index.intersection(th.index):
            assert (one.loc[key, "D_K_star"], one.loc[key, "h_star"]) == (th.loc[key, "D_K_star"],
                                                                           th.loc[key, "h_star"]), key
    assert (one["complete"] == 1.0).all()


def test_a_threshold_that_falls_with_the_budget():
    """Synthetic 4x rows where D_K = 4 passes at h = 2 (it failed at 1x): D_K* falls from 6 to 4; a missing seed
    shows as an incomplete budget."""
    units = (Unit(16, 2, 2, (4, 6)),)
    rows = []
    for c in planned_runs(units, budgets=(4,), seeds=range(10), cutoff=20_000):
        rows.append(dict(m=c.m, d_model=c.d_model, h=c.h, D_K=c.D_K, seed=c.seed, max_steps=80_000, test_f1=1.0,
                         stop_reason="converged", r=1))
    settled = pd.DataFrame(rows)
    paper = settled.assign(max_steps=20_000, test_f1=[1.0 if d == 6 else 0.5 for d in settled.D_K],
                           stop_reason="cutoff")
    got = budget_thresholds(settled.iloc[1:], {"base": paper}, units).set_index("budget")
    assert got.loc[1, "D_K_star"] == 6 and got.loc[4, "D_K_star"] == 4 and got.loc[4, "cut_at_star"] == 0
    assert got.loc[4, "complete"] == 19 / 20 and got.loc[16, "complete"] == 0.0
