"""E7 through the resumable store: rows with provenance, resumption, the stand-in labelled."""

from dataclasses import replace

import pytest

from rgr.experiments.runner import run_sweep
from rgr.gpt2.experiment import GPT2, SCHEMA, GPT2Sweep, embeddings_banner, experiment_grid
from rgr.gpt2.training import GPT2Trainer
from rgr.store import TableError

STAND_IN = GPT2Trainer(GPT2Sweep(embeddings="stand-in"))


def run_gpt2_sweep(preset, device, **kw):
    return run_sweep(STAND_IN, preset, device, **kw)


def test_smoke_sweep_writes_resumes_and_labels(tmp_path):
    df = run_gpt2_sweep("smoke", "cpu", root=tmp_path, progress=False, log=lambda s: None)
    grid = experiment_grid("smoke", embeddings="stand-in")
    assert len(df) == len(grid) and set(df.run_key) == {GPT2.run_key(c, "smoke") for c in grid}
    assert (df.embedding_source == "stand-in (not GPT-2)").all() and (df.preset == "smoke").all()
    assert df.test_acc.between(0, 1).all()
    before = df.set_index("run_key")["date"]
    again = run_gpt2_sweep("smoke", "cpu", root=tmp_path, progress=False, log=lambda s: None)
    assert (again.set_index("run_key").loc[before.index, "date"] == before).all()  # nothing retrained
    banner = embeddings_banner(tmp_path)  # stand-in rows: the chapter's top says so, and how to use GPT-2
    assert "not GPT-2" in banner and f"{len(grid)} of the {len(grid)} rows" in banner and "gpt2 build" in banner


def test_the_schema_names_the_chapter_s_columns():
    assert {"test_acc", "embedding_source", "D_K", "h", "seed"} <= {c.name for c in SCHEMA.all_columns}


def test_banner_without_table(tmp_path):
    assert "No E7 table yet" in embeddings_banner(tmp_path)


def test_banner_refuses_a_corrupt_table(tmp_path):
    (tmp_path / "gpt2.csv").write_text("run_key\nabc")
    with pytest.raises(TableError):
        embeddings_banner(tmp_path)


def test_gpt2_is_an_experiment_of_the_one_runner():
    """E7 is planned, keyed, stacked and trained through the runner's protocol (so Dask can take it too)."""
    import pickle

    from rgr import catalog

    assert catalog.get("gpt2") is GPT2 and GPT2.shardable
    grid = STAND_IN.planned_runs("smoke")
    groups = STAND_IN.stack_groups(grid, None)
    assert sorted(i for g in groups for i in g) == list(range(len(grid)))
    assert all(len({grid[i].shape_key() for i in g}) == 1 for g in groups)
    assert pickle.loads(pickle.dumps(STAND_IN)) == STAND_IN  # a Dask worker receives it


def test_shards_deal_whole_stacks_round_robin():
    """Shard i of n holds every seed of the i-th, (i + n)-th, ... shapes: disjoint, complete, balanced."""
    whole = STAND_IN.planned_runs("paper")
    parts = [STAND_IN.planned_runs("paper", None, (i, 3)) for i in range(3)]
    keys = [{c.shape_key() for c in p} for p in parts]
    assert sorted(c.seed for p in parts for c in p) == sorted(c.seed for c in whole)
    assert set().union(*keys) == {c.shape_key() for c in whole} and sum(map(len, keys)) == 16
    assert sorted(map(len, keys)) == [5, 5, 6]
    for p in parts:  # whole stacks: every seed of a shape in one shard
        assert all(sum(c.shape_key() == k for c in p) == 7 for k in {c.shape_key() for c in p})


def test_a_stack_past_the_deadline_stops_early_and_the_sweep_resumes(tmp_path, monkeypatch):
    """A stack projected past the deadline stops after its probe steps; the sweep keeps what finished and
    a rerun trains the rest."""
    import time

    from rgr.experiments.runner import run_sweep

    logs = []
    run_sweep(STAND_IN, "smoke", device="cpu", root=tmp_path, progress=False, deadline=time.monotonic() - 1,
              log=logs.append)
    assert any("stopped at the deadline" in line for line in logs)
    assert not (tmp_path / "gpt2.csv").exists()  # nothing started, nothing written
    out = run_sweep(STAND_IN, "smoke", device="cpu", root=tmp_path, progress=False)
    assert len(out) == len(STAND_IN.planned_runs("smoke"))


def test_the_deadline_projection_stops_a_long_stack():
    """A stack whose projected end lies past the deadline stops at its probe (step 256 of 300), not at its end."""
    import time

    from rgr.experiments.runner import DeadlineExceeded
    from rgr.gpt2.training import train_runs

    cfgs = [replace(c, steps=300) for c in STAND_IN.planned_runs("smoke")[:2]]
    seen = []
    with pytest.raises(DeadlineExceeded, match="ms/step"):
        train_runs(cfgs, device="cpu", deadline=time.monotonic() + 1e-3, progress=lambda d, t: seen.append(d))
    assert max(seen) == 256


def test_the_bf16_path_has_a_cpu_twin():
    """The CUDA sweep's bf16 autocast runs on a CPU too (autocast on the CPU), close to fp32 and labelled."""
    from rgr.gpt2.training import train_runs

    cfgs = STAND_IN.planned_runs("smoke")[:2]
    fp32 = train_runs(cfgs, device="cpu", precision="fp32")
    bf16 = train_runs(cfgs, device="cpu", precision="bf16")
    assert {r["precision"] for r in fp32} == {"fp32"} and {r["precision"] for r in bf16} == {"bf16 autocast"}
    for a, b in zip(fp32, bf16):
        assert a["final_train_loss"] != b["final_train_loss"]  # it did take another path
        assert abs(a["final_train_loss"] - b["final_train_loss"]) < 0.05 * a["final_train_loss"]
    with pytest.raises(ValueError, match="precision must be one of"):
        train_runs(cfgs, device="cpu", precision="fp16")


def test_the_graphed_step_has_an_eager_twin(monkeypatch):
    """On a GPU each step replays a CUDA graph over static input buffers (rgr.experiments.engine.graphed); here the
    same body on the same static buffers runs eagerly and trains exactly as the plain step."""
    from rgr.gpt2 import training

    cfgs = STAND_IN.planned_runs("smoke")[:2]
    plain = training.train_runs(cfgs, device="cpu")
    monkeypatch.setattr(training, "graphs_enabled", lambda device: True)
    twin = training.train_runs(cfgs, device="cpu")
    for a, b in zip(plain, twin):
        assert (a["test_acc"], a["final_train_loss"], a["best_step"]) == (b["test_acc"], b["final_train_loss"],
                                                                         b["best_step"])


def test_the_dry_run_projects_the_pending_runs(tmp_path):
    """`sweep gpt2 --dry-run`: the runs, the pending ones, and hours from a short bench of two stacks here."""
    lines = STAND_IN.dry_run_report("smoke", "cpu")
    assert lines[0] == "gpt2/smoke: 8 runs of 20 steps; 8 pending" and "projected" in lines[1]
    done = run_sweep(STAND_IN, "smoke", device="cpu", root=tmp_path, progress=False)
    assert STAND_IN.dry_run_report("smoke", "cpu", done=done)[1] == "nothing to train"
