"""The sweep runner: grids, refinement rounds, resumability, shards, table errors."""

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from rgr import catalog
from rgr.experiments import runner
from rgr.experiments.planner import SCHEMA, Cell, Grid, ladder, parse_cells, run_key
from rgr.experiments.registry import EXPERIMENTS, get_experiment
from rgr.experiments.runner import merge_shards
from rgr.store import TableError
from rgr.trainers import trainer
from tests import ROOT


def load_results(name, root=None):
    return catalog.load(name, root=root)


def run_sweep(name, *args, **kw):
    return runner.run_sweep(trainer(name), *args, **kw)

VOLATILE = ["date", "wall_time_s", "stack_size", "git_commit", "device_name"]


def test_ladder_is_common_across_heads():
    g = Grid((Cell(256, 32),), (1, 2, 4, 8, 16, 32, 64), (0,), dk_factor=2.0)
    top = 2 ** int(np.ceil(np.log2(2.0 * 256 * np.log(256) / 32)))
    lad = {h: ladder(Cell(256, 32), h, g) for h in g.heads}
    assert lad[1] == [2**k for k in range(1, int(np.log2(top)) + 1)]
    for h, values in lad.items():
        assert all(v % h == 0 and v >= h for v in values)
        assert set(values) <= set(lad[1]) | {h}  # same budgets for every head count
    assert lad[64] == [v for v in lad[1] if v >= 64]
    assert ladder(Cell(64, 64), 64, g) == [64]  # above the top: its smallest budget only


def test_ladder_bottom_cuts_only_below_it():
    g = Grid((Cell(64, 32),), (1, 16), (0,), dk_min=512, dk_max=512, dk_from=64)
    assert ladder(Cell(64, 32), 1, g) == [64, 128, 256, 512] == ladder(Cell(64, 32), 16, g)
    assert ladder(Cell(64, 32), 1, Grid(g.cells, g.heads, g.seeds, dk_min=512, dk_max=512))[:2] == [2, 4]


def _done(exp, preset, f1_of):
    """A fake finished table: every planned run with test_f1 = f1_of(h, D_K)."""
    rows = [dict(m=c.m, d_model=c.d_model, r=c.r, h=c.h, D_K=c.D_K, seed=c.seed, test_f1=f1_of(c.h, c.D_K))
            for c in exp.planned_runs(preset)]
    return pd.DataFrame(rows)


def test_refinement_bisects_between_fail_and_pass():
    exp = get_experiment("base")
    done = _done(exp, "smoke", lambda h, dk: 1.0 if dk >= 8 else 0.5)  # threshold between 4 and 8
    new = {(c.h, c.D_K) for c in exp.planned_runs("smoke", done)} - set(zip(done.h, done.D_K))
    assert (1, 6) in new  # midpoint of 4 (fail) and 8 (pass) for h = 1
    assert (4, 6) not in new and all(dk % h == 0 for h, dk in new)
    # never past the preset's refine_rounds: with the new point done, nothing more is added
    new_rows = pd.DataFrame([dict(m=c.m, d_model=c.d_model, r=1, h=c.h, D_K=c.D_K, seed=c.seed, test_f1=1.0)
                             for c in exp.planned_runs("smoke", done)])
    more = pd.concat([done, new_rows]).drop_duplicates(["m", "d_model", "h", "D_K", "seed"])
    final = {(c.m, c.h, c.D_K) for c in exp.planned_runs("smoke", more)}
    assert final == set(zip(more.m, more.h, more.D_K))


def test_refinement_extends_when_nothing_passes():
    exp = get_experiment("base")
    done = _done(exp, "smoke", lambda h, dk: 0.1)
    new = {(c.m, c.h, c.D_K) for c in exp.planned_runs("smoke", done)} - set(zip(done.m, done.h, done.D_K))
    top = {m: done[done.m == m].D_K.max() for m in done.m.unique()}
    assert new and all(dk == 2 * top[m] and dk <= exp.grid("smoke").dk_max for m, _, dk in new)


def test_refinement_waits_for_all_seeds():
    exp = get_experiment("base")
    done = _done(exp, "smoke", lambda h, dk: 1.0 if dk >= 8 else 0.5)
    partial = done[~((done.D_K == 4) & (done.seed == 1))]
    new = {(c.h, c.D_K) for c in exp.planned_runs("smoke", partial)} - set(zip(done.h, done.D_K))
    assert not new


def test_presets_and_paper_protocol():
    for e in EXPERIMENTS.values():
        assert set(e.presets) == {"smoke", "book", "paper"}
    base = get_experiment("base").grid("paper")
    assert len(base.cells) == 12 and base.heads == (1, 2, 4, 8, 16, 32, 64) and len(base.seeds) == 10
    runs = get_experiment("base").planned_runs("paper")
    assert {r.max_steps for r in runs if (r.m, r.d_model) == (512, 16)} == {80_000}
    l8 = get_experiment("lambda8").planned_runs("paper")
    assert {r.seed for r in l8 if r.m == 4096} == {0, 1, 2} and {r.max_steps for r in l8 if r.m == 4096} == {200_000}
    with pytest.raises(ValueError, match="preset"):
        get_experiment("base").grid("huge")
    with pytest.raises(ValueError, match="experiment"):
        get_experiment("nope")


def test_run_key_depends_on_preset_and_config():
    a, b = get_experiment("base").planned_runs("smoke")[:2]
    assert run_key(a, "smoke") != run_key(a, "book") and run_key(a, "smoke") != run_key(b, "smoke")


def _sweep_cmd(data):
    return [sys.executable, "-m", "rgr", "sweep", "base", "--preset", "smoke", "--device", "cpu",
            "--data", str(data), "--max-stack", "2", "--no-progress"]


def _stable(df):
    return df.drop(columns=VOLATILE).sort_values("run_key").reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    data = tmp_path_factory.mktemp("ref")
    run_sweep("base", "smoke", "cpu", root=data, progress=False, log=lambda s: None)
    return data


def test_interrupted_sweep_resumes_without_retraining(tmp_path, reference):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(_sweep_cmd(tmp_path), cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    table = tmp_path / "base.csv"
    deadline = time.time() + 300
    while time.time() < deadline and not (table.is_file() and len(table.read_text().splitlines()) >= 5):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = load_results("base", root=tmp_path)
    total = len(load_results("base", root=reference))
    assert 4 <= len(before) < total, "the kill should land mid-sweep"
    subprocess.run(_sweep_cmd(tmp_path), cwd=ROOT, env=env, check=True, capture_output=True)
    after = load_results("base", root=tmp_path)
    kept = after.set_index("run_key").loc[before["run_key"]]
    assert (kept["date"].to_numpy() == before["date"].to_numpy()).all()  # finished runs were not trained again
    pd.testing.assert_frame_equal(_stable(after), _stable(load_results("base", root=reference)), check_exact=False,
                                  rtol=1e-5)


def test_shards_merge_into_the_same_table(tmp_path, reference):
    for i in range(2):
        run_sweep("base", "smoke", "cpu", shard=(i, 2), root=tmp_path, progress=False, log=lambda s: None)
    assert len(list(tmp_path.glob("base.shard-*.csv"))) == 2
    merged = load_results("base", root=tmp_path)
    assert merge_shards(get_experiment("base").schema, root=tmp_path) == len(merged)
    assert not list(tmp_path.glob("base.shard-*"))
    pd.testing.assert_frame_equal(_stable(load_results("base", root=tmp_path)),
                                  _stable(load_results("base", root=reference)), check_exact=False, rtol=1e-5)


def test_cells_split_a_sweep_between_machines(tmp_path, reference):
    """--cells: each part trains only its cells (every round); the parts together are the whole sweep."""
    a, b = tmp_path / "a", tmp_path / "b"
    run_sweep("base", "smoke", "cpu", root=a, progress=False, log=lambda s: None, cells=[(16, 8)])
    run_sweep("base", "smoke", "cpu", root=b, progress=False, log=lambda s: None, cells=[(32, 8)])
    ta, tb = load_results("base", root=a), load_results("base", root=b)
    assert set(ta["m"]) == {16} and set(tb["m"]) == {32}
    both = pd.concat([ta, tb], ignore_index=True)
    pd.testing.assert_frame_equal(_stable(both), _stable(load_results("base", root=reference)), check_exact=False,
                                  rtol=1e-5)
    with pytest.raises(ValueError, match="cells: base/smoke has no cell 64x8"):
        run_sweep("base", "smoke", "cpu", root=a, progress=False, log=lambda s: None, cells=[(64, 8)])


def test_parse_cells():
    assert parse_cells("4096x512, 2048X256,4096x512") == ((4096, 512), (2048, 256))
    for bad in ("4096", "4096x", "ax512", "0x8"):
        with pytest.raises(ValueError, match="cells"):
            parse_cells(bad)


def test_corrupt_table_gives_a_clear_error(tmp_path, reference):
    text = (reference / "base.csv").read_text()
    (tmp_path / "base.csv").write_text(text[: len(text) // 2])
    with pytest.raises(TableError, match="base.csv"):
        load_results("base", root=tmp_path)
    with pytest.raises(TableError, match="python -m rgr sweep lambda8"):
        load_results("lambda8", root=tmp_path)
    r = subprocess.run(_sweep_cmd(tmp_path), cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True,
                       text=True)
    assert r.returncode == 2 and "base.csv" in r.stderr and not r.stdout


def test_schema_doc_is_current():
    from rgr.schema_doc import is_current

    assert is_current(ROOT / "data" / "SCHEMA.md"), "run python -m rgr schema"
    text = (ROOT / "data" / "SCHEMA.md").read_text()
    assert all(f"`{c.name}`" in text for c in SCHEMA.all_columns)


@pytest.mark.parametrize("name", ["base", "gpt2", "constructions", "aot", "pal"])
def test_one_preset_check_at_the_runners_entry(name, tmp_path):
    """One preset vocabulary, checked once at the edge (issue 49): run_sweep refuses a preset the table does not
    have in one line naming it, before anything is written; the tables' planners trust their callers."""
    with pytest.raises(ValueError, match=f"preset must be one of .* for {name}, got 'huge'"):
        runner.run_sweep(trainer(name), "huge", "cpu", root=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []
