"""The source bundle the site offers (book/_ext/rgr_site.py: rgr-book-<version>.zip, issue 30)."""

from __future__ import annotations

import importlib.util
import subprocess
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


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                   capture_output=True)


def _checkout(tmp_path: Path) -> Path:
    """A git checkout whose HEAD tracks the tree of :func:`_tree`, with what must never be published beside it:
    an untracked secret, git-ignored peer tables, symbolic links (tracked and not), temporary files and an
    unmerged shard."""
    root = _tree(tmp_path / "repo")
    (root / ".gitignore").write_text("__pycache__/\n_build/\n*.tmp\ndata/.*.lock\ndata/*.damaged\n")
    (root / "data" / "peers").mkdir()
    (root / "data" / "peers" / ".gitignore").write_text("*.csv\n")
    (root / "scripts").mkdir()
    (root / "scripts" / "fetch.py").write_text("print()\n")
    secret = tmp_path / "outside.txt"
    secret.write_text("HOST-SECRET\n")
    (root / "data" / "tracked_link.csv").symlink_to(secret)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "tree")
    (root / "data" / "peers" / "Data_exp_1_3.csv").write_text("unlicensed\n")  # ignored
    (root / "scripts" / ".env").write_text("HF_TOKEN=hf_secret\n")  # untracked
    (root / "rgr" / "notes_private.txt").write_text("private\n")
    (root / "data" / "zz_link.csv").symlink_to(secret)  # untracked link
    (root / "data" / ".base.csv.123.tmp").write_text("half\n")
    (root / "data" / ".value.csv.seal.77.tmp").write_text("half\n")
    (root / "data" / "base.shard-0-of-2.csv").write_text("a\n9\n")
    (root / "data" / "base.csv").write_text("a\n1\nuncommitted\n")  # a change the bundle does not hold
    return root


def test_the_bundle_holds_only_what_git_tracks_at_its_commit(tmp_path):
    """Issue 44, case 1: never an ignored or untracked file, nor a symbolic link's target."""
    root = _checkout(tmp_path)
    path = rgr_site.source_bundle(root, tmp_path / "site")
    with zipfile.ZipFile(path) as z:
        names = sorted(n.removeprefix("rgr-book-9.8.7/") for n in z.namelist())
        body = b"".join(z.read(n) for n in z.namelist())
        note = z.read("rgr-book-9.8.7/BUNDLE.txt").decode()
        base = z.read("rgr-book-9.8.7/data/base.csv")
    assert names == sorted(["BUNDLE.txt", ".gitignore", "rgr/__init__.py", "rgr/x.py", "book/a.ipynb",
                            "book/_static/rgr.css", "data/base.csv", "data/SCHEMA.md", "data/peers/.gitignore",
                            "scripts/fetch.py", "tasks.py", "pyproject.toml"])
    assert b"HOST-SECRET" not in body and b"hf_secret" not in body and b"unlicensed" not in body
    assert base == b"a\n1\n"  # as committed
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
    assert f"commit {head}; this bundle holds that commit's files only" in note


def test_the_site_serves_only_tracked_regular_tables(tmp_path):
    root = _checkout(tmp_path)
    out = rgr_site.copy_site_data(root / "data", tmp_path / "html")
    assert sorted(p.name for p in out) == ["SCHEMA.md", "base.csv"]
    assert not any(p.is_symlink() for p in out)


def test_outside_git_the_bundle_still_leaves_out_links_hidden_and_temporary_files(tmp_path):
    root = _tree(tmp_path / "repo")
    (root / "scripts").mkdir()
    (root / "scripts" / ".env").write_text("HF_TOKEN=hf_secret\n")
    (tmp_path / "outside.txt").write_text("HOST-SECRET\n")
    (root / "data" / "zz_link.csv").symlink_to(tmp_path / "outside.txt")
    (root / "data" / ".base.csv.1.tmp").write_text("half\n")
    (root / "data" / "base.shard-0-of-2.csv").write_text("a\n9\n")
    with zipfile.ZipFile(rgr_site.source_bundle(root, tmp_path / "site")) as z:
        names = {n.removeprefix("rgr-book-9.8.7/") for n in z.namelist()}
    assert not {"scripts/.env", "data/zz_link.csv", "data/.base.csv.1.tmp", "data/base.shard-0-of-2.csv"} & names
    out = rgr_site.copy_site_data(root / "data", tmp_path / "html")
    assert sorted(p.name for p in out) == ["SCHEMA.md", "base.csv"]
