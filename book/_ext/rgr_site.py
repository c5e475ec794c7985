"""The book's own Sphinx extension (loaded by _config.yml, ``sphinx.local_extensions``).

- **Buttons from one URL.** ``repository.url`` in _config.yml is the one place that names the public
  repository; when it is set, the repository and issue buttons are switched on here (Jupyter Book
  refuses them without a URL, so they cannot be on in _config.yml while the URL is empty); the launch
  buttons of _config.yml are kept only with a URL, and Colab's only for a repository on GitHub.
- **Version.** ``{{ rgr_version }}`` (MyST substitution) is ``rgr.__version__``, read from the source;
  ``{{ rgr_commit }}`` the commit the site is built from (:func:`short_commit`).
- **Look.** ``book/_static/rgr.css``: readable tables and figures at desktop and phone width.
- **Reference labels.** The bibliography's style ``rgr`` (``:style: rgr`` in book/bibliography.md) labels an
  entry by author and year, "[Adler 2025]", as the chapters cite it (``bibtex_reference_style: author_year``),
  not pybtex's alpha code ("[Thercontributors26]" for a corporate author).
- **Tables to download.** data/*.csv and data/SCHEMA.md are copied to ``_build/html/data/``, where the
  links of :func:`rgr.chapters.downloads.download_links` (``../data/<name>``) point.
- **Source bundle.** ``rgr-book-<version>.zip`` (:func:`source_bundle`: the package, the chapters, data/, the
  tests and the build files, everything a downloaded chapter needs to run) is written at the site's root and
  offered in every page's download menu and on the intro (``{{ rgr_bundle }}``); so is the whole book as one PDF,
  ``rgr-book-<version>.pdf`` (``{{ rgr_pdf }}``), which ``python3 tasks.py pdf`` writes beside the site.
- **Print.** ``book/_static/rgr-print.css`` (media print): the page as a document, for paper and the PDF.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parents[1] / "_static"
# what the site serves from data/: the tables and the description of their columns
SITE_DATA_GLOBS = ("*.csv", "SCHEMA.md")
# what the source bundle holds: enough to install rgr, run any chapter and build or test the book
BUNDLE_PARTS = ("rgr", "book", "data", "tests", "scripts", ".ci", "tasks.py", "pyproject.toml", "environment.yml",
                "README.md", "CITATION.cff", "_config.yml", "_toc.yml", ".gitignore")
BUNDLE_SKIP = {"__pycache__", ".ipynb_checkpoints", "_build", ".venv", ".pytest_cache", ".hypothesis"}


def rgr_version(root: Path = ROOT) -> str:
    """``__version__`` of rgr/__init__.py, read without importing the package."""
    text = (root / "rgr" / "__init__.py").read_text(encoding="utf-8")
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', text, re.M)
    if not m:
        raise ValueError("rgr/__init__.py defines no __version__")
    return m.group(1)


def pdf_name(root: Path = ROOT) -> str:
    """``rgr-book-<version>.pdf``: the whole book as one PDF, put at the site's root by ``python3 tasks.py pdf``."""
    return f"rgr-book-{rgr_version(root)}.pdf"


def bundle_name(root: Path = ROOT) -> str:
    """``rgr-book-<version>.zip`` (tasks.py's bundle_name says the same, for the install cell)."""
    return f"rgr-book-{rgr_version(root)}.zip"


def _bundle_files(root: Path) -> list[Path]:
    out = []
    for part in BUNDLE_PARTS:
        p = root / part
        found = [p] if p.is_file() else sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else []
        out += [f for f in found if not BUNDLE_SKIP & set(f.relative_to(root).parts)
                and not f.name.endswith((".lock", ".damaged", ".pyc")) and f.name != ".DS_Store"]
    return out


def _commit(root: Path) -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *BUNDLE_PARTS], cwd=root, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not built from a git checkout)"
    return head.stdout.strip() + (" with uncommitted changes" if dirty else "")


def short_commit(root: Path = ROOT) -> str:
    """The commit the site is built from, as the intro and the citation name it: its first 12 hex digits, with
    "+ uncommitted changes" where the book's files differ from it (or why there is none)."""
    full = _commit(root)
    if not re.match(r"[0-9a-f]{40}", full):
        return full
    return full[:12] + (" + uncommitted changes" if full.endswith("changes") else "")


def source_bundle(root: Path, out: Path) -> Path:
    """Write ``out/rgr-book-<version>.zip``: :data:`BUNDLE_PARTS` of ``root`` under one folder
    ``rgr-book-<version>/``, with BUNDLE.txt naming the version and the commit; the same tree gives the same bytes."""
    name = bundle_name(root)
    top = name.removesuffix(".zip")
    out.mkdir(parents=True, exist_ok=True)
    note = (f"{top}: the rgr package, the book's chapters and data/ (rgr {rgr_version(root)}, "
            f"commit {_commit(root)}).\n"
            "Run a chapter: pip install -e . in this folder, then open book/<chapter>.ipynb (Jupyter's working folder\n"
            "book/). Build the book: python3 tasks.py book; run the tests: python3 tasks.py test (README.md).\n")
    tmp = out / (name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo(f"{top}/BUNDLE.txt", (1980, 1, 1, 0, 0, 0)), note)
        for f in _bundle_files(root):
            info = zipfile.ZipInfo(f"{top}/{f.relative_to(root).as_posix()}", (1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if f.stat().st_mode & 0o111 else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, f.read_bytes())
    tmp.replace(out / name)
    return out / name


def _bundle_link(app, pagename, templatename, context, doctree) -> None:
    """A "source bundle (.zip)" entry in the page's download menu (sphinx-book-theme's header buttons)."""
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append({"type": "link", "url": context["pathto"](bundle_name(), 1), "text": ".zip",
                                     "icon": "fas fa-file-archive", "label": "download-bundle-button",
                                     "tooltip": "The package, the chapters and data/ (source bundle)"})
            group["buttons"].append({"type": "link", "url": context["pathto"](pdf_name(), 1), "text": "book .pdf",
                                     "icon": "fas fa-file-pdf", "label": "download-book-pdf-button",
                                     "tooltip": "The whole book as one PDF (python3 tasks.py pdf)"})


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
    bundle = bundle_name()
    config.myst_substitutions = {**(config.myst_substitutions or {}), "rgr_version": rgr_version(),
                                 "rgr_commit": short_commit(),
                                 "rgr_bundle": f'<a href="../{bundle}" download>{bundle}</a>',
                                 "rgr_pdf": f'<a href="../{pdf_name()}">{pdf_name()}</a>'}
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
        source_bundle(ROOT, Path(app.outdir))


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
    app.connect("html-page-context", _bundle_link, priority=502)
    app.add_css_file("rgr.css")
    app.add_css_file("screens.css")  # after rgr.css: tables in the column, figures on a phone, captions
    app.add_css_file("rgr-print.css", media="print")
    app.add_js_file("rgr-tables.js")  # outcome columns in view and a note on tables that scroll, on a phone
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": rgr_version()}
