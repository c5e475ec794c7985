"""The book's own Sphinx extension (loaded by _config.yml, ``sphinx.local_extensions``).

- **Buttons from one URL.** ``repository.url`` in _config.yml is the one place that names the public
  repository; when it is set, the repository and issue buttons are switched on here (Jupyter Book
  refuses them without a URL, so they cannot be on in _config.yml while the URL is empty); the launch
  buttons of _config.yml are kept only with a URL, and Colab's only for a repository on GitHub.
- **Version.** ``{{ rgr_version }}`` (MyST substitution) is ``rgr.__version__``, read from the source.
- **Look.** ``book/_static/rgr.css``: readable tables and figures at desktop and phone width.
- **Reference labels.** The bibliography's style ``rgr`` (``:style: rgr`` in book/bibliography.md) labels an
  entry by author and year, "[Adler 2025]", as the chapters cite it (``bibtex_reference_style: author_year``),
  not pybtex's alpha code ("[Thercontributors26]" for a corporate author).
- **Tables to download.** data/*.csv and data/SCHEMA.md are copied to ``_build/html/data/``, where the
  links of :func:`rgr.chapters.downloads.download_links` (``../data/<name>``) point.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parents[1] / "_static"
# what the site serves from data/: the tables and the description of their columns
SITE_DATA_GLOBS = ("*.csv", "SCHEMA.md")


def rgr_version(root: Path = ROOT) -> str:
    """``__version__`` of rgr/__init__.py, read without importing the package."""
    text = (root / "rgr" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not m:
        raise ValueError("rgr/__init__.py defines no __version__")
    return m.group(1)


def _buttons(app, config) -> None:
    theme = config.html_theme_options
    url = (theme.get("repository_url") or "").strip()
    launch = dict(theme.get("launch_buttons") or {})
    if url:
        theme["use_repository_button"] = True
        theme["use_issues_button"] = True
        if "github.com" not in url:
            launch.pop("colab_url", None)
    else:  # the theme's launch buttons need a repository (it fails on an empty URL)
        launch = {k: v for k, v in launch.items() if not k.endswith("_url")}
    theme["launch_buttons"] = launch


def _config_inited(app, config) -> None:
    _buttons(app, config)
    config.myst_substitutions = {**(config.myst_substitutions or {}), "rgr_version": rgr_version()}
    config.html_static_path = [*config.html_static_path, str(STATIC)]


def copy_site_data(data: Path, outdir: Path) -> list[Path]:
    """Copy the downloadable files of ``data`` into ``outdir/data``; returns the copies."""
    dest = outdir / "data"
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for pattern in SITE_DATA_GLOBS:
        for src in sorted(data.glob(pattern)):
            shutil.copy2(src, dest / src.name)
            out.append(dest / src.name)
    return out


def _build_finished(app, exc) -> None:
    if exc is None and app.builder.format == "html":
        copy_site_data(ROOT / "data", Path(app.outdir))


def _register_bib_style() -> None:
    """pybtex plugins: labels "Surname Year" ("A and B Year", "A et al. Year"), the unsrt formatting."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            for entry in sorted_entries:
                yield author_year_label(entry)

    class RgrStyle(UnsrtStyle):
        default_label_style = "rgr_author_year"
        default_sorting_style = "author_year_title"

    register_plugin("pybtex.style.labels", "rgr_author_year", AuthorYearLabels, force=True)
    register_plugin("pybtex.style.formatting", "rgr", RgrStyle, force=True)


def author_year_label(entry) -> str:
    """"Adler 2025", "Cordonnier and others 2020" -> "Cordonnier et al. 2020"; braces of a corporate author
    ("{The rgr contributors}") dropped."""
    people = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
    who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2
           else f"{names[0]} et al.") if names else entry.key
    return f"{who} {entry.fields.get('year', '')}".strip()


def setup(app):
    _register_bib_style()
    app.connect("config-inited", _config_inited)
    app.connect("build-finished", _build_finished)
    app.add_css_file("rgr.css")
    app.add_css_file("screens.css")  # after rgr.css: tables in the column, figures on a phone, captions
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": rgr_version()}
