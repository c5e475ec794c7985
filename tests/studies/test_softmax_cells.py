"""Algorithm 2 at trained cells (rgr.studies.softmax_cells.softmax_at_cells) against Theorem 8.1, and its rows of
data/softmax_cells.csv as the runner computes them (SoftmaxCellsTrainer)."""

import math

import pandas as pd
import pytest

from rgr.studies.softmax_cells import SoftmaxCellsTrainer, softmax_at_cells


@pytest.fixture(scope="module")
def table():
    return softmax_at_cells([(64, 16)], d_ks=[16], ells=[4, 64, 128], seeds=[0], n=60)


def test_rows_and_split(table):
    # h = ceil(m / d_model) heads; ell > m is skipped; one Gaussian width plus the one-hot variant
    assert set(table.h) == {4}
    assert set(table.ell) == {4, 64}
    assert set(table.inputs) == {"gaussian", "one-hot"}
    one_hot = table[table.inputs == "one-hot"]
    assert set(one_hot.d_k) == {math.ceil(2 * math.log(64) ** 2)}
    assert (table.D_K == table.h * table.d_k).all()


def test_context_length_condition(table):
    oh = table[table.inputs == "one-hot"].set_index("ell")
    # ell = 4 <= 2 (h - 1): the non-owner heads' background (h - 1) / ell reaches tau = 1/2 -> false positives
    assert oh.loc[4, "background"] >= 0.5 and oh.loc[4, "f1"] < 0.9 and not oh.loc[4, "condition"]
    # ell = m = 64 >= max(h, ln m): the theorem's regime, every pair right
    assert oh.loc[64, "condition"] and oh.loc[64, "f1"] >= 0.99


@pytest.mark.parametrize(
    "kw, name",
    [(dict(d_ks=[]), "d_ks"), (dict(ells=[1]), "ells"), (dict(seeds=[]), "seeds")],
)
def test_bad_input_names_parameter(kw, name):
    args = dict(cells=[(64, 16)], d_ks=[16], ells=[8], seeds=[0]) | kw
    with pytest.raises(ValueError, match=name):
        softmax_at_cells(**args)


def test_figure_draws(table):
    from rgr.chapters.figures.softmax import plot_softmax_construction

    fig = plot_softmax_construction(table)
    labels = {t.get_text() for t in fig.legends[0].get_texts()}  # one legend for all panels, below them
    assert any(lb.startswith("one-hot inputs") for lb in labels) and any("max(h" in lb for lb in labels)


def test_the_trainer_gives_each_run_the_studys_row(tmp_path):
    """The runner's rows (stacks of one cell and seed, here cut to stacks of 5) are the study's rows, bit for bit."""
    from rgr.experiments.runner import run_sweep
    from rgr.experiments.softmax_cells_table import PRESETS, SOFTMAX_CELLS

    got = run_sweep(SoftmaxCellsTrainer(SOFTMAX_CELLS), "smoke", "cpu", root=tmp_path, progress=False, max_stack=5,
                    log=lambda s: None)
    P = PRESETS["smoke"]
    want = softmax_at_cells(list(P.cells), list(P.d_ks), list(P.ells), list(P.seeds), n=P.n_contexts)
    order = ["m", "d_model", "seed", "inputs", "d_k", "ell"]
    got = got.sort_values(order)[list(want.columns)].reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want.sort_values(order).reset_index(drop=True), check_dtype=False)
    assert set(got.inputs) == {"gaussian", "one-hot"} and len(got) == len(SOFTMAX_CELLS.planned_runs("smoke"))
