"""The threshold shift, drawn with each threshold's ladder bracket (rgr.chapters.figures.softmax)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from rgr.chapters.figures.softmax import plot_threshold_shift  # noqa: E402


def _cells(rows) -> pd.DataFrame:
    cols = ["m", "d_model", "D_K_star", "D_K_opt", "D_K_cons"]
    return pd.DataFrame(rows, columns=cols).assign(r=1).astype({c: "Int64" for c in cols[2:]})


def test_each_marker_spans_its_bracket_and_a_missing_threshold_draws_nothing():
    mx = _cells([(64, 16, 20, 16, 20), (128, 32, 16, 16, 18)])
    soft = _cells([(64, 16, 32, 28, 32), (128, 32, None, None, None)])
    fig = plot_threshold_shift(mx, soft)
    ax = fig.axes[0]
    spans = []
    for bars in ax.collections:  # one LineCollection of error bars per model: max over heads, then softmax
        spans.append([tuple(np.round(np.asarray(seg)[:, 1], 6)) if len(seg) else () for seg in bars.get_segments()])
    assert spans == [[(16.0, 20.0), (16.0, 18.0)], [(28.0, 32.0), ()]]
    assert len(ax.texts) == 1  # no ratio where the softmax never reached the target
    plt.close(fig)
