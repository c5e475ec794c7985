"""Every figure function of the constructions / lower-bounds chapters draws from a small table."""

import matplotlib

matplotlib.use("Agg")

from dataclasses import replace  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from rgr.chapters import style  # noqa: E402
from rgr.chapters.figures import constructions as figs  # noqa: E402
from rgr.chapters.figures import lower_bounds as lb  # noqa: E402
from rgr.protocol import HEADS_ALL  # noqa: E402
from rgr.studies import construction_sweeps as cs  # noqa: E402
from rgr.studies import theory_checks as tc  # noqa: E402
from rgr.studies.construction_sweeps import ConstructionsPreset  # noqa: E402
from rgr.studies.lower_bounds import per_context_table  # noqa: E402
from rgr.studies.theory_checks import theorem81_tables  # noqa: E402
from rgr.theory import bounds  # noqa: E402
from tests.studies.synthetic import explicit_table  # noqa: E402


def test_figures_draw_and_close(tmp_path):
    plt.close("all")  # figures other tests left open
    style.set_style()
    colours = [style.head_color(h) for h in HEADS_ALL]
    assert len(set(colours)) == len(HEADS_ALL) == 7 and style.head_color(3) == style.head_color(2)  # nearest
    panels, summary = cs.separation_panels([("I", "one-hot", 32, 32, 0, {}), ("sm", "softmax-one-hot", 32, 32, 0, {})])
    table = explicit_table("smoke")
    widths = replace(ConstructionsPreset.named("smoke"), width_cells=((64, 32),), width_d_ks=(8, 32), width_ells=(8,),
                     width_n=5, repair_cell=(64, 32), repair_d_ks=(8,))
    out = [
        figs.plot_score_separation(panels),
        figs.plot_success_vs_C(cs.success_rate("one-hot-rademacher", 32, 32, [4, 20], range(2)).assign(label="a")),
        figs.plot_limit_phase(cs.limit_phase("compressive", 32, [8, 32], [1, 8], range(2))),
        figs.plot_leakage_vs_block(cs.leakage_noise(32, 8, 8, [2, 4, 8], [0])),
        figs.plot_head_split(cs.head_split(32, 8, [32, 64], [1, 4], [0], n_contexts=20)),
        figs.plot_softmax_background(cs.softmax_background(32, [1, 2], [8], n=20)),
        lb.plot_bounds_vs_constructions(table, bounds.bound_rows(table)),
        figs.plot_softmax_width(theorem81_tables(widths, n_widths=1).sweep),
        figs.plot_algorithm1_onset(tc.algorithm1_onset([32], [5.0, 20.0], [0, 1])),
        lb.plot_per_context(per_context_table([32], [4, 8], 16, [0], n=2),
                            pd.DataFrame(dict(m=[32, 64], d_model=8, D_K=[4.0, 8.0], source="s"))),
        lb.plot_margins(pd.DataFrame(dict(m=[8, 8], d_model=8, D_K=[2, 4], gamma=[0.01, -1.0], bound_DK=[0.2, 0.1]))),
    ]
    for i, f in enumerate(out):
        assert isinstance(f, plt.Figure)
        f.savefig(tmp_path / f"{i}.png")
    assert plt.get_fignums() == []  # closed: a notebook shows each once
    assert len(summary) == 2 and isinstance(summary, pd.DataFrame)
