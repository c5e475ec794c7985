"""No public name goes unused (issue 49): every public name of rgr (a module-level def, class or constant not
starting with ``_``, or one listed in ``__all__``) is used outside its own module by rgr, a chapter's code cells,
book/_ext, scripts/ or tasks.py. A name used only in its own module is private (``_name``); a name used only by
tests is dead code. Uses are identifiers (ast): names, attributes, imported names, and strings that are exactly a
name (a dispatch by name)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from tests import ROOT

# entry points reached by no import: the name, and why it is public
ENTRY_POINTS: dict[str, str] = {
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
    except SyntaxError:  # a notebook cell with IPython magics: its words
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
    """The names ``tree`` reads (not those it only defines or assigns)."""
    return {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.value
            for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            or isinstance(n, ast.Attribute) or isinstance(n, ast.Constant) and isinstance(n.value, str)}


def notebook_code(path: Path) -> str:
    """The code cells of a notebook, IPython magics and shell lines dropped."""
    cells = json.loads(path.read_text())["cells"]
    lines = [line for c in cells if c["cell_type"] == "code"
             for line in ("".join(c["source"]) + "\n").splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def users(root: Path) -> dict[str, str]:
    """Every file that may use rgr's names outside tests, as its source: rgr, the chapters' code cells, book/_ext,
    scripts/, tasks.py."""
    files = {str(p.relative_to(root)): p.read_text() for p in (root / "rgr").rglob("*.py")}
    files |= {str(p.relative_to(root)): notebook_code(p) for p in (root / "book").glob("*.ipynb")}
    for p in [*(root / "book").rglob("*.py"), *(root / "scripts").glob("*.py"), root / "tasks.py"]:
        if p.is_file():
            files[str(p.relative_to(root))] = p.read_text()
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


def test_no_public_name_goes_unused():
    found = unused(ROOT)
    assert not found["own"] and not found["dead"], (
        "used only in their own module (make them private):\n" + "\n".join(found["own"]) +
        "\nused by nothing but tests (delete them and their tests):\n" + "\n".join(found["dead"]))
