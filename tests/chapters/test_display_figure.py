"""rgr.chapters.display.show_figure: a chapter's figure glued under its name, not shown, and closed."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import myst_nb.ext.glue as myst_glue  # noqa: E402

from rgr.chapters.display import show_figure  # noqa: E402


def test_glues_under_its_name_hidden_and_closes(monkeypatch):
    shown = []
    monkeypatch.setattr(myst_glue, "ipy_display", lambda bundle, raw, metadata: shown.append((bundle, metadata)))
    plt.close("all")
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    show_figure("fig-demo", fig)
    assert len(shown) == 1
    bundle, metadata = shown[0]
    assert metadata["scrapbook"] == {"name": "fig-demo", "mime_prefix": myst_glue.GLUE_PREFIX}  # glued, not shown
    assert bundle and all(k.startswith(myst_glue.GLUE_PREFIX) for k in bundle)
    assert "Figure" in bundle[myst_glue.GLUE_PREFIX + "text/plain"]  # the figure itself (a kernel adds its PNG)
    assert plt.get_fignums() == []
