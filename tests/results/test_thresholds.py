"""Per-cell thresholds and law fits on a synthetic table whose answers are known by construction."""

import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from rgr.chapters.figures import denser_graphs as dense  # noqa: E402
from rgr.chapters.figures import permutation_sweeps as figs  # noqa: E402
from rgr.results.denser_graphs import denser_findings  # noqa: E402
from rgr.results.thresholds import law_fits, single_head_penalty, thresholds  # noqa: E402


def _table(slope=3.0):
    """F1 = 1 at D_K >= threshold(h), 0.5 below; threshold = slope * m ln m / d for h >= 4, 4x that for h = 1."""
    rows = []
    for m, d in [(64, 16), (128, 16), (128, 32), (256, 32)]:
        law = slope * m * math.log(m) / d
        for h in (1, 4, 8):
            thr = law * (4 if h == 1 else 1) * (1.0 if h == 4 else 1.2)
            for dk in [2**k for k in range(1, 13) if 2**k >= h]:
                for s in range(3):
                    rows.append(dict(m=m, d_model=d, r=1, h=h, D_K=dk, seed=s, test_f1=1.0 if dk >= thr else 0.5))
    return pd.DataFrame(rows)


def test_thresholds_recover_the_construction():
    cells = thresholds(_table())
    for _, c in cells.iterrows():
        law = 3.0 * c.m * math.log(c.m) / c.d_model
        want = 2 ** math.ceil(math.log2(law))
        assert c.D_K_star == want and c.D_K_opt == want and c.D_K_cons == want
        assert c.h_star in (4, 8) and c.d_k_star == want / c.h_star
        assert c.D_K_star_h1 == 2 ** math.ceil(math.log2(4.8 * law))
    assert (single_head_penalty(cells) >= 4).all()


def test_law_fits_and_precondition():
    cells = thresholds(_table())
    fits = law_fits(cells)
    assert fits.n_excluded == 1  # (128, 16)
    assert fits.origin_all.n == 4 and fits.origin_pre.n == 3
    assert fits.origin_all.slope > 0 and 0 < fits.origin_all.r2 <= 1
    with pytest.raises(ValueError, match="at least 2 cells"):
        law_fits(cells.iloc[:1])


def test_the_precondition_drops_only_the_narrow_large_cells():
    from rgr.results.thresholds import meets_precondition

    grid = pd.DataFrame([(m, d) for m in (64, 128, 256, 512) for d in (16, 32, 64)], columns=["m", "d_model"])
    dropped = grid[~meets_precondition(grid)]
    assert sorted(map(tuple, dropped.to_numpy())) == [(128, 16), (256, 16), (512, 16)]


def test_figures_draw():
    df = _table()
    cells = thresholds(df)
    fits = law_fits(cells)
    for fig in (figs.plot_f1_curves(df), figs.plot_dk_star_grid(cells), figs.plot_h_star(cells),
                figs.plot_scaling_law(cells, fits), figs.plot_heads_law(cells, fits.heads), figs.plot_diagonal(cells)):
        assert fig.axes
    with pytest.raises(ValueError, match="cells not in the table"):
        figs.plot_f1_curves(df, cells=[(999, 1, 1)])
    bounds = cells[["m", "d_model", "r", "x_law"]].assign(lower=1.0, construction=cells.D_K_star.astype(float) * 4)
    law = figs.plot_scaling_law(cells, fits, bounds)  # fits, and necessary/learned/sufficient, each its legend under it
    assert len([a for a in law.axes if a.axison]) == 2 and len(law.axes) == 4
    ax = dense.plot_regular_forms(cells).axes[0]  # r = 1: log2 m = log2(m^2 / m'), the forms agree
    blue, green = (c.lines[0].get_ydata() for c in ax.containers)
    np.testing.assert_allclose(np.asarray(blue, float), np.asarray(green, float))
    fit = denser_findings(cells, 16).log2m_all
    assert dense.plot_regular_law(cells, [fit]).legends  # under the axes, clear of the points
    diag = figs.plot_diagonal(cells, fits.origin_all)
    assert any("law" in t.get_text() for t in diag.axes[0].get_legend().get_texts())
    assert "preset" not in diag.axes[0].get_xlabel()
    mixed = cells.assign(preset=["paper"] * (len(cells) - 1) + ["book"], n_seeds=[10] * (len(cells) - 1) + [2])
    labels = [t.get_text() for t in figs.plot_diagonal(mixed).axes[0].get_xticklabels()]
    # each cell's preset and seeds, one per line
    assert labels[-1].endswith("book\nn=2") and labels[0].endswith("paper\nn=10")


def test_extension_figures_draw():
    from rgr.chapters.figures import softmax as ext
    from rgr.chapters.figures.value_channel import plot_value_mse

    df = _table()
    cells = thresholds(df)
    soft = cells.assign(D_K_star=cells.D_K_star * 2)
    assert ext.plot_threshold_shift(cells, soft).axes
    lin = df[df.h.isin([1, 4])]
    fig = ext.plot_linear_ablation(lin, df)
    for ax in fig.axes:
        for line in ax.get_lines():
            if line.get_label().startswith("max, best h"):  # an envelope: never falls as D_K grows
                assert (np.diff(line.get_ydata()) >= 0).all()
    val = df.assign(test_mse=1.0 - df.test_f1 * 0.5)
    base = pd.DataFrame(dict(d_model=[16, 32], mse_zero=[1.0, 1.0], mse_mean=[0.9, 0.9]))
    assert plot_value_mse(val, base).axes


def test_figures_say_when_there_is_nothing_to_draw():
    import matplotlib.pyplot as plt

    plt.close("all")
    df = _table()
    never = df.assign(test_f1=0.1)
    cells = thresholds(never)
    for fig in (figs.plot_h_star(cells), figs.plot_scaling_law(cells, None), figs.plot_heads_law(cells, None),
                figs.plot_diagonal(cells), dense.plot_regular_law(cells), dense.plot_regular_forms(cells),
                dense.plot_h_star_vs_r(cells), figs.plot_f1_curves(df.iloc[:0]),
                figs.plot_dk_star_grid(cells.iloc[:0])):
        texts = [t.get_text() for ax in fig.axes for t in ax.texts]
        assert any("no " in t or "too few" in t for t in texts), texts


def test_bracket_orders_bounds():
    from rgr.results.thresholds import bracket
    from rgr.theory.bounds import bit_budget_DK

    cells = thresholds(_table())
    cons = pd.DataFrame(dict(m=cells.m, d_model=cells.d_model, r=1, rule="best-split", criterion="margin", found=True,
                             D_K=cells.m))
    b = bracket(cells, cons)
    assert (b.construction == b.m).all()
    assert b.lower.iloc[0] == pytest.approx(bit_budget_DK(64, 64, 16, 32.0))
    assert (b.lower < cells.D_K_star.astype(float)).all()  # the learned threshold respects the bound here
    assert (b.lower_sampled < b.lower).all()  # derangements are fewer than all m-edge graphs
    assert "algorithm1" not in b or b.algorithm1.isna().all()


def test_transitions_width_on_hand_table():
    import pandas as pd

    from rgr.results.thresholds import transitions

    rows = []
    # h = 1: 0.1 at 16, 0.3 at 32, 0.995 at 64 -> jump within one doubling (width 2)
    # h = 2: 0.2 at 16, 0.7 at 32, 1.0 at 64 -> last budget below 0.5 is 16 (width 4)
    # h = 4: never passes -> no row
    for h, f1s in ((1, (0.1, 0.3, 0.995)), (2, (0.2, 0.7, 1.0)), (4, (0.1, 0.2, 0.5))):
        for D_K, f in zip((16, 32, 64), f1s):
            for seed in range(2):
                rows.append(dict(m=64, d_model=16, r=1, h=h, D_K=D_K, seed=seed, test_f1=f))
    t = transitions(pd.DataFrame(rows)).set_index("h")
    assert list(t.index) == [1, 2]
    assert t.loc[1, "width"] == 2 and t.loc[2, "width"] == 4
    assert t.loc[2, "D_below"] == 16 and t.loc[2, "D_pass"] == 64
