"""No public name goes unused (issue 49): every public name of rgr (a module-level def, class or constant not
starting with ``_``, or one listed in ``__all__``) is used outside its own module by rgr, a chapter's code cells,
book/_ext, scripts/ or tasks.py. A name used only in its own module is private (``_name``); a name used only by
tests is dead code. Uses are identifiers (ast): names, attributes, imported names, and strings that are exactly a
name (a dispatch by name)."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from tests import ROOT

# entry points reached by no import: the name, and why it is public
ENTRY_POINTS: dict[str, str] = {
    "rgr.results.replication.registry.sec61_claims": "the replication chapter's prose names it (the law's slope)",
    "rgr.results.choosing_heads.design.fit_rule": "the choosing-heads chapter's prose names it (the rule)",
    "rgr.task.graphs.DegreeStats": "Graph.stats returns it and the theory chapter prints its repr",
    "rgr.results.replication.seed_bootstrap.PAIRED_CLAIMS": "the replication chapter's prose names it",
    "rgr.results.value_channel.paper_mse": "the value-channel chapter's prose names it (the paper's MSE convention)",
    "rgr.theory.checks.score_terms": "the constructions chapter's prose names it (the score's terms N_1..N_3)",
    "rgr.experiments.sizing.calibration.calibrate_from_history": "README's sizing section tells researchers to call it",
    "rgr.chapters.loading.ExperimentData": "load_experiment returns it; every data chapter reads its runs (data.runs)",
    "rgr.chapters.style.text_problems": "names a figure's overlapping or cut texts; test_style's failure points to it",
    "rgr.chapters.params.ParameterError": "a chapter stopped by a bad parameter shows its name (params' docstring)",
    "rgr.theory.checks.limit_scores": "the constructions chapter's prose names it (the d_k -> infinity limit)",
    "rgr.studies.theory_checks.leakage_logits": "the constructions chapter's prose names it (the leakage mean)",
    "rgr.results.choosing_heads.checks.PREREGISTERED": "the choosing-heads chapter's prose names it (the prediction)",
    "rgr.results.replication.registry.READERS": "README's module map and the replication chapter's prose name it",
    "rgr.results.reported.page_markdown": "book/reported.md says `python -m rgr.results.replication."
                                                      "reported` rewrites it: this module's __main__ writes it",
    "rgr.experiments.cluster.DaskExecutor": "README's cluster section builds one for run_sweep's executor",
    "rgr.experiments.futility.false_stops": "data/SCHEMA.md and the unstopped extension's design name it (its rule)",
    "rgr.studies.softmax_cells.softmax_at_cells": "data/SCHEMA.md names it: the study data/softmax_cells.csv stores "
                                                  "(a researcher calls it at other cells, widths or lengths)",
}
# used in their own module and tested directly (issue 49): each becomes private, its tests going through the
# public function that uses it; remove a name once done (test_the_pending_list_only_shrinks fails on a stale one)
TESTED_DIRECTLY: set[str] = {
    "rgr.gpt2.block.forward",  # its full-sequence path (last_only=False) exists to check last-only evaluation
    "rgr.results.peers.sweep.series_drift",
    "rgr.results.replication.paper_arithmetic.meet_in_the_middle",
    "rgr.results.replication.paper_arithmetic.printed_half_unit",
    "rgr.studies.lower_bounds.first_separating_width",
    "rgr.studies.theory_checks.softmax_failures",
}


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_names(tree: ast.Module) -> set[str]:
    """The module-level defs, classes and constants of ``tree`` not starting with ``_``, and its ``__all__``."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        if n.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                            names.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
                        else:
                            names.add(n.id)
    return {n for n in names if not n.startswith("_")}


_WORD = re.compile(r"[A-Za-z_]\w*")


def used_identifiers(source: str, reexports: bool = True) -> set[str]:
    """Every identifier ``source`` uses: names, attributes, imported names, strings that are one name. Without
    ``reexports``, names a module only imports (a package's ``__init__`` re-exporting them) do not count."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a shell script, or a cell with IPython magics: its words
        return set(_WORD.findall(source))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias) and reexports:
            out.update(node.name.split("."))
            out.add(node.asname or node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)
    return out


def loaded(tree: ast.Module) -> set[str]:
    """The names ``tree`` reads (not those it only defines, assigns or lists in ``__all__``)."""
    listing = {id(n) for node in tree.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) for n in ast.walk(node)}
    return {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.value
            for n in ast.walk(tree) if id(n) not in listing and (
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) or isinstance(n, ast.Attribute)
                or isinstance(n, ast.Constant) and isinstance(n.value, str))}


def notebook_code(path: Path) -> str:
    """The code cells of a notebook, IPython magics and shell lines dropped."""
    cells = json.loads(path.read_text())["cells"]
    lines = [line for c in cells if c["cell_type"] == "code"
             for line in ("".join(c["source"]) + "\n").splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def users(root: Path) -> dict[str, str]:
    """Every file that may use rgr's names outside tests, as its source: rgr, the chapters' code cells, book/_ext,
    scripts/ (its shell scripts too), tasks.py."""
    files = {str(p.relative_to(root)): p.read_text() for p in (root / "rgr").rglob("*.py")}
    files |= {str(p.relative_to(root)): notebook_code(p) for p in (root / "book").glob("*.ipynb")}
    for p in [*(root / "book").rglob("*.py"), *(root / "scripts").glob("*"), root / "tasks.py"]:
        if p.is_file():
            files[str(p.relative_to(root))] = p.read_text()  # a shell script's Python is read as its words
    return files


def unused(root: Path, allowed: dict[str, str] = ENTRY_POINTS) -> dict[str, list[str]]:
    """The public names of rgr used nowhere outside their module (``own``: used there, so private; ``dead``: not
    even there), as ``module.name``; ``allowed`` entry points excepted."""
    files = users(root)
    uses = {f: used_identifiers(src, reexports=not f.endswith("__init__.py")) for f, src in files.items()}
    out: dict[str, list[str]] = {"own": [], "dead": []}
    for p in sorted((root / "rgr").rglob("*.py")):
        rel, src = str(p.relative_to(root)), p.read_text()
        tree = ast.parse(src)
        for name in sorted(public_names(tree)):
            full = f"{_module(p, root)}.{name}"
            if full in allowed or any(name in u for f, u in uses.items() if f != rel):
                continue
            out["own" if name in loaded(tree) else "dead"].append(full)
    return out


@pytest.fixture(scope="module")
def found() -> dict[str, list[str]]:
    return unused(ROOT)


def test_no_public_name_goes_unused(found):
    own = [n for n in found["own"] if n not in TESTED_DIRECTLY]
    dead = [n for n in found["dead"] if n not in TESTED_DIRECTLY]
    assert not own and not dead, (
        "used only in their own module (make them private):\n" + "\n".join(own) +
        "\nused by nothing but tests (delete them and their tests):\n" + "\n".join(dead))


def test_the_pending_lists_only_shrink(found):
    """Every name still listed is still unused and still public (a name fixed leaves the list); every allowed entry
    point exists."""
    stale = TESTED_DIRECTLY - set(found["own"]) - set(found["dead"])
    assert not stale, f"no longer unused (take them off the list): {sorted(stale)}"
    gone = [n for n in ENTRY_POINTS if not hasattr(importlib.import_module(n.rsplit(".", 1)[0]), n.rsplit(".", 1)[1])]
    assert not gone, f"allowed entry points that no longer exist: {gone}"


def test_the_check_can_fail(tmp_path):
    """A synthetic package: a name used by another module passes; one used only in its own module, one used only by
    a test, one listed in ``__all__`` and nowhere else, and one used in a chapter's markdown only are reported; a
    chapter's code cell and an allowed entry point count as users."""
    (tmp_path / "rgr" / "sub").mkdir(parents=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "rgr" / "__init__.py").write_text("")
    (tmp_path / "rgr" / "sub" / "__init__.py").write_text("from .a import re_exported\n")
    (tmp_path / "rgr" / "sub" / "a.py").write_text(
        '__all__ = ["listed", "used"]\nLIMIT = 3\n\n\ndef used():\n    return LIMIT\n\n\ndef tested():\n    pass\n\n\n'
        "def listed():\n    pass\n\n\ndef re_exported():\n    pass\n\n\ndef in_notebook():\n    pass\n\n\n"
        "def in_markdown():\n    pass\n\n\ndef entry():\n    pass\n")
    (tmp_path / "rgr" / "b.py").write_text("from .sub.a import used\n\nused()\n")
    (tmp_path / "tests" / "test_a.py").write_text("from rgr.sub.a import tested\n\ntested()\n")
    cells = [{"cell_type": "code", "source": ["%matplotlib inline\n", "from rgr.sub.a import in_notebook\n"]},
             {"cell_type": "markdown", "source": ["`rgr.sub.a.in_markdown` does it"]}]
    (tmp_path / "book" / "x.ipynb").write_text(json.dumps({"cells": cells}))
    found = unused(tmp_path, allowed={"rgr.sub.a.entry": "a command"})
    assert found == {"own": ["rgr.sub.a.LIMIT"],
                     "dead": ["rgr.sub.a.in_markdown", "rgr.sub.a.listed", "rgr.sub.a.re_exported",
                              "rgr.sub.a.tested"]}
