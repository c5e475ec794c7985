"""The theory chapter's score panels (rgr.chapters.figures.theory)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from rgr.chapters.figures.theory import plot_head_scores  # noqa: E402


def test_score_panels_share_one_labelled_colour_scale_and_name_their_axes():
    S = torch.tensor([[[0.5, -2.0], [0.1, 0.0]], [[1.0, 0.3], [-0.4, 0.2]]])  # (h = 2, ell = 2, ell = 2)
    fig = plot_head_scores(S, 0.0, torch.tensor([[False, True], [False, False]]))
    panels, bar = fig.axes[:4], fig.axes[-1]
    assert len(fig.axes) == 5 and "score" in bar.get_ylabel()
    assert bar.get_ylim() == (-2.0, 2.0)  # symmetric about 0, the largest |score| of any head
    assert [ax.images[0].get_clim() for ax in panels[:3]] == [(-2.0, 2.0)] * 3  # heads and their max: one scale
    assert [ax.get_ylabel() for ax in panels] == ["source p", "", "source p", ""]
    assert [ax.get_xlabel() for ax in panels] == ["", "", "target q", "target q"]
    plt.close(fig)
