"""The book's site configuration (issue 20): one repository URL, version and citation in step,
offline MathJax pinned, glossary and references in the table of contents, downloadable tables."""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import yaml

import rgr
from rgr.chapters import display, style
from tests import ROOT

_spec = importlib.util.spec_from_file_location("rgr_site", ROOT / "book" / "_ext" / "rgr_site.py")
rgr_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rgr_site)
CONFIG = yaml.safe_load((ROOT / "_config.yml").read_text())


def test_versions_agree():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["version"] == project["version"] == rgr.__version__ == rgr_site.rgr_version()
    assert "2509.22840" in cff["preferred-citation"]["identifiers"][0]["value"]


def test_the_repository_url_is_named_once():
    assert "url" in CONFIG["repository"]
    text = re.sub(r"#.*", "", (ROOT / "_config.yml").read_text())  # without the comments
    assert re.findall(r"https?://(?:github|gitlab)\.com/\w", text) == []  # no other repository address
    assert "repository.url" in (ROOT / "README.md").read_text()  # documented for whoever publishes


def _config(url: str):
    theme = {"repository_url": url, "launch_buttons": dict(CONFIG["launch_buttons"])}
    return SimpleNamespace(html_theme_options=theme)


def test_buttons_follow_the_repository_url():
    cfg = _config("")
    rgr_site._buttons(None, cfg)
    t = cfg.html_theme_options
    assert not t.get("use_repository_button") and not any(k.endswith("_url") for k in t["launch_buttons"])
    cfg = _config("https://github.com/o/r")
    rgr_site._buttons(None, cfg)
    t = cfg.html_theme_options
    assert t["use_repository_button"] and t["use_issues_button"]
    assert t["launch_buttons"]["colab_url"] and t["launch_buttons"]["binderhub_url"]
    cfg = _config("https://gitlab.com/o/r")
    rgr_site._buttons(None, cfg)
    assert "colab_url" not in cfg.html_theme_options["launch_buttons"]  # Colab opens GitHub only


def test_offline_mathjax_is_a_pinned_extension():
    assert "sphinx-mathjax-offline" in CONFIG["sphinx"]["extra_extensions"]
    book = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["book"]
    assert any(r.startswith("sphinx-mathjax-offline==") for r in book)
    assert CONFIG["sphinx"]["config"]["myst_dmath_double_inline"] is True


def test_reference_pages_are_in_the_toc_and_the_glossary_has_the_symbols():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    last = toc["parts"][-1]
    assert last["caption"] == "Reference"
    assert [c["file"] for c in last["chapters"]] == ["book/reported", "book/glossary", "book/bibliography"]
    text = (ROOT / "book" / "glossary.md").read_text()
    terms = set(re.findall(r"^(\S+)\n  ", text, re.M))
    want = {"m", "m'", "d_model", "h", "d_k", "D_K", "tau", "rho", "ell", "lambda", "r", "D_K*", "h*", "d_k*"}
    assert want <= terms
    assert "{bibliography}" in (ROOT / "book" / "bibliography.md").read_text()
    assert "{{ rgr_version }}" in (ROOT / "book" / "intro.md").read_text()


def test_site_data_copies_tables_and_schema(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for name in ("base.csv", "SCHEMA.md", "gpt2_items.npz", "README.md"):
        (data / name).write_text("x")
    out = rgr_site.copy_site_data(data, tmp_path / "html")
    assert sorted(p.name for p in out) == ["SCHEMA.md", "base.csv"]
    assert (tmp_path / "html" / "data" / "base.csv").read_text() == "x"


# --- rgr.chapters.display ----------------------------------------------------------------------------


def _repo(tmp_path: Path) -> Path:
    (tmp_path / "_config.yml").write_text("title: t\n")
    (tmp_path / "rgr").mkdir()
    (tmp_path / "data").mkdir()
    pd.DataFrame({"a": [1, 2, 3]}).to_csv(tmp_path / "data" / "base.csv", index=False)
    pd.DataFrame({"a": ["x,y"]}).to_csv(tmp_path / "data" / "softmax.csv", index=False)
    return tmp_path


def test_download_links(tmp_path):
    root = _repo(tmp_path)
    html = display.download_links(["base", "softmax.csv"], root=root).data
    assert '<a href="../data/base.csv" download>base.csv</a> (3 rows)' in html
    assert '<a href="../data/softmax.csv" download>softmax.csv</a> (1 rows)' in html
    assert html.index("base.csv") < html.index("softmax.csv") and "../data/SCHEMA.md" in html
    assert display.download_links(["base"], root=root).data == display.download_links(["base"], root=root).data


def test_download_links_bad_input(tmp_path):
    root = _repo(tmp_path)
    with pytest.raises(ValueError, match="names: no table called"):
        display.download_links(["nope"], root=root)
    # a known table this checkout lacks (a chapter on smoke data) is named, not linked
    html = display.download_links(["base", "regular"], root=root).data
    assert "regular.csv (not in this checkout)" in html and '<a href="../data/regular.csv"' not in html
    with pytest.raises(ValueError, match="names"):
        display.download_links("base", root=root)
    with pytest.raises(ValueError, match="names"):
        display.download_links([], root=root)


def test_the_repository_tables_are_linkable():
    html = display.download_links(["base", "constructions"]).data
    base, constructions = (html.index(f'<a href="../data/{n}.csv" download>') for n in ("base", "constructions"))
    assert base < constructions
    assert "not in this checkout" not in html


# --- rgr.chapters.style ---------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(1, 13))
def test_panel_grid_fits_the_column(n):
    nrows, ncols, (w, h) = style.panel_grid(n)
    assert nrows * ncols >= n > (nrows - 1) * ncols  # no empty row
    panel_h = 3.0 if n == 1 else 3.0 * (style.MAX_WIDTH_IN / 2) / 3.6  # several: two a row, aspect kept
    assert w <= style.MAX_WIDTH_IN + 1e-9 and h == pytest.approx(nrows * panel_h)
    assert ncols == min(n, 2)


def test_panel_grid_bad_input():
    assert style.panel_grid(3, panel=(10, 3), max_width=2.0)[:2] == (3, 1)  # one wide panel a row, never zero
    for kw, name in (({"n": 0}, "n"), ({"n": 2, "panel": (0, 1)}, "panel"), ({"n": 2, "max_width": 0}, "max_width")):
        with pytest.raises(ValueError, match=name):
            style.panel_grid(**kw)


def test_fig_size_caps_the_width():
    assert style.fig_size(4.0, 3.0) == (4.0, 3.0)
    w, h = style.fig_size(9.6, 4.0)
    assert w == pytest.approx(style.MAX_WIDTH_IN) and h == pytest.approx(4.0 * style.MAX_WIDTH_IN / 9.6)
    with pytest.raises(ValueError, match="width"):
        style.fig_size(0, 1)


def test_png_records_the_smallest_text(tmp_path):
    """The site check reads a figure's smallest text from its PNG (tests/site_check.py, figure_text_px)."""
    import matplotlib.pyplot as plt

    from tests.system.site_check import figure_text_px

    style.set_style()
    fig, ax = plt.subplots(figsize=style.fig_size(4, 3))
    ax.set_title("title", fontsize=12)
    ax.annotate("tiny", (0.5, 0.5), fontsize=7)
    small, w, _ = style.shown_png(fig, 200)  # narrower than the widest shown: at its drawn size
    plt.close(fig)
    assert w < 480
    (tmp_path / "f.png").write_bytes(small)
    assert figure_text_px((tmp_path / "f.png").as_uri()) == pytest.approx(7 * style.FIGURE_DPI / 72, abs=0.05)
    wide, _ = plt.subplots(figsize=(8, 3))  # drawn wider than a figure is shown: shown smaller, text with it
    png, w, h = style.shown_png(wide, 200)
    drawn = (wide.get_tightbbox().width + 0.2) * style.FIGURE_DPI
    assert w == pytest.approx(480) and 8 * style.FIGURE_DPI > drawn > w  # shown at most 480 px wide
    (png_file := tmp_path / "wide.png").write_bytes(png)
    text = figure_text_px(png_file.as_uri())
    ticks = 11 * style.FIGURE_DPI / 72  # its smallest text: the tick labels (set_style: 11 pt)
    assert text == pytest.approx(ticks * w / drawn, rel=0.03)  # shrunk with the figure
    assert style.shown_png(wide, 200)[0] == png  # the same bytes again
    plt.close(wide)
    fig, _ = plt.subplots()
    fig.savefig(tmp_path / "g.png")
    plt.close(fig)
    assert figure_text_px((tmp_path / "g.png").as_uri()) is None  # not recorded: the check warns


def test_set_style_high_dpi_and_readable_fonts():
    import matplotlib as mpl

    style.set_style()
    assert mpl.rcParams["savefig.dpi"] == 2 * mpl.rcParams["figure.dpi"]
    assert mpl.rcParams["legend.fontsize"] >= 10 and mpl.rcParams["xtick.labelsize"] >= 10


def test_install_snippet_is_in_the_book_folder():
    assert (ROOT / "book" / "_install_cell.py").read_text().startswith("# rgr: install cell")
    assert sys.modules.get("rgr") is rgr


def test_reference_labels_are_author_and_year():
    """Issue 30: the book's own entry was labelled "[Thercontributors26]" (pybtex's alpha code)."""
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "book" / "references.bib")).entries
    labels = {k: rgr_site.author_year_label(e) for k, e in entries.items()}
    assert labels["rgr_book"] == "The rgr contributors 2026" and labels["adler2025capacity"] == "Adler 2025"
    assert labels["vaswani2017attention"] == "Vaswani et al. 2017"
    assert ":style: rgr" in (ROOT / "book" / "bibliography.md").read_text()


def test_every_listed_reference_is_cited():
    """The bibliography lists what the book cites (no `:all:`), and every entry of references.bib is cited."""
    from pybtex.database import parse_file

    text = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "book").glob("*.*")
                     if p.suffix in (".md", ".ipynb"))
    assert ":all:" not in (ROOT / "book" / "bibliography.md").read_text()
    uncited = [k for k in parse_file(str(ROOT / "book" / "references.bib")).entries if k not in text]
    assert uncited == []
