"""Every chapter executes through papermill with ``-p preset smoke`` (issue 16, item 1).

Each chapter runs into a temporary folder and must pass; every ``{glue:text}`` name its prose uses must be glued.
Every chapter refuses a bad parameter in one line, and the chapters that read data/ also run on a checkout with
no tables (they fall back to smoke data, say so, and write nothing into data/).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tests import ROOT

pm = pytest.importorskip("papermill")

BOOK = ROOT / "book"
CHAPTERS = sorted(BOOK.glob("*.ipynb"))
REQUIRED = {c.stem for c in CHAPTERS}


def _code(chapter: Path, tag: str | None = None) -> str:
    """The chapter's code cells (only those tagged ``tag``, when given), joined."""
    cells = [c for c in nbformat.read(chapter, 4).cells if c.cell_type == "code"]
    return "\n".join(c.source for c in cells if tag is None or tag in c.metadata.get("tags", []))


# read off the chapters, not kept by hand: the data chapters' `preset` is "auto" (it picks stored rows), the others
# compute everything they show and their `preset` sizes that; some show data/constructions.csv's book rows as they are
DATA_CHAPTERS = sorted(c.stem for c in CHAPTERS if re.search(r'^preset = "auto"', _code(c, "parameters"), re.M))
THEORY_CHAPTERS = sorted(REQUIRED - set(DATA_CHAPTERS))
CONSTRUCTIONS_CHAPTERS = sorted(c.stem for c in CHAPTERS if 'load_complete("constructions"' in _code(c))
GLUE_REF = re.compile(r"\{glue(?::text)?\}`(?![^`]*::)([^`:]+)")  # a name from another page (`page::name`) is left out


def _run(chapter: Path, out: Path, cwd: Path, **parameters) -> nbformat.NotebookNode:
    pm.execute_notebook(str(chapter), str(out), parameters=parameters, cwd=str(cwd), kernel_name="python3",
                        progress_bar=False, log_output=False)
    return nbformat.read(out, 4)


def _glued(nb: nbformat.NotebookNode) -> set[str]:
    return {o["metadata"]["scrapbook"]["name"] for c in nb.cells for o in c.get("outputs", [])
            if "scrapbook" in o.get("metadata", {})}


def _referenced(nb: nbformat.NotebookNode) -> set[str]:
    return {name for c in nb.cells if c.cell_type == "markdown" for name in GLUE_REF.findall(c.source)}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs_on_the_smoke_preset(chapter, tmp_path):
    nb = _run(chapter, tmp_path / chapter.name, BOOK, preset="smoke")
    missing = _referenced(nb) - _glued(nb)
    assert not missing, f"prose uses glue names the chapter never glues: {sorted(missing)}"


@pytest.mark.parametrize("name", DATA_CHAPTERS)
def test_data_chapter_falls_back_to_smoke_data_without_tables(name, empty_checkout, tmp_path):
    # the peers chapter's re-fit reads a committed table of statistics, not a sweep: no smoke stands in for it
    given = [ROOT / "data" / "peers_refit.csv"] if name == "peers" else []
    for f in given:
        shutil.copy(f, empty_checkout / "data" / f.name)
    nb = _run(BOOK / f"{name}.ipynb", tmp_path / f"{name}.ipynb", empty_checkout / "book", preset="book")
    written = {f.name for f in (empty_checkout / "data").iterdir()} - {f.name for f in given}
    assert not written  # the fallback wrote nothing into data/
    if name == "permutation_sweeps":
        text = "".join(o.get("data", {}).get("text/markdown", "") for c in nb.cells for o in c.get("outputs", []))
        assert "Smoke data, not results" in text


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_chapter_refuses_a_bad_preset_in_one_line(name, tmp_path):
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(BOOK / f"{name}.ipynb", tmp_path / f"{name}.ipynb", BOOK, preset="nope")
    assert err.value.ename == "ParameterError" and err.value.evalue.startswith("preset = 'nope'")


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_a_chapter_takes_auto_exactly_when_it_reads_stored_rows(chapter):
    """A theory chapter checks its `preset` against the sizes (choices=PRESETS); a data chapter allows "auto"."""
    assert ("choices=PRESETS" in _code(chapter)) == (chapter.stem in THEORY_CHAPTERS)
    assert DATA_CHAPTERS and THEORY_CHAPTERS and set(CONSTRUCTIONS_CHAPTERS) <= set(THEORY_CHAPTERS)


@pytest.mark.parametrize("name", THEORY_CHAPTERS)
def test_theory_chapter_refuses_auto_in_one_line(name, tmp_path):
    """Issue 33: 'auto' (listed as allowed) gave `KeyError: 'auto'`; it picks stored rows, which these do not size."""
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(BOOK / f"{name}.ipynb", tmp_path / f"{name}.ipynb", BOOK, preset="auto")
    assert err.value.ename == "ParameterError"
    assert err.value.evalue.startswith("preset = 'auto'; choose one of 'smoke', 'book', 'paper'")


@pytest.mark.parametrize("cut", ["half", "smoke only"])
@pytest.mark.parametrize("name", CONSTRUCTIONS_CHAPTERS)
def test_constructions_chapter_refuses_an_incomplete_table_in_one_line(name, cut, empty_checkout, tmp_path):
    """Issue 33: a constructions.csv of smoke rows gave `KeyError: 0`; one cut to half its rows ran with no warning."""
    lines = (ROOT / "data" / "constructions.csv").read_text().splitlines(keepends=True)
    target = empty_checkout / "data" / "constructions.csv"
    if cut == "half":
        target.write_text("".join(lines[: (len(lines) - 1) // 2 + 1]))
    else:  # every row relabelled smoke, each under its own key (the loader refuses a row edited under its old one)
        from rgr.catalog import get
        from rgr.store import load_table
        from rgr.store.write import replace_table

        schema = get("constructions").schema
        smoke = load_table(ROOT / "data" / "constructions.csv", schema).assign(preset="smoke")
        target.unlink(missing_ok=True)
        replace_table(target, schema, smoke.assign(run_key=list(schema.key.of(smoke))))
    with pytest.raises(pm.PapermillExecutionError) as err:
        _run(BOOK / f"{name}.ipynb", tmp_path / f"{name}.ipynb", empty_checkout / "book", preset="smoke")
    assert err.value.ename == "TableError" and "\n" not in err.value.evalue
    assert err.value.evalue.startswith(str(empty_checkout / "data" / "constructions.csv") + " holds ")
