"""Algorithm 2 at trained cells (rgr.studies.softmax_cells.softmax_at_cells) against Theorem 8.1."""

import math

import pytest

from rgr.studies.softmax_cells import softmax_at_cells


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


def test_summary(table):
    from rgr.studies.softmax_cells import softmax_cells_summary

    s = softmax_cells_summary(table).iloc[0]
    assert s.h == 4 and s.one_hot_min_ell == 64
    g = table[table.inputs == "gaussian"]
    assert s.gaussian_best_f1 == pytest.approx(g.f1.max())


def test_figure_draws(table):
    from rgr.chapters.figures.softmax import plot_softmax_construction

    fig = plot_softmax_construction(table)
    labels = {t.get_text() for t in fig.legends[0].get_texts()}  # one legend for all panels, below them
    assert any(lb.startswith("one-hot inputs") for lb in labels) and any("max(h" in lb for lb in labels)
