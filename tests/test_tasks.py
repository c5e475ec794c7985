"""tasks.py: the tagging script (install cell + `hide-input`) and fresh pages (issue 20)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
tasks = importlib.util.module_from_spec(_spec)
sys.modules["tasks"] = tasks
_spec.loader.exec_module(tasks)


def _nb(*cells, reads=None) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    if reads is not None:
        nb.metadata["rgr"] = {"reads": reads}
    for kind, src, *tags in cells:
        c = nbformat.v4.new_markdown_cell(src) if kind == "md" else nbformat.v4.new_code_cell(src)
        if tags:
            c.metadata["tags"] = list(tags[0])
        nb.cells.append(c)
    return nb


def _write(nb, path: Path) -> Path:
    nbformat.write(nb, path)
    return path


# --- tag ---------------------------------------------------------------------------------------------


def test_tag_inserts_install_cell_first_and_folds_code_idempotently(tmp_path):
    p = _write(_nb(("md", "# Title"), ("code", "import rgr"), ("code", "preset = 'book'", ["parameters"]),
                   ("code", "x = 1", ["remove-input"])), tmp_path / "ch.ipynb")
    src = tasks.install_cell_source("https://github.com/o/r")
    nb = tasks.read_nb(p)
    assert tasks.tag_notebook(nb, src) is True
    tasks.write_nb(nb, p)
    once = p.read_text()
    nbformat.validate(nbformat.read(p, as_version=4))
    cells = nbformat.read(p, as_version=4).cells
    assert [c.cell_type for c in cells] == ["markdown", "code", "code", "code", "code"]
    assert cells[1].source.startswith(tasks.INSTALL_MARKER) and cells[1].metadata.tags == ["remove-cell"]
    assert 'REPO = "https://github.com/o/r"' in cells[1].source
    assert cells[2].metadata.tags == ["hide-input"]
    assert cells[3].metadata.tags == ["parameters", "hide-input"]  # parameters kept
    assert cells[4].metadata.tags == ["remove-input"]  # already removed: not folded too
    nb = tasks.read_nb(p)
    assert tasks.tag_notebook(nb, src) is False  # idempotent
    tasks.write_nb(nb, p)
    assert p.read_text() == once


def test_tag_replaces_an_outdated_install_cell_in_place(tmp_path):
    nb = tasks.read_nb(_write(_nb(("code", "import rgr")), tmp_path / "ch.ipynb"))
    tasks.tag_notebook(nb, tasks.install_cell_source(""))
    assert tasks.tag_notebook(nb, tasks.install_cell_source("https://github.com/o/r")) is True
    installs = [c for c in nb["cells"] if tasks.cell_source(c).startswith(tasks.INSTALL_MARKER)]
    assert len(installs) == 1 and "github.com/o/r" in tasks.cell_source(installs[0])
    assert nb["cells"][0] is installs[0]


def test_install_cell_is_short_valid_python_and_inert_in_a_checkout():
    src = tasks.install_cell_source("https://github.com/o/r")
    assert len(src.splitlines()) <= 15  # BOOK_STYLE: no code cell over 15 lines
    exec(compile(src, "install-cell", "exec"), {})  # rgr imports here: nothing to do, no clone
    with pytest.raises(ImportError, match="checkout"):  # outside a checkout, with no URL configured
        no_url = tasks.install_cell_source("")
        exec(compile(no_url.replace("import rgr  #", "import rgr_missing_module  #"), "c", "exec"), {})


def test_repository_url_is_read_from_the_config(tmp_path):
    (tmp_path / "_config.yml").write_text('title: x\nrepository:\n  url: "https://github.com/o/r"  # c\n  branch: main\n')
    assert tasks.repository_url(tmp_path) == "https://github.com/o/r"
    (tmp_path / "_config.yml").write_text('repository:\n  url: ""\n')
    assert tasks.repository_url(tmp_path) == ""
    assert tasks.repository_url(ROOT) == ""  # unpublished: no buttons, the install cell explains


# --- fresh pages -------------------------------------------------------------------------------------


@pytest.fixture
def book(tmp_path):
    """A miniature repository: rgr/, data/ with two tables, two chapters reading one each."""
    (tmp_path / "rgr").mkdir()
    (tmp_path / "rgr" / "__init__.py").write_text("__version__ = '0'\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "base.csv").write_text("a\n1\n")
    (tmp_path / "data" / "softmax.csv").write_text("a\n2\n")
    (tmp_path / "data" / "gpt2.csv").write_text("a\n3\n")
    (tmp_path / "data" / "gpt2_items.npz").write_bytes(b"x")
    (tmp_path / "data" / "SCHEMA.md").write_text("# s\n")
    (tmp_path / "book").mkdir()
    _write(_nb(("code", "d = load_experiment('base')")), tmp_path / "book" / "a.ipynb")
    _write(_nb(("code", 'd = load_experiment("softmax")')), tmp_path / "book" / "b.ipynb")
    _write(_nb(("code", "x = 1")), tmp_path / "book" / "c.ipynb")
    return tmp_path


def test_data_reads_finds_named_tables_and_companions(book):
    reads = lambda name: [p.name for p in tasks.data_reads(tasks.read_nb(book / "book" / name), book / "data")]  # noqa: E731
    assert reads("a.ipynb") == ["base.csv"]
    assert reads("c.ipynb") == []
    _write(_nb(("code", "load_experiment('gpt2')")), book / "book" / "d.ipynb")
    assert reads("d.ipynb") == ["gpt2.csv", "gpt2_items.npz"]
    _write(_nb(("code", "x = 1"), reads=["softmax.csv"]), book / "book" / "e.ipynb")
    assert reads("e.ipynb") == ["softmax.csv"]
    _write(_nb(("code", "x = 1"), reads=["nope.csv"]), book / "book" / "f.ipynb")
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        reads("f.ipynb")


def test_changing_a_table_changes_only_its_chapters_inputs(book):
    before = {n: tasks.chapter_inputs(book / "book" / n, book) for n in ("a.ipynb", "b.ipynb", "c.ipynb")}
    (book / "data" / "base.csv").write_text("a\n1\n5\n")  # a sweep added a row
    after = {n: tasks.chapter_inputs(book / "book" / n, book) for n in before}
    assert after["a.ipynb"] != before["a.ipynb"]
    assert after["b.ipynb"] == before["b.ipynb"] and after["c.ipynb"] == before["c.ipynb"]
    (book / "rgr" / "__init__.py").write_text("__version__ = '1'\n")  # the package changed: every chapter
    again = {n: tasks.chapter_inputs(book / "book" / n, book) for n in before}
    assert all(again[n] != after[n] for n in before)


def _cache_executed(cache, path: Path) -> None:
    from jupyter_cache.base import CacheBundleIn

    nb = nbformat.read(path, as_version=4)
    for c in nb.cells:
        if c.cell_type == "code":
            c.outputs = [nbformat.v4.new_output("stream", name="stdout", text="old figure\n")]
    cache.cache_notebook_bundle(CacheBundleIn(nb, str(path)), check_validity=False, overwrite=True)


def test_changing_a_table_invalidates_its_chapter_in_the_jupyter_cache(book):
    from jupyter_cache import get_cache

    cache_dir = book / "_build" / ".jupyter_cache"
    cache = get_cache(str(cache_dir))
    nbs = [book / "book" / n for n in ("a.ipynb", "b.ipynb", "c.ipynb")]
    for p in nbs:
        _cache_executed(cache, p)
    # records nobody stamped (made outside tasks.py book) are not trusted
    assert tasks.invalidate_stale(nbs, book, cache_dir) == nbs
    for p in nbs:
        _cache_executed(cache, p)
    tasks.stamp_cached(nbs, book, cache_dir)
    assert tasks.invalidate_stale(nbs, book, cache_dir) == []  # nothing changed: every page is reused
    (book / "data" / "base.csv").write_text("a\n1\n5\n")
    assert tasks.invalidate_stale(nbs, book, cache_dir) == [nbs[0]]  # only the chapter reading base.csv
    with pytest.raises(KeyError):
        cache.match_cache_notebook(nbformat.read(nbs[0], as_version=4))
    assert cache.match_cache_notebook(nbformat.read(nbs[1], as_version=4))  # b's page stays cached
    stamps = json.loads((cache_dir / tasks.STAMPS).read_text())
    assert str(nbs[1].resolve()) in stamps


def test_the_book_command_invalidates_before_and_stamps_after_building():
    src = (ROOT / "tasks.py").read_text()
    body = src[src.index("def book()"):src.index("def test(")]
    assert body.index('"_invalidate"') < body.index('"jupyter-book"') < body.index('"_stamp"')


def test_chapters_lists_the_book(tmp_path):
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("*.ipynb", "_*"))
    assert tasks.chapters(tmp_path) == []
    assert {p.name for p in tasks.chapters(ROOT)} >= {"theory.ipynb", "constructions.ipynb"}


def test_no_chapter_code_cell_is_over_15_lines():
    # BOOK_STYLE: a chapter cell teaches one step; what it computes lives in a tested rgr function
    long = [(p.name, i, len(tasks.cell_source(c).splitlines()))
            for p in sorted((ROOT / "book").glob("*.ipynb"))
            for i, c in enumerate(tasks.read_nb(p)["cells"])
            if c["cell_type"] == "code" and len(tasks.cell_source(c).splitlines()) > 15]
    assert long == []
