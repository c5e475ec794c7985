"""D_K* against the step budget, drawn (rgr.chapters.figures.settled)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from rgr.chapters.figures.settled import plot_budget_thresholds  # noqa: E402


def _frame() -> pd.DataFrame:
    rows = [  # m, d_model, budget, D_K*, opt, cons, at, cut, complete
        (512, 64, 1, 52, 48, 52, 10, 9, 1.0), (512, 64, 4, 48, 48, 48, 10, 0, 1.0),
        (512, 64, 16, 44, 40, 48, 10, 0, 0.5),
        (1024, 128, 1, 40, 40, 40, 10, 9, 1.0), (1024, 128, 4, 32, 32, 32, 10, 9, 1.0),
        (256, 16, 1, 176, 160, 192, 10, 5, 1.0), (256, 16, 4, 128, 128, 160, 10, 5, 1.0),
    ]
    cols = ["m", "d_model", "budget", "D_K_star", "D_K_opt", "D_K_cons", "at_star", "cut_at_star", "complete"]
    return pd.DataFrame(rows, columns=cols)


def test_one_line_per_cell_and_only_complete_budgets():
    fig = plot_budget_thresholds(_frame())
    diag, other = fig.axes[:2]
    assert [t.get_text() for t in diag.get_legend().get_texts()] == ["512, 64", "1024, 128"]
    assert [t.get_text() for t in other.get_legend().get_texts()] == ["256, 16"]
    xs = sorted({round(2 ** round(np.log2(x))) for line in diag.get_lines() for x in line.get_xdata()})
    assert xs == [1, 4]  # 16x at (512, 64) is half done: not drawn
    plt.close(fig)


def test_unsettled_points_are_hollow_and_a_floor_is_marked():
    fig = plot_budget_thresholds(_frame())
    diag = fig.axes[0]
    white = [c for c in diag.collections if len(c.get_offsets()) and len(c.get_facecolors())
             and (c.get_facecolors()[0][:3] == 1.0).all()]
    hollow = sorted((round(2 ** round(np.log2(x))), y) for c in white for x, y in c.get_offsets().tolist())
    assert hollow == [(1, 40.0), (1, 52.0), (4, 32.0)]  # most runs at those D_K* cut
    floors = [c for c in diag.collections if getattr(c, "get_paths", None) and len(c.get_offsets())
              and c.get_offsets()[0][1] < 32 and round(c.get_offsets()[0][0]) == 4]
    assert floors  # (1024, 128) at 4x sits at the design's lowest point, 32: a triangle under it
    plt.close(fig)


def test_equal_readings_of_two_cells_both_show():
    """(512, 64) and a cell with the same D_K* at 1x and 4x: their points are set apart, not drawn over each other."""
    f = _frame()
    twin = f[f.m == 512].assign(m=4096, d_model=512)
    fig = plot_budget_thresholds(pd.concat([f, twin], ignore_index=True))
    at_1x = {round(x, 6) for c in fig.axes[0].collections for x, _ in c.get_offsets().tolist() if round(x) == 1}
    assert len(at_1x) == 3  # (512, 64), (1024, 128) and the twin: each cell's 1x point at its own x
    plt.close(fig)
