"""Futility stopping: the rule, the engine's stop, the replay that can fail, run keys untouched, reuse."""

from dataclasses import replace

import pandas as pd
import pytest

from rgr import catalog
from rgr.experiments import runner
from rgr.experiments.engine.config import RunConfig
from rgr.experiments.engine.loop import train
from rgr.experiments.futility import RULES, FutilityRule, futile, replayed_stops, rule_named
from rgr.experiments.planner import FUTILITY_MIN_SEEDS, Cell, Experiment, run_key
from rgr.experiments.registry import EXPERIMENTS, get_experiment
from rgr.experiments.trainer import ExperimentTrainer
from rgr.results.futility_replay import compare, replay
from rgr.store.seal import UnsealedTable
from rgr.trainers import trainer

RULE = RULES["trend-v1"]


def _curve(values, every=500):
    return [((i + 1) * every, v) for i, v in enumerate(values)]


def first_futile_check(rule: FutilityRule, curve: list[tuple[int, float]], max_steps: int, steps: int) -> int | None:
    """Index of the check at which the replay of ``rule`` stops a run with this ``curve`` that ended at ``steps``."""
    row = pd.DataFrame([{"model": "qk", "val_curve": curve, "max_steps": max_steps, "steps": steps}])
    stop = replayed_stops(row, rule).iloc[0]
    return None if stop is None else [s for s, _ in curve].index(stop[0])


# ----------------------------------------------------------------------------- the rule


def test_a_flat_low_curve_is_futile_once_past_the_start():
    flat = _curve([0.3] * 40)  # cutoff 20,000: 40 checks
    assert first_futile_check(RULE, flat, 20_000, 20_000) == 3  # step 2,000 = 10% of the cutoff, 4 checks
    assert not RULE.is_futile(flat[:3], 20_000)  # before `start`


def test_a_rising_curve_is_not_futile():
    rising = _curve([0.05 * k for k in range(1, 20)])  # +0.05 a check: the line reaches 0.99 well before the cutoff
    assert first_futile_check(RULE, rising, 20_000, 20_000) is None


def test_a_curve_near_the_target_is_never_stopped_whatever_its_slope():
    near = _curve([0.85, 0.84, 0.83, 0.82] * 10)  # falling, but its best is above the level 0.8
    assert first_futile_check(RULE, near, 20_000, 20_000) is None


def test_the_rule_is_not_applied_at_or_after_the_runs_own_end():
    flat = _curve([0.3] * 40)
    assert first_futile_check(RULE, flat, 20_000, steps=1_500) is None  # converged (say) before the start


def test_the_trend_is_read_over_the_later_half_of_the_curve():
    # noisy but rising over its later half: the last 4 checks alone fall, the later half rises fast
    values = [0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.58, 0.57, 0.56]
    assert not RULE.is_futile(_curve(values), 20_000)
    last4 = _curve(values)[-4:]  # read over the last four checks alone, the trend falls
    assert RULE.is_futile([(s - 4_000, v) for s, v in _curve(values)[:-4]][:0] + last4, 20_000)


def test_rules_validate_their_parameters_and_names():
    with pytest.raises(ValueError, match="level"):
        FutilityRule("x", level=1.5)
    with pytest.raises(ValueError, match="futility must be one of"):
        rule_named("nope")
    assert futile(None, _curve([0.0] * 40), 20_000) is False


# ----------------------------------------------------------------------------- the config and run keys


def test_the_field_leaves_every_existing_run_key_untouched():
    base = catalog.load("base", "paper").iloc[0]
    fields = {f: base[f] for f in RunConfig.__dataclass_fields__ if f != "futility"}
    cfg = RunConfig(**{k: (v.item() if hasattr(v, "item") else v) for k, v in fields.items()})
    assert cfg.key() == base["config_key"]
    assert run_key(cfg, "paper") == base["run_key"]
    on = cfg.replace(futility="trend-v1")
    assert on.key() != cfg.key()  # how it trained is in the config key ...
    assert run_key(on, "paper") == run_key(cfg, "paper")  # ... but it fills the same place of the sweep


def test_the_config_refuses_a_rule_it_does_not_know_or_cannot_apply():
    with pytest.raises(ValueError, match="futility must be one of"):
        RunConfig(m=16, d_model=8, h=1, d_k=4, futility="median")
    with pytest.raises(ValueError, match="futility must be None for model 'value'"):
        RunConfig(m=16, d_model=8, h=1, d_k=4, model="value", futility="trend-v1")


def test_paper_presets_use_the_rule_only_at_cells_with_ten_seeds():
    assert FUTILITY_MIN_SEEDS == 10
    for name in ("regular", "lambda32", "lambda8"):
        grid = EXPERIMENTS[name].grid("paper")
        for cell in grid.cells:
            assert grid.futility_for(cell) == ("trend-v1" if len(grid.seeds_for(cell)) >= 10 else None)
    assert EXPERIMENTS["lambda8"].grid("paper").futility_for(Cell(4096, 512)) is None  # 3 seeds
    for name in ("base", "linear", "softmax", "value", "value_nostop", "design_check"):
        assert all(g.futility is None for g in EXPERIMENTS[name].presets.values())


# ----------------------------------------------------------------------------- the engine


def test_the_engine_stops_a_hopeless_run_and_trains_the_rest_as_before():
    hopeless = RunConfig(m=32, d_model=4, h=1, d_k=1, seed=0, max_steps=2_000, check_every=50, n_val=50,
                         n_test=100, dtype="float64")
    fine = replace(hopeless, d_k=16, seed=1)
    off = train([hopeless, fine], progress=False)
    on = train([hopeless.replace(futility="trend-v1"), fine], progress=False)
    assert off[0].stop_reason == "cutoff" and on[0].stop_reason == "futile"
    assert on[0].steps < off[0].steps
    assert on[0].val_curve == off[0].val_curve[: len(on[0].val_curve)]  # the same run, cut short
    assert first_futile_check(RULE, list(off[0].val_curve), 2_000, off[0].steps) == len(on[0].val_curve) - 1
    assert abs(on[1].test_f1 - off[1].test_f1) < 1e-9 and on[1].steps == off[1].steps  # its stack-mate unchanged


# ----------------------------------------------------------------------------- the replay


def _table(cells: dict[int, list[list[float]]], max_steps: int = 20_000) -> pd.DataFrame:
    """A synthetic one-cell table: per D_K, one validation curve per seed; final F1 = the curve's last value."""
    rows = []
    for D_K, curves in cells.items():
        for seed, values in enumerate(curves):
            rows.append(dict(m=64, d_model=16, r=1, h=1, D_K=D_K, seed=seed, model="max", max_steps=max_steps,
                             steps=500 * len(values), stop_reason="cutoff", test_f1=values[-1],
                             val_curve=[list(p) for p in _curve(values)]))
    return pd.DataFrame(rows)


def test_a_replay_can_fail_when_a_rule_is_too_eager():
    slow = [0.85] * 10 + [0.995] * 30  # a plateau below the target, then a jump: passes
    table = _table({8: [[0.2] * 40] * 3, 16: [slow] * 3, 32: [[0.995] * 40] * 3})
    safe = compare(table, RULE)
    assert safe.unchanged and safe.stopped == 3  # only the hopeless D_K = 8 runs
    eager = compare(table, FutilityRule("eager", level=0.99))
    assert eager.passing_stopped == 3 and not eager.unchanged
    moved = eager.changed_cells.set_index("answer")
    assert moved.loc["D_K_star", "before"] == "16" and moved.loc["D_K_star", "after"] == "32"
    assert len(eager.changed_points) == 1


def test_replay_shortens_exactly_the_runs_the_engine_would_stop():
    table = _table({8: [[0.2] * 40, [0.1 * k for k in range(1, 11)] + [0.995] * 30]})
    after = replay(table, RULE)
    assert list(after["stop_reason"]) == ["futile", "cutoff"]
    assert after["steps"].iloc[0] == 2_000 and after["test_f1"].iloc[0] == 0.2


def test_replay_stopping_command_reports_the_base_paper_rows(capsys):
    from rgr.cli import main

    assert main(["replay-stopping", "linear", "--preset", "paper"]) == 0
    out = capsys.readouterr().out
    assert "passing runs (final test F1 >= 0.99) it would stop: 0" in out and "no answer changes" in out
    assert main(["replay-stopping", "value", "--preset", "paper"]) == 2
    assert "no rows with an F1 curve" in capsys.readouterr().err
    assert main(["replay-stopping", "linear", "--preset", "paper", "--rule", "x"]) == 2
    assert "--rule must be one of" in capsys.readouterr().err


# ----------------------------------------------------------------------------- reuse


def test_a_sweep_copies_runs_that_trained_in_another_table(tmp_path):
    runner.run_sweep(trainer("base"), "smoke", device="cpu", root=tmp_path, progress=False)
    grid = get_experiment("base").grid("smoke")
    twin = Experiment("lambda8", "E1", "a diagonal sharing the base smoke grid", "max", "permutation",
                      {"smoke": grid}, reuse_from=("base",))
    logs: list[str] = []
    runner.run_sweep(ExperimentTrainer(twin), "smoke", device="cpu", root=tmp_path, progress=False, log=logs.append)
    base = catalog.load("base", "smoke", root=tmp_path).set_index("config_key")
    copy = catalog.load("lambda8", "smoke", root=tmp_path)
    assert len(copy) == len(base) and any("reused from base" in line for line in logs)
    assert copy["reused_from"].str.startswith("base:").all()
    assert (copy["stack_size"] >= 1).all() and copy["experiment"].eq("lambda8").all()
    for col in ("test_f1", "steps", "git_commit", "date"):
        assert (copy.set_index("config_key")[col] == base.loc[copy["config_key"], col]).all()
    assert (copy["run_key"] == base.loc[copy["config_key"], "run_key"].to_numpy()).all()  # same config and preset


def test_a_futility_stopped_row_never_stands_in_for_a_run_without_the_rule():
    from rgr.experiments.reuse import reused_rows

    cfg = RunConfig(m=16, d_model=8, h=1, d_k=4)
    stopped = pd.DataFrame([dict(config_key=cfg.replace(futility="trend-v1").key(), run_key="a", reused_from=None,
                                 _table="base", preset="paper", val_curve=[[500, 0.1]])])
    assert reused_rows([cfg], ["k"], "x", "paper", stopped) == []
    full = stopped.assign(config_key=cfg.key())
    assert len(reused_rows([cfg.replace(futility="trend-v1")], ["k"], "x", "paper", full)) == 1


def test_schema_columns_added_later_read_as_empty_in_older_tables(tmp_path):
    runner.run_sweep(trainer("base"), "smoke", device="cpu", root=tmp_path, progress=False)
    path = tmp_path / "base.csv"
    new = pd.read_csv(path, dtype=str)
    new.drop(columns=["futility", "reused_from"]).to_csv(path, index=False)  # as a table written before them
    with pytest.warns(UnsealedTable):  # rewritten by hand, not by the store
        df = catalog.load("base", root=tmp_path)
    assert len(df) == len(new) and df["futility"].isna().all() and df["reused_from"].isna().all()
    with pytest.raises(Exception, match="columns missing"):
        new.drop(columns=["steps"]).to_csv(path, index=False)
        catalog.load("base", root=tmp_path)


# ----------------------------------------------------------------------------- know before you start


def test_the_projection_scales_only_the_runs_that_have_the_rule():
    from rgr.experiments.sizing.calibration import Calibration
    from rgr.experiments.sizing.projection import project

    cal = Calibration(a=1e-3, b=1e-9, c=1e-2, e=1e-9, device="cpu", points=1)
    off = [RunConfig(m=64, d_model=16, h=1, d_k=d, seed=s) for d in (2, 4) for s in (0, 1)]
    on = [c.replace(futility="trend-v1") for c in off]
    full = project(off, calibration=cal)
    assert project(off, calibration=cal, futility_share=0.4).cpu_seconds == pytest.approx(full.cpu_seconds)
    ruled = project(on, calibration=cal, futility_share=0.4)
    assert ruled.cpu_seconds == pytest.approx(0.4 * full.cpu_seconds)
    assert ruled.expected_steps == round(0.4 * full.model_steps) and ruled.model_steps == full.model_steps
    with pytest.raises(ValueError, match="futility_share"):
        project(on, calibration=cal, futility_share=0.0)


def test_the_kept_share_is_the_replayed_steps_over_the_bound():
    from rgr.experiments.futility import kept_share

    table = _table({8: [[0.2] * 40], 16: [[0.995] * 40]})  # one run stopped at 2,000 of 20,000; one to its end
    assert kept_share(table, RULE) == pytest.approx((2_000 + 20_000) / 40_000)


def test_matmul_flops_in_closed_form(monkeypatch):
    from rgr.experiments.sizing import projection
    from rgr.experiments.sizing.calibration import Calibration

    cal = Calibration(a=1.0, b=0.0, c=0.0, e=0.0, device="cpu", points=1)  # no timing: the FLOPs are counted
    monkeypatch.setattr(projection, "pick_calibration", lambda *a, **k: cal)

    def flops(c: RunConfig, futility_share: float | None = None) -> str:
        [line] = [s for s in projection.dry_run_report([c], futility_share=futility_share) if "FLOPs" in s]
        return line.split("matmul FLOPs: ")[1].split(";")[0]

    c = RunConfig(m=64, d_model=16, h=2, d_k=4)  # ell 16, 20,000 steps, a check every 500 on 500 contexts, test 2,000
    step = 2 * 4 * (8 * 16 * 16 + 6 * 16 * 16)
    check = 500 * 2 * 4 * (4 * 16 * 16 + 2 * 16 * 16)
    assert flops(c) == f"{20_000 * step + (40 + 4) * check:.2e}"
    assert flops(c.replace(futility="trend-v1"), 0.5) == f"{0.5 * (20_000 * step + (40 + 4) * check):.2e}"


def test_the_committed_replay_on_base_paper_meets_the_rules_claims():
    """README 'Futility stopping': the rule was chosen on base's paper rows, where it saves at least 55% and changes
    no answer; on linear's paper rows (10 seeds, replayed unchanged) it changes none either."""
    base = compare(catalog.load("base", "paper"), RULE)
    assert base.saved >= 0.55 and base.unchanged and base.changed_tied.empty
    assert compare(catalog.load("linear", "paper"), RULE).unchanged
