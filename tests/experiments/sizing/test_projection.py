"""rgr.experiments.sizing.projection: the step bound, the cost model's arithmetic, and a calibration that runs."""

from __future__ import annotations

import pandas as pd
import pytest

from rgr.experiments import trainer as experiment_trainer
from rgr.experiments.engine.config import RunConfig
from rgr.experiments.sizing import projection
from rgr.experiments.sizing.calibration import Calibration
from rgr.experiments.sizing.projection import dry_run_report, model_steps_bound, project

TINY = dict(d_model=8, h=2, d_k=4, ell=8, check_every=10, n_val=16, n_test=32)


def stack_seconds(cfgs: list[RunConfig], cal: Calibration) -> float:
    """The projected seconds of ``cfgs`` trained as one stack."""
    p = project(cfgs, "cpu", 1, cal, max_stack=len(cfgs))
    assert p.stacks == 1
    return p.seconds


def projected_runs(monkeypatch, configs: list[RunConfig], **kw) -> list[list[RunConfig]]:
    """The runs each projection of ``dry_run_report(configs, **kw)`` was asked about, in order."""
    seen: list[list[RunConfig]] = []

    class _Seen:
        def __init__(self, runs):
            self.runs, self.seconds = len(runs), 1.0

        def describe(self) -> str:
            return ""

    cal = Calibration(a=1.0, b=0.0, c=0.0, e=0.0, device="cpu", points=1)  # no timing: the projections are faked
    monkeypatch.setattr(projection, "pick_calibration", lambda *a, **k: cal)
    monkeypatch.setattr(projection, "project", lambda runs, *a, **k: seen.append(list(runs)) or _Seen(runs))
    dry_run_report(configs, "cpu", 1, **kw)
    return seen


def test_model_steps_bound():
    cfgs = [RunConfig(m=16, seed=s, max_steps=n, **TINY) for s, n in ((0, 30), (1, 50))]
    assert model_steps_bound(cfgs) == 80


def test_projection_arithmetic():
    """Step cost a (no FLOP term), check cost c: a stack of cutoffs 30 and 50, checks every 10 steps."""
    cfgs = [RunConfig(m=16, seed=s, max_steps=n, **TINY) for s, n in ((0, 30), (1, 50))]
    cal = Calibration(a=1.0, b=0.0, c=10.0, e=0.0, device="cpu", points=1)
    p = project(cfgs, "cpu", 1, cal)
    # 50 steps, 5 checks, then the test: n_test / n_val = 2 checks' worth
    assert (p.runs, p.stacks, p.model_steps) == (2, 1, 80)
    assert p.seconds == pytest.approx(50 * 1.0 + 5 * 10.0 + 2 * 10.0)
    other = RunConfig(m=16, max_steps=30, **{**TINY, "d_model": 16})  # another d_model: another stack
    p2 = project([*cfgs, other], "cpu", 2, cal)
    assert p2.stacks == 2 and p2.seconds == pytest.approx(120.0) and p2.cpu_seconds == pytest.approx(120 + 30 + 30 + 20)
    with pytest.raises(ValueError, match="workers"):
        project(cfgs, "cpu", 0, cal)


def test_calibrated_projection_and_report():
    cfgs = [RunConfig(m=16, seed=s, max_steps=40, **{**TINY, "h": h, "d_k": 8 // h}) for s in (0, 1) for h in (1, 2)]
    p = project(cfgs, "cpu", 1)
    assert p.seconds > 0 and p.calibration.points >= 1 and "model-steps" in p.describe()
    lines = dry_run_report(cfgs, "cpu", 1, refine_rounds=1)
    assert lines[0].startswith("first round: 4 runs") and lines[-1].startswith("projected total: ")
    assert "1 round(s) of at most 4 runs each" in lines[1]  # per (cell, h, seed) unit, one run a round
    assert "median" in lines[1] and "twice its largest" in lines[1]
    resumed = dry_run_report(cfgs, "cpu", 1, refine_rounds=0, pending=cfgs[:1])
    assert resumed[0].startswith("this round (the runs not yet in the table): 1 runs")
    assert dry_run_report(cfgs, "cpu", 1, pending=[])[0] == "this round: nothing left to train"
    alone = dry_run_report(cfgs, "cpu", 1, refine_rounds=1, max_stack=1)  # as `sweep --max-stack 1` will train them
    assert " in 4 stacks" in alone[0] and " in 2 stacks" in lines[0]  # by default: by shape


def test_refinement_stand_ins_at_the_median_or_twice_the_top(monkeypatch):
    cfgs = [RunConfig(m=16, seed=0, max_steps=40, **{**TINY, "h": 2, "d_k": dk}) for dk in (1, 2, 4, 8)]  # D_K 2..16
    first, median, extend = projected_runs(monkeypatch, cfgs, refine_rounds=2)
    assert first == cfgs and [c.D_K for c in median] == [8]  # one round's stand-ins; the median of four: the third
    assert [c.D_K for c in extend] == [32]  # twice the top
    _, _, capped = projected_runs(monkeypatch, cfgs, refine_rounds=2, dk_max=16)
    assert [c.D_K for c in capped] == [16]  # no budget above dk_max


def test_a_resumed_sweep_projects_what_is_left(monkeypatch):
    from rgr.trainers import trainer

    exp = trainer("base")
    first = exp.planned_runs("smoke", None)
    done = pd.DataFrame([dict(run_key=exp.run_key(c, "smoke"), m=c.m, d_model=c.d_model, r=c.r, h=c.h, D_K=c.D_K,
                              test_f1=0.5) for c in first[:-3]])
    seen = {}
    monkeypatch.setattr(experiment_trainer, "dry_run_report",
                        lambda runs, *a, pending=None, **kw: seen.update(p=pending) or [])
    head = exp.dry_run_report("smoke", "cpu", 1, done=done)[0]
    left = {exp.run_key(c, "smoke") for c in first[-3:]}
    pending = {exp.run_key(c, "smoke") for c in seen["p"]}
    # the three left over, and the next (extension) points of the units whose runs all finished below the target
    assert left <= pending and not pending & set(done["run_key"])
    assert f"{len(done)} runs already in the table, {len(pending)} pending in this round" in head


def test_rounds_left_counts_from_the_least_refined_unit_still_training():
    from rgr import catalog
    from rgr.experiments.planner import ladder, rounds_left

    grid = catalog.get("base").grid("paper")
    cell = grid.cells[0]
    base = ladder(cell, 1, grid)
    cfg = lambda dk: RunConfig(m=cell.m, d_model=cell.d_model, h=1, d_k=dk, max_steps=10)
    done = pd.DataFrame(dict(m=cell.m, d_model=cell.d_model, r=1, h=1, D_K=base))
    assert rounds_left(grid, None, [cfg(d) for d in base]) == grid.refine_rounds  # the first round
    assert rounds_left(grid, done, [cfg(2 * base[-1])]) == grid.refine_rounds - 1  # one extension under way
    two = pd.concat([done, done.iloc[:1].assign(D_K=2 * base[-1])])
    assert rounds_left(grid, two, [cfg(4 * base[-1])]) == grid.refine_rounds - 2
    assert rounds_left(grid, done, []) == 0


def test_seconds_read_as_a_short_human_reading():
    cfgs = [RunConfig(m=16, max_steps=50, **TINY)]  # 50 steps at s / 50 seconds each, checks free (c = e = 0)
    said = [project(cfgs, "cpu", 1, Calibration(a=s / 50, b=0.0, c=0.0, e=0.0, device="cpu", points=1)).describe()
            for s in (42, 1020, 3.2 * 3600, 2.5 * 86400)]
    assert [d.split("; projected ")[1].split(" on ")[0] for d in said] == ["42 s", "17 min", "3.2 h", "2.5 days"]


class _FakeClock:
    """A process clock that only the (patched) steps and checks advance: their cost is known exactly."""

    def __init__(self) -> None:
        self.now = 0.0

    def process_time(self) -> float:
        return self.now

    perf_counter = process_time


def test_the_timed_calibration_fits_a_per_run_cost(monkeypatch):
    """Steps cost a + r R + b F (r: what a run costs beyond its FLOPs). Stacks of many tiny runs and of few wide
    ones: the calibration, timing whole stacks at all and half their runs, must predict every stack's step within
    2%; the former a + b F on 16-run slices put a 40-run stack of tiny heads about 2x short."""
    from rgr.experiments.sizing import calibration as P

    a, r, b = 1e-4, 5e-5, 2e-10
    clock = _FakeClock()

    def steps(st, t0, t1, block):
        clock.now += (t1 - t0) * (a + r * st.R + b * P.features(st.cfgs, st.R)[0])

    def check(st, due, elems):
        clock.now += 1e-3

    monkeypatch.setattr(P, "time", clock)
    monkeypatch.setattr(P, "train_steps", steps)
    monkeypatch.setattr(P, "check", check)
    shapes = [(8, 2, 1, 40), (16, 2, 8, 3), (32, 4, 8, 12), (64, 8, 16, 2)]  # d_model, h, d_k, runs
    cfgs = [RunConfig(m=16, seed=s, max_steps=100, **{**TINY, "d_model": d, "h": h, "d_k": k})
            for d, h, k, n in shapes for s in range(n)]
    cal = P.calibrate(cfgs, "cpu", points=4, seconds=1e-3)
    for d, h, k, n in shapes:
        g = [c for c in cfgs if c.d_model == d]
        for R in (n, max(1, n // 4)):
            true = a + r * R + b * P.features(g, R)[0]
            assert cal.a + cal.r * R + cal.b * P.features(g, R)[0] == pytest.approx(true, rel=0.02), (d, R)
    assert cal.source == "timed" and cal.c == pytest.approx(1e-3) and cal.e == pytest.approx(0.0, abs=1e-15)


def _history_rows(cal, stacks, date0=0):
    """A synthetic table: each stack's rows with the wall time ``cal`` gives it at the runs' actual steps."""
    rows = []
    for j, runs in enumerate(stacks):
        actual = [c.replace(max_steps=n) for c, n in runs]
        wall = stack_seconds(actual, cal)
        for c, n in runs:
            rows.append({**c.to_dict(), "steps": n, "stack_size": len(runs), "wall_time_s": wall / len(runs),
                         "date": f"2026-01-01T00:{date0 + j:02d}:00Z", "reused_from": None, "preset": "paper"})
    return pd.DataFrame(rows)


def test_calibration_from_a_tables_history():
    """The cost model refitted to a tiny table's finished stacks predicts a stack it did not see; partial and
    reused stacks and a GPU's are not measurements of this CPU; too few stacks: no history calibration; the dry
    run says which it used."""
    from rgr.experiments.sizing.calibration import calibrate_from_history

    true = Calibration(a=2e-4, b=1e-10, c=5e-3, e=1e-11, device="cpu", points=0, r=3e-5, s=0.02)
    shape = lambda d, h, k, s, n: (
        RunConfig(m=16, seed=s, max_steps=400, **{**TINY, "d_model": d, "h": h, "d_k": k}), n)
    stacks = [[shape(8 * (1 + j % 3), 2, 1 + j % 4, s, 100 + 30 * ((s + j) % 4)) for s in range(2 + j % 5)]
              for j in range(10)]
    rows = _history_rows(true, stacks)
    partial = _history_rows(true, stacks[:1], date0=30).iloc[:1]  # one row of a two-run stack
    reused = _history_rows(true, stacks[1:2], date0=31).assign(reused_from="base", wall_time_s=1e6)
    gpu = _history_rows(true, stacks[2:3], date0=32).assign(device_name="NVIDIA H100 80GB HBM3", wall_time_s=1e-6)
    rows = rows.assign(device_name="cpu (x86_64, 2 cores)")
    table = pd.concat([rows, partial, reused, gpu])
    cal = calibrate_from_history(table)
    assert cal.source == "history" and cal.points == 10  # the whole stacks, on this CPU: a GPU's do not time a CPU
    unseen = [c.replace(max_steps=n) for c, n in [shape(16, 2, 3, s, 250 + 50 * s) for s in range(6)]]
    assert stack_seconds(unseen, cal) == pytest.approx(stack_seconds(unseen, true), rel=1e-3)
    dates = rows["date"].unique()  # one a stack; at least 8 whole stacks calibrate (README)
    assert calibrate_from_history(rows[rows["date"] < dates[7]]) is None
    assert calibrate_from_history(rows[rows["date"] < dates[8]]).points == 8
    todo = [c for c, _ in stacks[0]]
    assert "finished stacks of this table" in dry_run_report(todo, "cpu", 1, history=table)[-1]
    assert "timed here" in dry_run_report(todo, "cpu", 1, history=rows.iloc[:0])[-1]
