"""Every dotted ``rgr.…`` name the book, the READMEs and the package's docstrings mention resolves to a module or
an attribute of one: a refactor that moves a module cannot leave the prose pointing at a room that is gone."""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import pytest

from tests import ROOT

NAME = re.compile(r"(?<![\w/.])rgr(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
NOT_CODE = {"rgr.inputs"}  # the notebook metadata key of the fresh-pages stamp (book/_ext/rgr_fresh.py)
EXAMPLES = {"book/x.ipynb"}  # a placeholder in usage text


def resolves(name: str) -> bool:
    """Whether ``name`` is an importable module, or an attribute path inside the longest importable prefix."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def texts() -> dict[str, str]:
    out = {}
    for nb in sorted((ROOT / "book").glob("*.ipynb")):
        cells = json.loads(nb.read_text())["cells"]
        out[nb.name] = "\n".join("".join(c["source"]) for c in cells)
    for f in [*(ROOT / "book").glob("*.md"), ROOT / "README.md", ROOT / "data" / "README.md",
              ROOT / "tests" / "README.md", *(ROOT / "rgr").rglob("*.py")]:
        out[str(f.relative_to(ROOT))] = f.read_text()
    return out


def dangling(named: dict[str, str]) -> list[tuple[str, str]]:
    found = {(f, n.rstrip(".")) for f, t in named.items() for n in NAME.findall(t)}
    return sorted((f, n) for f, n in found if n not in NOT_CODE and not n.endswith((".py", ".csv")) and not resolves(n))


def test_every_rgr_name_in_the_prose_and_docstrings_resolves():
    assert dangling(texts()) == []


PATH = re.compile(r"(?<![\w/.-])((?:tests|rgr|book|scripts)/[A-Za-z0-9_/.-]+\.(?:py|ipynb|md))")


def missing_files(named: dict[str, str], root: Path = ROOT) -> list[tuple[str, str]]:
    """The repository paths (tests/..., rgr/..., book/..., scripts/...) a text names that do not exist."""
    return sorted({(f, p) for f, t in named.items() for p in PATH.findall(t)
                   if p not in EXAMPLES and not (root / p).exists()})


def test_every_file_path_the_docs_name_exists():
    """A moved test or module leaves no README, docstring or chapter pointing at its old path."""
    named = texts()
    named.update({"pyproject.toml": (ROOT / "pyproject.toml").read_text(), "tasks.py": (ROOT / "tasks.py").read_text()})
    assert missing_files(named) == []


def test_the_path_check_can_fail():
    assert missing_files({"x": "see tests/test_nowhere.py and tests/system/test_style.py"}) == [
        ("x", "tests/test_nowhere.py")]


@pytest.mark.parametrize("name, ok", [("rgr.task.graphs", True), ("rgr.task.graphs.permutation_graph", True),
                                      ("rgr.task.nowhere", False), ("rgr.task.graphs.no_such_name", False)])
def test_the_check_can_fail(name, ok):
    assert (dangling({"x": f"see `{name}`"}) == []) is ok
