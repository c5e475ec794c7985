"""Each chapter's reviewable text (issue 49, item 6): book/_text/<name>.md is jupytext's MyST rendering of the
committed notebook (code and Markdown cells, their tags; no outputs, no metadata), so that a diff reads as text.
`python3 tasks.py tag` (or `pair`) writes it; this fails where one is missing, outdated or left from a chapter
that is gone."""

from __future__ import annotations

import importlib.util
import sys

import pytest
import yaml

from tests import ROOT

pytest.importorskip("jupytext")

if "tasks" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
    sys.modules["tasks"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["tasks"])
tasks = sys.modules["tasks"]

CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_each_chapter_has_its_current_text(chapter):
    text = tasks.text_path(chapter)
    assert text.exists(), f"{text.relative_to(ROOT)} is missing: python3 tasks.py pair {chapter.relative_to(ROOT)}"
    assert text.read_text(encoding="utf-8") == tasks.chapter_text(chapter), (
        f"{text.relative_to(ROOT)} differs from its notebook: python3 tasks.py pair {chapter.relative_to(ROOT)}")


def test_no_text_without_its_chapter():
    assert [p.name for p in (ROOT / "book" / "_text").glob("*") if not (ROOT / "book" / f"{p.stem}.ipynb").exists()] \
        == []


def test_the_text_holds_code_and_words_but_no_outputs():
    text = tasks.chapter_text(ROOT / "book" / "theory.ipynb")
    assert text.startswith("# The task and the model") and "```{code-cell}\n:tags: [parameters" in text
    assert "image/png" not in text and '"rgr"' not in text and "digest" not in text  # no outputs, no stamp


def test_the_book_does_not_build_the_texts():
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert "book/_text" in config["exclude_patterns"]


def test_the_check_can_fail(tmp_path):
    chapter = tmp_path / "book" / "x.ipynb"
    chapter.parent.mkdir()
    chapter.write_bytes((ROOT / "book" / "theory.ipynb").read_bytes())
    tasks.pair([str(chapter)])
    assert tasks.text_path(chapter).read_text(encoding="utf-8") == tasks.chapter_text(chapter)
    chapter.write_text(chapter.read_text(encoding="utf-8").replace("The task and the model", "Another title", 1),
                       encoding="utf-8")
    assert tasks.text_path(chapter).read_text(encoding="utf-8") != tasks.chapter_text(chapter)
