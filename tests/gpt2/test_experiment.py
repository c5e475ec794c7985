"""E7 through the resumable store: rows with provenance, resumption, the stand-in labelled."""

import pytest

from rgr.experiments.runner import run_sweep
from rgr.gpt2.experiment import GPT2, SCHEMA, GPT2Sweep, embeddings_banner, load_gpt2_results, run_key
from rgr.gpt2.training import experiment_grid
from rgr.store import TableError

STAND_IN = GPT2Sweep(embeddings="stand-in")


def run_gpt2_sweep(preset, device, **kw):
    return run_sweep(STAND_IN, preset, device, **kw)


def test_smoke_sweep_writes_resumes_and_labels(tmp_path):
    df = run_gpt2_sweep("smoke", "cpu", root=tmp_path, progress=False, log=lambda s: None)
    grid = experiment_grid("smoke", embeddings="stand-in")
    assert len(df) == len(grid) and set(df.run_key) == {run_key(c, "smoke") for c in grid}
    assert (df.embedding_source == "stand-in (not GPT-2)").all() and (df.preset == "smoke").all()
    assert df.test_acc.between(0, 1).all()
    before = df.set_index("run_key")["date"]
    again = run_gpt2_sweep("smoke", "cpu", root=tmp_path, progress=False, log=lambda s: None)
    assert (again.set_index("run_key").loc[before.index, "date"] == before).all()  # nothing retrained
    assert len(load_gpt2_results("smoke", root=tmp_path)) == len(grid)
    banner = embeddings_banner(tmp_path)  # stand-in rows: the chapter's top says so, and how to use GPT-2
    assert "not GPT-2" in banner and f"{len(grid)} of the {len(grid)} rows" in banner and "gpt2 build" in banner


def test_missing_table_is_an_error(tmp_path):
    with pytest.raises(TableError, match="gpt2.csv"):
        load_gpt2_results(root=tmp_path)
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

    assert catalog.get("gpt2") is GPT2 and not GPT2.shardable
    grid = STAND_IN.planned_runs("smoke")
    groups = STAND_IN.stack_groups(grid, None)
    assert sorted(i for g in groups for i in g) == list(range(len(grid)))
    assert all(len({grid[i].shape_key() for i in g}) == 1 for g in groups)
    assert pickle.loads(pickle.dumps(STAND_IN)) == STAND_IN  # a Dask worker receives it
