"""Which cells a chapter's figure shows (rgr.results.findings), on synthetic run tables."""

import pandas as pd
import pytest

from rgr.results.findings import shown_cell, shown_degrees


def _runs(cells):
    return pd.DataFrame([dict(m=m, d_model=d, r=r, h=1, D_K=8, seed=0, test_f1=1.0) for m, d, r in cells])


def test_shown_cell_is_the_papers_where_present_else_the_middle_one():
    runs = _runs([(16, 8, 1), (32, 8, 1), (64, 16, 1)])
    assert shown_cell(runs, (32, 8)) == shown_cell(runs, [32, 8])
    assert shown_cell(runs, (32, 8)).fig1_cell == "(32, 8)"
    other = shown_cell(runs, (256, 32))
    assert (other.fig1_cell, other.fig1_m, other.fig1_d_model) == ("(32, 8)", 32, 8)
    with pytest.raises(ValueError, match="no \\(m, d_model\\) cell"):
        shown_cell(runs.iloc[:0], (256, 32))


def test_shown_degrees_are_the_papers_present_ones_else_the_two_smallest():
    runs = _runs([(128, 32, 1), (128, 32, 2), (128, 32, 8)])
    assert shown_degrees(runs, (2, 4)) == shown_degrees(runs, (2,))
    assert shown_degrees(runs, (2, 4)).fig11_r == "r = 2"
    other = shown_degrees(runs, (16, 32))
    assert (other.fig11_r, other.degrees) == ("r = 1 and r = 2", (1, 2))
    with pytest.raises(ValueError, match="'r'"):
        shown_degrees(runs.drop(columns="r"), (2, 4))
