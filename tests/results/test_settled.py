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


def _frame(rows):
    cols = ["m", "d_model", "budget", "D_K_star", "at_star", "cut_at_star", "complete"]
    return pd.DataFrame([dict(zip(cols, r)) for r in rows])


def test_the_reading_budget_is_the_longest_complete_one_and_leaves_out_cells_without_it():
    from rgr.results.settled import reading_budget

    f = _frame([(512, 64, 1, 52, 10, 9, 1.0), (512, 64, 4, 48, 10, 0, 1.0), (512, 64, 16, 44, 10, 0, 1.0),
                (1024, 128, 1, 40, 10, 9, 1.0), (1024, 128, 4, 32, 10, 9, 1.0), (1024, 128, 16, 32, 10, 1, 1.0),
                (2048, 256, 1, 48, 3, 3, 1.0), (2048, 256, 4, 40, 3, 2, 1.0)])
    assert reading_budget(f, [(512, 64), (1024, 128), (2048, 256)]) == (16, [(512, 64), (1024, 128)])
    part = f.assign(complete=[1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0])  # 16x incomplete at one cell: 4x, all cells
    assert reading_budget(part, [(512, 64), (1024, 128), (2048, 256)]) == (4, [(512, 64), (1024, 128), (2048, 256)])
    assert reading_budget(part, [(2048, 256)]) == (4, [(2048, 256)])
    assert reading_budget(f.assign(complete=0.0).assign(complete=lambda x: x.budget.eq(1) * 1.0), [(512, 64)]) is None
    assert reading_budget(f, []) is None


def test_a_reading_is_settled_only_where_few_runs_at_each_new_threshold_were_cut():
    from rgr.results.settled import settled_at

    f = _frame([(512, 64, 4, 48, 10, 2, 1.0), (1024, 128, 4, 32, 10, 3, 1.0), (2048, 256, 4, 40, 3, 0, 1.0)])
    assert settled_at(f, [(512, 64), (2048, 256)], 4)  # 2 of 10 and 0 of 3
    assert not settled_at(f, [(512, 64), (1024, 128)], 4)  # 3 of 10 still cut


def test_a_threshold_at_the_designs_lowest_point_is_floor_censored_and_not_settled():
    """Issue 50: D_K* at a cell's lowest design D_K is an upper bound (it may lie lower): not settled, however few
    runs were cut; one step above it the rule is the cut share alone."""
    from rgr.results.settled import at_floor, lowest_points, settled_at

    low = lowest_points()[(1024, 128)]
    f = _frame([(512, 64, 16, low, 10, 0, 1.0), (1024, 128, 16, low, 10, 0, 1.0), (1024, 128, 4, low + 8, 10, 0, 1.0)])
    assert at_floor(f, 512, 64, 16) and not at_floor(f, 1024, 128, 4)
    assert not settled_at(f, [(512, 64)], 16) and not settled_at(f, [(1024, 128)], 16)
    assert settled_at(f, [(1024, 128)], 4)


def test_the_diagonals_measured_reason_says_which_way_the_rise_moves():
    from rgr.results.settled import diagonal_budget_reason

    away = _frame([(512, 64, 1, 52, 10, 9, 1.0), (512, 64, 4, 48, 10, 0, 1.0),
                   (2048, 256, 1, 48, 3, 3, 1.0), (2048, 256, 4, 40, 3, 0, 1.0)])
    said = diagonal_budget_reason(away, 512)
    assert "with 4x the cutoff" in said and "falls from 52 to 48 at m = 512" in said
    assert "from 0.92 to 0.83, away from the law's 1.22" in said
    assert said.endswith("settled: few runs at the new thresholds still ran to the budget.")
    toward = away.assign(D_K_star=[52, 40, 48, 48], cut_at_star=[9, 0, 3, 2])
    said = diagonal_budget_reason(toward, 512)
    assert "stays at 48 at m = 2048" in said and "to 1.20, toward the law's 1.22" in said and "not settled" in said
    assert diagonal_budget_reason(away[away.budget == 1], 512) == ""  # no longer budget: nothing measured


def test_the_wide_cell_is_read_with_the_paper_preset_and_counted_in_its_share(monkeypatch):
    """The preset ``wide`` ((4096, 512)) joins the paper reading: its rows, its planned runs in the share done, and
    its cell in the frame once it has rows (none before: the paper reading is unchanged)."""
    from rgr.experiments.settled import SETTLED as TABLE
    from rgr.experiments.settled import WIDE_UNITS
    from rgr.results import settled as s

    frames = {"paper": pd.DataFrame(dict(m=[128], d_model=[16])), "wide": pd.DataFrame(dict(m=[4096], d_model=[512])),
              "book": pd.DataFrame(dict(m=[128], d_model=[16]))}
    monkeypatch.setattr(s, "load_if_present",
                        lambda name, presets, root=None: pd.concat([frames[p] for p in presets], ignore_index=True))
    assert list(s.settled_runs("paper").m) == [128, 4096] and list(s.settled_runs("book").m) == [128]
    monkeypatch.setattr(s, "preset_completeness",
                        lambda name, preset, root=None, done=None: {"paper": 1.0, "wide": 0.5}[preset])
    n_paper, n_wide = len(TABLE.planned_runs("paper")), len(TABLE.planned_runs("wide"))
    runs = s.settled_runs("paper")
    assert s.share_done(runs, "paper") == (n_paper + 0.5 * n_wide) / (n_paper + n_wide) and n_wide == 30
    assert s.lowest_points()[(4096, 512)] == min(min(u.D_K) for u in WIDE_UNITS)


def test_a_wide_row_adds_its_cell_to_the_reading():
    empty = pd.DataFrame(columns=["m", "d_model", "h", "D_K", "seed", "max_steps", "test_f1", "stop_reason"])
    wide = pd.DataFrame([dict(m=4096, d_model=512, h=1, D_K=32, seed=0, max_steps=800_000, test_f1=1.0,
                              stop_reason="converged")])
    cells = lambda f: set(map(tuple, f[["m", "d_model"]].to_numpy(int)))  # noqa: E731
    without, with_wide = budget_thresholds(empty, {}), budget_thresholds(wide, {})
    assert (4096, 512) not in cells(without) and cells(with_wide) == cells(without) | {(4096, 512)}
    row = with_wide.set_index(["m", "d_model", "budget"]).loc[(4096, 512, 4)]
    assert row["complete"] == 1 / 30 and row["D_K_star"] == 32


def test_a_rise_between_two_floor_readings_is_no_measurement_and_a_shorter_budget_reads_to_the_last_cell():
    """Issue 50: the 16x reading stops at m = 1024 (the design has no 16x beyond); with D_K* at the lowest point at
    both ends its rise is floor-censored, not settled; the 4x reading, complete to m = 4096, is read there too."""
    from rgr.results.settled import diagonal_budget_reason

    f = _frame([(512, 64, 1, 52, 10, 9, 1.0), (512, 64, 4, 48, 10, 0, 1.0), (512, 64, 16, 32, 10, 2, 1.0),
                (1024, 128, 1, 40, 10, 9, 1.0), (1024, 128, 4, 32, 10, 9, 1.0), (1024, 128, 16, 32, 10, 0, 1.0),
                (2048, 256, 1, 48, 3, 3, 1.0), (2048, 256, 4, 40, 3, 2, 1.0),
                (4096, 512, 1, 52, 3, 3, 1.0), (4096, 512, 4, 48, 3, 1, 1.0)])
    said = diagonal_budget_reason(f, 512)
    first, second = said.split(" Up to m = 4096 ")
    assert "with 16x the cutoff" in first and "32 is the design's lowest point at both cells" in first
    assert "the rise from m = 512 to m = 1024, 1.00 (1x: 0.77; the law's 1.11), is floor-censored" in first
    assert first.endswith("; not settled.") and "toward" not in first
    assert second.startswith("(the design has 16x only to m = 1024): with 4x the cutoff")
    assert "the rise from m = 512 to m = 4096 stays at 1.00 (as at 1x), against the law's 1.33" in second
    assert "lowest point, an upper bound, at m = 1024" in second and "m = 2048: 2 of 3" in second
    one_end = f.assign(D_K_star=f.D_K_star.where(~((f.m == 512) & (f.budget == 16)), 36))  # only m = 1024 at 32
    said = diagonal_budget_reason(one_end, 512).split(" Up to")[0]
    assert "32 is the design's lowest point at m = 1024, an upper bound (D_K* may lie lower), so the rise" in said
    assert "0.89 (1x: 0.77; the law's 1.11), is an upper bound" in said
