"""Tests mirror the package: ``rgr/<wing>/<module>.py`` is tested in ``tests/<wing>/test_<module>.py``, or by a test
file that imports it by name, or its entry in NO_DIRECT_TEST says where it is exercised and why it has no test of
its own (issue 31, item 5). A reason that names a missing module or test file fails, so the list cannot go stale."""

from __future__ import annotations

import re
from pathlib import Path

from tests import ROOT

NO_DIRECT_TEST = {
    "rgr.chapters.figures.choosing_heads": ("tests/system/test_site.py", "drawn by its chapter under nbval; the "
                                            "site check measures its figures at 1280 and 390 px"),
    "rgr.chapters.figures.replication": ("tests/system/test_site.py", "drawn by its chapter under nbval and the "
                                         "site check"),
    "rgr.chapters.figures.theory": ("tests/system/test_theory_chapters.py", "drawn by the theory chapter, run at "
                                    "the smoke preset there and under nbval"),
    "rgr.cli.common": ("tests/system/test_reliability.py", "the one-line errors of every command, through "
                       "rgr.cli.main"),
    "rgr.cli.others": ("tests/system/test_reliability.py", "bench, repair, schema, replay-stopping through "
                       "rgr.cli.main (also tests/store/test_seal.py, tests/gpt2/test_items.py)"),
    "rgr.cli.sweep": ("tests/system/test_reliability.py", "the sweep command through rgr.cli.main"),
    "rgr.results.replication.fig4": ("tests/results/replication/test_registry.py", "every claim's reader runs "
                                     "on the committed tables there, the Fig. 4 readers among them"),
    "rgr.results.replication.sec61": ("tests/results/replication/test_verdicts.py", "the Sec. 6.1 rows (the law's "
                                      "caveat, Table 1's median note) through evaluate on synthetic base runs"),
    "rgr.store.seal": ("tests/store/test_seal.py", "side files without following symlinks, through the store's "
                        "public API"),
    "rgr.store.schema": ("tests/store/test_store.py", "typed columns, through the store's public API (rgr.store)"),
    "rgr.store.write": ("tests/store/test_store.py", "locked atomic writes and repair, through rgr.store"),
}


def modules(root: Path = ROOT) -> dict[str, Path]:
    out = {}
    for p in sorted((root / "rgr").rglob("*.py")):
        if p.name not in ("__init__.py", "__main__.py"):
            out["rgr." + ".".join(p.relative_to(root / "rgr").with_suffix("").parts)] = p
    return out


def mirror(module: str, root: Path = ROOT) -> Path:
    *wing, name = module.split(".")[1:]
    return root.joinpath("tests", *wing, f"test_{name}.py")


def importers(module: str, tests: dict[Path, str]) -> list[Path]:
    parent, name = module.rsplit(".", 1)
    pat = re.compile(rf"(from {re.escape(module)} import|import {re.escape(module)}\b|"
                     rf"from {re.escape(parent)} import [^\n]*\b{name}\b|"
                     rf"from {re.escape(parent)} import \([^)]*\b{name}\b)")
    return [p for p, text in tests.items() if pat.search(text)]


def untested(root: Path = ROOT, reasons: dict = NO_DIRECT_TEST) -> list[str]:
    tests = {p: p.read_text() for p in (root / "tests").rglob("test_*.py")}
    return [m for m in modules(root) if not mirror(m, root).exists() and not importers(m, tests) and m not in reasons]


def test_every_module_has_a_test_or_a_stated_reason():
    assert untested() == []


def test_every_reason_names_a_module_and_a_test_file_that_exist():
    mods = modules()
    for module, (test_file, why) in NO_DIRECT_TEST.items():
        assert module in mods, f"{module}: no such module (remove its reason)"
        assert (ROOT / test_file).exists(), f"{module}: {test_file} does not exist"
        assert why


def test_the_layout_check_can_fail(tmp_path):
    (tmp_path / "rgr" / "task").mkdir(parents=True)
    (tmp_path / "rgr" / "task" / "graphs.py").write_text("")
    (tmp_path / "tests" / "task").mkdir(parents=True)
    assert untested(tmp_path, {}) == ["rgr.task.graphs"]
    (tmp_path / "tests" / "task" / "test_graphs.py").write_text("")
    assert untested(tmp_path, {}) == []
