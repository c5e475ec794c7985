"""What data/softmax_cells.csv is (rgr.experiments.softmax_cells_table): presets at the softmax sweep's cells, planned
runs and keys, and the committed rows against a fresh recomputation of the study."""

import pandas as pd
import pytest

from rgr.catalog import get, load, load_complete
from rgr.experiments.softmax_cells_table import PRESETS, SOFTMAX_CELLS
from rgr.store import TableError

ORDER = ["m", "d_model", "seed", "inputs", "d_k", "ell"]


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_each_preset_builds_at_the_softmax_sweeps_cells(preset):
    softmax = get("softmax")
    assert set(PRESETS[preset].cells) == {(r.m, r.d_model) for r in softmax.planned_runs(preset, None, (0, 1))}


def test_planned_runs_and_keys():
    P = PRESETS["book"]
    runs = SOFTMAX_CELLS.planned_runs("book")
    assert all(r.ell <= r.m for r in runs) and {r.inputs for r in runs} == {"gaussian", "one-hot"}
    assert {r.d_k for r in runs if r.inputs == "one-hot"} == {None} and all(r.n_contexts == P.n_contexts for r in runs)
    per_cell_seed = sum(1 for ell in P.ells if ell <= 64) * (len(P.d_ks) + 1)  # the m = 64 cells
    assert len([r for r in runs if (r.m, r.d_model, r.seed) == (64, 16, 0)]) == per_cell_seed
    keys = {SOFTMAX_CELLS.run_key(r, p) for p in PRESETS for r in SOFTMAX_CELLS.planned_runs(p)}
    assert len(keys) == sum(len(SOFTMAX_CELLS.planned_runs(p)) for p in PRESETS)  # a preset's rows never collide


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_committed_table_holds_every_planned_run(preset):
    df = load_complete("softmax_cells", preset)
    assert len(df) == len(SOFTMAX_CELLS.planned_runs(preset)) and (df.D_K == df.h * df.d_k).all()


def test_the_committed_smoke_rows_are_the_study_recomputed_now():
    from rgr.studies.softmax_cells import softmax_at_cells

    P = PRESETS["smoke"]
    want = softmax_at_cells(list(P.cells), list(P.d_ks), list(P.ells), list(P.seeds), n=P.n_contexts)
    got = load("softmax_cells", "smoke").sort_values(ORDER)[list(want.columns)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want.sort_values(ORDER).reset_index(drop=True), check_dtype=False)


def test_the_book_rows_are_the_paper_rows_of_the_same_cells():
    """The presets differ only in their cells, so a cell both hold has the same rows (one computation, stored twice)."""
    cols = [*ORDER, "h", "D_K", "n_contexts", "f1", "separated", "background", "condition"]
    book = load("softmax_cells", "book")[cols].sort_values(ORDER).reset_index(drop=True)
    paper = load("softmax_cells", "paper")[cols]
    paper = paper[paper.m <= 128].sort_values(ORDER).reset_index(drop=True)
    pd.testing.assert_frame_equal(book, paper)


def test_a_missing_table_names_the_command(tmp_path):
    with pytest.raises(TableError, match=r"python -m rgr sweep softmax_cells --preset book"):
        load_complete("softmax_cells", "book", root=tmp_path)
