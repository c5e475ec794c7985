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
- **Tables to download.** data/*.csv and data/SCHEMA.md (those git tracks, regular files only) are copied to
  ``_build/html/data/``, where the links of :func:`rgr.chapters.display.download_links` (``../data/<name>``)
  point.
- **Source bundle.** ``rgr-book-<version>.zip`` (:func:`source_bundle`: the package, the chapters, data/, the
  tests and the build files, everything a downloaded chapter needs to run, as git tracks them at the commit it
  names: never an untracked or ignored file nor a link's target) is written at the site's root and
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


def _git(root: Path, *args: str) -> bytes | None:
    """``git args`` in ``root``'s checkout; None where ``root`` is no git checkout (or git is missing)."""
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _is_checkout(root: Path) -> bool:
    """Whether ``root`` is the top of a git checkout with a commit (not a folder inside another repository)."""
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top.decode().strip()).resolve() == root.resolve() \
        and _git(root, "rev-parse", "--verify", "-q", "HEAD") is not None


def _skipped(rel: str) -> bool:
    parts = rel.split("/")
    return bool(BUNDLE_SKIP & set(parts)) or parts[-1].endswith((".lock", ".damaged", ".pyc", ".tmp")) \
        or parts[-1] == ".DS_Store"


def _committed_files(root: Path) -> list[tuple[str, int, bytes]] | None:
    """(path, mode, bytes) of every file of :data:`BUNDLE_PARTS` in the tree of ``root``'s HEAD commit, as git
    stores it (not the working tree: no untracked or ignored file, no uncommitted change); symbolic links and
    submodules are left out, never followed. None where ``root`` is no git checkout."""
    if not _is_checkout(root):
        return None
    tree = _git(root, "ls-tree", "-r", "-z", "HEAD", "--", *BUNDLE_PARTS) or b""
    entries = []
    for line in filter(None, tree.split(b"\0")):
        meta, path = line.split(b"\t", 1)
        mode, kind, sha = meta.split()
        if kind == b"blob" and mode in (b"100644", b"100755") and not _skipped(path.decode()):
            entries.append((path.decode(), int(mode, 8), sha.decode()))
    blobs = _git_blobs(root, [sha for _, _, sha in entries])
    return [(path, mode, blobs[sha]) for path, mode, sha in entries]


def _git_blobs(root: Path, shas: list[str]) -> dict[str, bytes]:
    """The contents of git blobs by their ids (one ``git cat-file --batch``)."""
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=root, input="".join(f"{s}\n" for s in shas).encode(),
                         capture_output=True, check=True).stdout
    blobs, at = {}, 0
    while at < len(out):
        end = out.index(b"\n", at)
        sha, _, size = out[at:end].split()
        blobs[sha.decode()] = out[end + 1 : end + 1 + int(size)]
        at = end + 1 + int(size) + 1
    return blobs


def _tree_files(root: Path) -> list[tuple[str, int, bytes]]:
    """Outside a git checkout (an unpacked bundle): the regular files of :data:`BUNDLE_PARTS`, never a symbolic
    link nor a hidden file (a local ``.env``), without caches, locks, temporary files and unmerged shards."""
    out = []
    for part in BUNDLE_PARTS:
        p = root / part
        found = [p] if p.is_file() else sorted(p.rglob("*")) if p.is_dir() else []
        for f in found:
            rel = f.relative_to(root).as_posix()
            hidden = any(x.startswith(".") and x not in (".gitignore", ".ci") for x in rel.split("/"))
            if f.is_symlink() or not f.is_file() or hidden or _skipped(rel) or _SHARD.search(f.name):
                continue
            out.append((rel, f.stat().st_mode, f.read_bytes()))
    return out


_SHARD = re.compile(r"\.shard-\d+-of-\d+\.csv$")


def _commit(root: Path) -> str:
    """HEAD's commit and, where the working tree differs from it in :data:`BUNDLE_PARTS`, that the bundle leaves
    those changes out; or that there is no git checkout."""
    head = _git(root, "rev-parse", "HEAD") if _is_checkout(root) else None
    if head is None:
        return "unknown (not built from a git checkout)"
    changed = (_git(root, "status", "--porcelain", "--", *BUNDLE_PARTS) or b"").decode().splitlines()
    if not changed:
        return head.decode().strip()
    return (f"{head.decode().strip()}; this bundle holds that commit's files only, not the {len(changed)} "
            "uncommitted change(s) of the folder it was built in")


def short_commit(root: Path = ROOT) -> str:
    """The commit the site is built from, as the intro and the citation name it: its first 12 hex digits, with
    "+ uncommitted changes" where the book's files differ from it (or why there is none)."""
    full = _commit(root)
    if not re.match(r"[0-9a-f]{40}", full):
        return full
    return full[:12] + (" + uncommitted changes" if ";" in full else "")


def source_bundle(root: Path, out: Path) -> Path:
    """Write ``out/rgr-book-<version>.zip``: the files of :data:`BUNDLE_PARTS` that git tracks at ``root``'s HEAD
    commit, as committed, under one folder ``rgr-book-<version>/``, with BUNDLE.txt naming the version and the
    commit. Never an untracked or ignored file (fetched peer tables, a local ``.env``), nor a symbolic link's
    target. Outside a git checkout, the regular files of those parts. The same commit gives the same bytes."""
    name = bundle_name(root)
    top = name.removesuffix(".zip")
    out.mkdir(parents=True, exist_ok=True)
    note = (f"{top}: the rgr package, the book's chapters and data/ (rgr {rgr_version(root)}, "
            f"commit {_commit(root)}).\n"
            "Run a chapter: pip install -e . in this folder, then open book/<chapter>.ipynb (Jupyter's working folder\n"
            "book/). Build the book: python3 tasks.py book; run the tests: python3 tasks.py test (README.md).\n")
    files = _committed_files(root)
    files = _tree_files(root) if files is None else files
    tmp = out / (name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(zipfile.ZipInfo(f"{top}/BUNDLE.txt", (1980, 1, 1, 0, 0, 0)), note)
        for rel, mode, data in files:
            info = zipfile.ZipInfo(f"{top}/{rel}", (1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if mode & 0o111 else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
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
    """Copy the downloadable files of ``data`` into ``outdir/data``; returns the copies.

    Only regular files (never a symbolic link's target) and, in a git checkout, only the files git tracks: no
    fetched or untracked table, unmerged shard or temporary file of a sweep is served."""
    dest = outdir / "data"
    dest.mkdir(parents=True, exist_ok=True)
    in_git = data.is_dir() and _is_checkout(data.parent)
    listed = _git(data, "ls-files", "-z", "--", *SITE_DATA_GLOBS) if in_git else None
    tracked = None if listed is None else {n for n in listed.decode().split("\0") if n and "/" not in n}
    out = []
    for pattern in SITE_DATA_GLOBS:
        for src in sorted(data.glob(pattern)):
            if src.is_symlink() or not src.is_file() or src.name.startswith(".") or _SHARD.search(src.name) \
                    or (tracked is not None and src.name not in tracked):
                continue
            shutil.copyfile(src, dest / src.name)
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
