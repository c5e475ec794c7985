"""The source bundle the site offers (book/_ext/rgr_site.py: rgr-book-<version>.zip, issue 30)."""

from __future__ import annotations

import importlib.util
import zipfile
from pathlib import Path

from tests import ROOT

_spec = importlib.util.spec_from_file_location("rgr_site", ROOT / "book" / "_ext" / "rgr_site.py")
rgr_site = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rgr_site)


def _tree(root: Path) -> Path:
    for rel, text in {"rgr/__init__.py": "__version__ = '9.8.7'\n", "rgr/x.py": "X = 1\n", "book/a.ipynb": "{}\n",
                      "book/_static/rgr.css": "p {}\n", "data/base.csv": "a\n1\n", "data/SCHEMA.md": "# s\n",
                      "tasks.py": "print()\n", "pyproject.toml": "[project]\n",
                      # never in a bundle: caches, builds, table locks, a damaged tail, files outside its parts
                      "rgr/__pycache__/x.cpython-311.pyc": "", "data/.base.csv.sweep.lock": "",
                      "data/base.csv.damaged": "", "_build/html/index.html": "", "notes.txt": "private\n"}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_bundle_holds_the_package_chapters_and_data_under_one_versioned_folder(tmp_path):
    root = _tree(tmp_path / "repo")
    path = rgr_site.source_bundle(root, tmp_path / "site")
    assert path.name == "rgr-book-9.8.7.zip" == rgr_site.bundle_name(root)
    with zipfile.ZipFile(path) as z:
        names = sorted(z.namelist())
        note = z.read("rgr-book-9.8.7/BUNDLE.txt").decode()
        assert z.read("rgr-book-9.8.7/data/base.csv") == b"a\n1\n"
    assert names == sorted(f"rgr-book-9.8.7/{n}" for n in (
        "BUNDLE.txt", "rgr/__init__.py", "rgr/x.py", "book/a.ipynb", "book/_static/rgr.css", "data/base.csv",
        "data/SCHEMA.md", "tasks.py", "pyproject.toml"))
    assert "rgr 9.8.7" in note and "pip install -e ." in note and "not built from a git checkout" in note


def test_the_same_tree_gives_the_same_bytes(tmp_path):
    root = _tree(tmp_path / "repo")
    first = rgr_site.source_bundle(root, tmp_path / "one").read_bytes()
    assert rgr_site.source_bundle(root, tmp_path / "two").read_bytes() == first
    (root / "data" / "base.csv").write_text("a\n1\n2\n")
    assert rgr_site.source_bundle(root, tmp_path / "three").read_bytes() != first


def test_the_repository_bundle_names_its_commit_and_holds_every_chapter(tmp_path):
    path = rgr_site.source_bundle(ROOT, tmp_path)
    top = path.name.removesuffix(".zip")
    with zipfile.ZipFile(path) as z:
        names = set(z.namelist())
        note = z.read(f"{top}/BUNDLE.txt").decode()
    chapters = {f"{top}/book/{p.name}" for p in (ROOT / "book").glob("*.ipynb")}
    assert chapters and chapters <= names
    assert f"{top}/data/base.csv" in names and f"{top}/rgr/catalog.py" in names and f"{top}/tasks.py" in names
    assert "commit " in note
    assert path.stat().st_size < 40e6  # small enough to offer on the site


def test_every_page_s_download_menu_offers_the_bundle():
    menu = {"label": "download-buttons", "buttons": [{"label": "download-source-button"}]}
    context = {"header_buttons": [{"label": "fullscreen"}, menu], "pathto": lambda name, resource: f"../{name}"}
    rgr_site._bundle_link(None, "book/softmax", "page.html", context, None)
    bundle, pdf = menu["buttons"][-2:]
    assert bundle["url"] == f"../{rgr_site.bundle_name()}" and bundle["text"] == ".zip"
    assert pdf["url"] == f"../{rgr_site.pdf_name()}" and pdf["url"].endswith(".pdf")  # and the whole book as a PDF
    intro = (ROOT / "book" / "intro.md").read_text()
    assert "{{ rgr_bundle }}" in intro and "{{ rgr_pdf }}" in intro  # and the intro links both
