"""README's "Adding a chapter" is the one place that says how to add a chapter (issue 49, item 6): every file it
names exists (``<name>`` read as a chapter that has every part), it touches at most four files besides the new
ones, and the one hand-kept list of chapters, _toc.yml, names every notebook of book/ and nothing else."""

from __future__ import annotations

import re

import yaml

from tests import ROOT

EXAMPLE = "value_channel"  # a data chapter with a results module and a figure module: <name> reads as it
FILE = re.compile(r"`((?:[\w.<>-]+/)*[\w<>-]+\.(?:ipynb|py|md|yml|toml))`")


def section(title: str = "Adding a chapter") -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.M | re.S)
    assert m, f"README.md has no section '## {title}'"
    return m.group(1)


def named_files(text: str) -> list[str]:
    return sorted({f for f in FILE.findall(text)})


def touched(text: str) -> list[str]:
    block = re.search(r"^Touch\b.*?\n\n(.*?)\n\n", text, re.M | re.S)
    assert block, "the section has no 'Touch' list"
    return [m.group(1) for m in re.finditer(r"^- `([^`]+)`", block.group(1), re.M)]


def test_every_file_the_section_names_exists():
    files = named_files(section())
    assert "book/<name>.ipynb" in files and "_toc.yml" in files
    missing = [f for f in files if not (ROOT / f.replace("<name>", EXAMPLE)).exists()]
    assert missing == []


def test_adding_a_chapter_touches_at_most_four_files():
    names = touched(section())
    assert 1 <= len(names) <= 4 and "_toc.yml" in names
    assert all("<name>" not in n and (ROOT / n).exists() for n in names)


def test_the_check_can_fail():
    text = "Create:\n\n- `book/<name>.ipynb`\n- `rgr/nowhere/<name>.py`\n\nTouch:\n\n- `_toc.yml`\n- `README.md`\n\n"
    assert [f for f in named_files(text) if not (ROOT / f.replace("<name>", EXAMPLE)).exists()] == [
        "rgr/nowhere/<name>.py"]
    assert touched(text) == ["_toc.yml", "README.md"]


def toc_files(toc: dict) -> list[str]:
    out = [toc["root"]]
    for part in toc.get("parts", []):
        out += [c["file"] for c in part.get("chapters", [])]
    return out


def test_the_toc_lists_every_chapter_and_nothing_missing():
    listed = toc_files(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")))
    notebooks = {f"book/{p.stem}" for p in (ROOT / "book").glob("*.ipynb")}
    assert sorted(notebooks - set(listed)) == [], "chapters missing from _toc.yml"
    assert [f for f in listed if not any((ROOT / f).with_suffix(s).exists() for s in (".ipynb", ".md"))] == []
