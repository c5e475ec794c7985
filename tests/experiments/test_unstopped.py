"""The unstopped extension's declared design (rgr.experiments.unstopped; README "unstopped", issue 45 item 5)."""

import pandas as pd

from rgr.catalog import get, load
from rgr.experiments import reuse
from rgr.experiments.futility import false_stops
from rgr.experiments.planner import run_key
from rgr.experiments.runner import run_sweep
from rgr.experiments.unstopped import PLATEAUS, UNITS, Unit, planned_runs
from rgr.paths import data_dir
from rgr.trainers import trainer


def _design(regular: pd.DataFrame) -> tuple[Unit, ...]:
    """The rule of the module doc on the regular paper rows: false stops, then the plateau curves' stopped runs."""
    stopped = regular[regular.stop_reason == "futile"]
    out = [Unit(int(r), int(h), int(dk), tuple(sorted(map(int, g.seed))), "false stop")
           for (r, h, dk), g in false_stops(regular).groupby(["r", "h", "D_K"])]
    for r, h in PLATEAUS:
        on = stopped[(stopped.r == r) & (stopped.h == h)]
        out += [Unit(r, h, int(dk), tuple(sorted(map(int, g.seed))), "plateau") for dk, g in on.groupby("D_K")]
    return tuple(out)


def _regular() -> pd.DataFrame:
    return load("regular", "paper")


def test_the_units_are_the_declared_rule_on_the_committed_regular_table():
    regular = _regular()
    assert len(regular) == 3820 and int((regular.stop_reason == "futile").sum()) == 1528
    assert _design(regular) == UNITS
    assert sum(len(u.seeds) for u in UNITS) == 176 and sum(u.why == "false stop" for u in UNITS) == 1


def test_each_run_is_its_stopped_row_with_the_rule_off():
    """Same config (the rule aside), same run key as the stopped row it replaces; nothing has the rule on."""
    regular = _regular().set_index("run_key")
    runs = planned_runs(UNITS)
    assert {c.futility for c in runs} == {None} and {c.max_steps for c in runs} == {20_000}
    for c in runs:
        row = regular.loc[run_key(c, "paper")]
        assert row.stop_reason == "futile" and (row.r, row.h, row.D_K, row.seed) == (c.r, c.h, c.D_K, c.seed)
        assert row.config_key == c.replace(futility=row.futility).key() != c.key()
    assert len({run_key(c, "paper") for c in runs}) == 176


def test_nothing_is_reused_for_this_table():
    """The stopped rows share the run keys; neither the sweep nor the reuse rule may copy them."""
    sweep = trainer("unstopped")
    runs = sweep.planned_runs("paper")
    assert sweep.reusable_rows(runs, "paper", data_dir()) == []
    sources = reuse.source_rows(sweep.schema, [get("regular").schema], "paper")
    assert reuse.reused_rows(runs, [sweep.run_key(c, "paper") for c in runs], "unstopped", "paper", sources) == []


def test_the_smoke_preset_trains_every_run_with_a_regular_table_beside_it(tmp_path):
    sweep = trainer("unstopped")
    first = run_sweep(trainer("regular"), "smoke", device="cpu", root=tmp_path, progress=False)
    assert len(first)
    out = run_sweep(sweep, "smoke", device="cpu", root=tmp_path, progress=False)
    assert len(out) == len(sweep.planned_runs("smoke")) == 3
    assert out["reused_from"].isna().all() and out["futility"].isna().all() and set(out["max_steps"]) == {100}
    assert set(out["experiment"]) == {"unstopped"} and set(out["graph"]) == {"regular"}
    assert set(out["config_key"]) & set(first["config_key"])  # an identical run beside it, still trained here
    again = run_sweep(sweep, "smoke", device="cpu", root=tmp_path, progress=False)
    assert len(again) == 3  # resumable: nothing retrained
    assert sum(len(sweep.planned_runs("smoke", None, (i, 2))) for i in range(2)) == 3
