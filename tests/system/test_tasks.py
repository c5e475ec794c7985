"""tasks.py: the tagging script (install cell + `hide-input`) and fresh pages (issue 20)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from tests import ROOT

_spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
tasks = importlib.util.module_from_spec(_spec)
sys.modules["tasks"] = tasks
_spec.loader.exec_module(tasks)
_site_spec = importlib.util.spec_from_file_location("rgr_site", ROOT / "book" / "_ext" / "rgr_site.py")
rgr_site = importlib.util.module_from_spec(_site_spec)
_site_spec.loader.exec_module(rgr_site)


def _nb(*cells) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
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


def test_tag_strips_execution_timestamps_and_keeps_every_other_cell_metadatum(tmp_path):
    """A chapter's diff shows its outputs, not when each cell ran (issue 49): nbclient's per-cell ``execution``
    timestamps go; tags and any other metadata stay."""
    nb = tasks.read_nb(_write(_nb(("code", "x = 1", ["parameters"])), tmp_path / "ch.ipynb"))
    cell = nb["cells"][-1]
    cell["metadata"].update(execution={"iopub.status.busy": "2026-11-27T20:44:32Z"}, scrolled=True)
    assert tasks.tag_notebook(nb, tasks.install_cell_source("")) is True
    assert "execution" not in cell["metadata"]
    assert cell["metadata"]["scrolled"] is True and cell["metadata"]["tags"] == ["parameters", "hide-input"]


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
    # outside a checkout, with no URL configured: the way to the source bundle the site offers
    with pytest.raises(ImportError, match=r"source bundle rgr-book-\d[\w.]*\.zip .*pip install -e \."):
        no_url = tasks.install_cell_source("")
        exec(compile(no_url.replace("import rgr  #", "import rgr_missing_module  #"), "c", "exec"), {})
    assert tasks.bundle_name() == rgr_site.bundle_name()  # the name the site writes


def test_repository_url_is_read_from_the_config(tmp_path):
    (tmp_path / "_config.yml").write_text('title: x\nrepository:\n  url: "https://github.com/o/r"  # c\n'
                                          '  branch: main\n')
    assert tasks.repository_url(tmp_path) == "https://github.com/o/r"
    (tmp_path / "_config.yml").write_text('repository:\n  url: ""\n')
    assert tasks.repository_url(tmp_path) == ""
    assert tasks.repository_url(ROOT) == ""  # unpublished: no buttons, the install cell explains


# --- fresh pages: the committed outputs are the cache ----------------------------------------------------------


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A miniature repository: a package rgr whose loader opens data/<name>.csv, two tables, and chapters that read
    base (a), softmax (b), nothing (c), or only import rgr.extra (d). Their kernels import this rgr (PYTHONPATH)."""
    (tmp_path / "rgr").mkdir()
    (tmp_path / "rgr" / "__init__.py").write_text("__version__ = '0'\n")
    (tmp_path / "rgr" / "loader.py").write_text(
        "from pathlib import Path\n\n\ndef load(name):\n"
        "    return (Path(__file__).parents[1] / 'data' / f'{name}.csv').read_text().split()\n")
    (tmp_path / "rgr" / "extra.py").write_text("X = 1\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "base.csv").write_text("a\n1\n")
    (tmp_path / "data" / "softmax.csv").write_text("a\n2\n")
    (tmp_path / "book").mkdir()
    _write(_nb(("code", "from rgr.loader import load\nprint(load('base'))")), tmp_path / "book" / "a.ipynb")
    _write(_nb(("code", "from rgr.loader import load\nprint(load('softmax'))")), tmp_path / "book" / "b.ipynb")
    _write(_nb(("code", "print(6 * 7)")), tmp_path / "book" / "c.ipynb")
    _write(_nb(("code", "from rgr.extra import X\nX")), tmp_path / "book" / "d.ipynb")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path


def _chapters(root: Path) -> list[Path]:
    return sorted((root / "book").glob("*.ipynb"))


def _executed(root: Path) -> list[str]:
    """Stamp every chapter of ``root`` (as `tasks.py execute` does); returns the names refresh re-executes next."""
    return [p.name for p in tasks.refresh(_chapters(root), root)]


def test_a_changed_table_re_executes_exactly_the_chapters_that_read_it(book):
    assert _executed(book) == ["a.ipynb", "b.ipynb", "c.ipynb", "d.ipynb"]  # never stamped: all execute once
    assert _executed(book) == []  # an unchanged tree executes none
    (book / "data" / "base.csv").write_text("a\n1\n5\n")  # a sweep added a row
    assert tasks.stale_chapters(_chapters(book), book) == {book / "book" / "a.ipynb": "inputs changed"}
    assert _executed(book) == ["a.ipynb"]
    out = nbformat.read(book / "book" / "a.ipynb", as_version=4).cells[0].outputs[0].text
    assert "'5'" in out  # re-executed on the new rows
    assert _executed(book) == []  # and stamped again


def test_an_rgr_module_re_executes_only_the_chapters_that_imported_it(book):
    _executed(book)
    (book / "rgr" / "extra.py").write_text("X = 2\n")
    assert _executed(book) == ["d.ipynb"]
    (book / "rgr" / "loader.py").write_text((book / "rgr" / "loader.py").read_text() + "# edited\n")
    assert _executed(book) == ["a.ipynb", "b.ipynb"]
    (book / "rgr" / "__init__.py").write_text("__version__ = '1'\n")  # every importer of rgr
    assert _executed(book) == ["a.ipynb", "b.ipynb", "d.ipynb"]


def test_code_cells_count_markdown_and_the_install_cell_do_not(book):
    _executed(book)
    path = book / "book" / "c.ipynb"
    nb = tasks.read_nb(path)
    nb["cells"].insert(0, {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# A title"})
    tasks.tag_notebook(nb, tasks.install_cell_source("https://github.com/o/r"))
    tasks.write_nb(nb, path)
    assert tasks.staleness(path, book) is None
    nb["cells"][-1]["source"] = "print(6 * 8)"
    tasks.write_nb(nb, path)
    assert tasks.staleness(path, book) == "inputs changed"


def test_the_recording_leaves_no_trace_in_the_chapter(book):
    _executed(book)
    nb = nbformat.read(book / "book" / "a.ipynb", as_version=4)
    assert len(nb.cells) == 1 and nb.cells[0].execution_count == 1  # the hidden cells are gone, counts from 1
    inputs = nb.metadata.rgr.inputs
    assert inputs.files == ["data/base.csv", "rgr/__init__.py", "rgr/loader.py"]
    assert inputs.digest == tasks.inputs_digest(tasks.read_nb(book / "book" / "a.ipynb"), inputs.files, inputs.folders,
                                                book)


def test_a_new_file_in_a_listed_folder_re_executes_the_chapters_that_listed_it(book):
    _write(_nb(("code", "import os\nsorted(os.listdir('../data'))")), book / "book" / "e.ipynb")
    _executed(book)
    assert tasks.read_nb(book / "book" / "e.ipynb")["metadata"]["rgr"]["inputs"]["folders"] == ["data"]
    (book / "data" / "lambda8.csv").write_text("a\n")
    (book / "data" / ".lambda8.csv.sweep.lock").write_text("")  # hidden: not part of a listing
    assert _executed(book) == ["e.ipynb"]


def test_rgr_imported_from_another_tree_is_refused(book, tmp_path, monkeypatch):
    record = {"files": [], "folders": [], "path": [], "modules": {"rgr": "/elsewhere/rgr/__init__.py"}}
    with pytest.raises(RuntimeError, match="PYTHONPATH"):
        tasks.chapter_inputs(record, book / "book" / "a.ipynb", book)
    other = tmp_path / "other"  # a kernel that would import another tree's rgr stops before the chapter's first cell
    shutil.copytree(book / "rgr", other / "rgr")
    monkeypatch.setenv("PYTHONPATH", str(other))
    before = (book / "book" / "a.ipynb").read_text()
    with pytest.raises(Exception, match="rgr would be imported from .*other"):
        tasks.execute_recorded(book / "book" / "a.ipynb", book)
    assert (book / "book" / "a.ipynb").read_text() == before


def test_a_table_changed_while_its_chapter_runs_is_not_stamped(book):
    """Rows copied into data/ while a chapter executes: the stamp would pair the new table with outputs of the old,
    so execution refuses to write (found when a sweep's rows landed mid-run)."""
    nb = book / "book" / "e.ipynb"
    _write(_nb(("code", "from rgr.loader import load\nprint(load('base'))\n"
                        "import pathlib, time\ntime.sleep(0.05)\n"
                        "pathlib.Path('../data/base.csv').write_text('a\\n3\\n')")), nb)
    before = nb.read_text()
    with pytest.raises(RuntimeError, match="data/base.csv changed while the chapter ran"):
        tasks.execute_recorded(nb, book)
    assert nb.read_text() == before


def test_book_and_pdf_refresh_then_render_with_execution_off():
    src = (ROOT / "tasks.py").read_text()
    for name, end in (("def book(", "def test("), ("def pdf(", "def check_site(")):
        body = src[src.index(name):src.index(end)]
        assert body.index('"_fresh"') < body.index('"jupyter-book"')
    assert 'execute_notebooks: "off"' in (ROOT / "_config.yml").read_text()  # Jupyter Book never executes


def test_every_committed_chapter_is_stamped_with_its_current_inputs():
    """A chapter whose data, rgr modules or code changed since it was executed must be re-executed and committed
    (`python3 tasks.py execute book/x.ipynb`): otherwise `book` on a fresh clone re-executes it (minutes) and the
    committed page shows outputs of other inputs. Fails until every chapter has been executed once through
    `tasks.py execute` (which stamps it), and again whenever a table, module or cell changes without it."""
    stale = tasks.stale_chapters(tasks.chapters(ROOT), ROOT)
    assert not stale, "stale committed chapters (python3 tasks.py execute ...): " + "; ".join(
        f"{p.name}: {why}" for p, why in stale.items())


def test_chapters_lists_the_book(tmp_path):
    shutil.copytree(ROOT / "book", tmp_path / "book", ignore=shutil.ignore_patterns("*.ipynb", "_*"))
    assert tasks.chapters(tmp_path) == []
    assert {p.name for p in tasks.chapters(ROOT)} >= {"theory.ipynb", "constructions.ipynb"}


def test_no_reproduce_command_overwrites_a_committed_chapter():
    # a papermill command shown to readers writes its executed copy to a new file, never over book/<chapter>.ipynb
    texts = []
    for p in tasks.chapters(ROOT):
        for c in tasks.read_nb(p)["cells"]:
            texts.append(tasks.cell_source(c))
            for o in c.get("outputs", []):
                texts += ["".join(v) if isinstance(v, list) else str(v) for v in o.get("data", {}).values()]
                texts.append("".join(o.get("text", "")))
    commands = [m.groups() for t in texts for m in re.finditer(r"papermill\s+(\S+\.ipynb)\s+(\S+\.ipynb)", t)]
    assert len(commands) >= 5  # the chapters' "Reproduce it" sections
    assert [(a, b) for a, b in commands if b == a or b.startswith("book/")] == []


def test_no_chapter_code_cell_is_over_15_lines():
    # BOOK_STYLE: a chapter cell teaches one step; what it computes lives in a tested rgr function
    long = [(p.name, i, len(tasks.cell_source(c).splitlines()))
            for p in sorted((ROOT / "book").glob("*.ipynb"))
            for i, c in enumerate(tasks.read_nb(p)["cells"])
            if c["cell_type"] == "code" and len(tasks.cell_source(c).splitlines()) > 15]
    assert long == []
