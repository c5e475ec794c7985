"""The book's build plumbing that needs no Sphinx: chapters as JSON, and fresh pages (the committed outputs are
the cache). Used by tasks.py (``execute``, ``fresh``, ``book``, ``pdf``), which runs on a bare Python: this module
imports nbformat and nbclient only inside :func:`execute_recorded`, which runs in the book's environment.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
INSTALL_MARKER = "# rgr: install cell"  # the first line of the install cell (tasks.py tag, book/_install_cell.py)


# notebooks as JSON (this file runs on a bare Python: no nbformat), written the way nbformat writes them


class NotebookError(ValueError):
    """A path that does not hold a notebook: missing, not UTF-8, not valid JSON (one line naming it)."""


def read_nb(path: Path) -> dict:
    """The notebook at ``path`` as JSON; a :class:`NotebookError` naming it when it cannot be one."""
    try:
        nb = json.loads(Path(path).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise NotebookError(f"no such notebook: {path}") from None
    except IsADirectoryError:
        raise NotebookError(f"{path} is a folder, not a notebook") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise NotebookError(f"{path} is not valid JSON ({e}); restore it: git checkout {path}") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError(f"{path} is not a notebook (no list of cells)")
    return nb


def _paths():
    """rgr/paths.py, loaded from its file: it needs only the standard library, and this module runs where rgr
    is not installed (a bare Python)."""
    spec = importlib.util.spec_from_file_location("rgr_paths", ROOT / "rgr" / "paths.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_nb(nb: dict, path: Path) -> None:
    """Write a notebook whole or not at all (a temporary file and a rename: :func:`rgr.paths.replace_whole`);
    a full disk leaves the committed notebook as it was."""
    write_whole(Path(path), json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n")


def write_whole(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` whole or not at all (:func:`rgr.paths.replace_whole`): notebooks, and
    their paired texts (tasks.py pair)."""
    _paths().replace_whole(Path(path), text.encode("utf-8"))


def cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def chapters(root: Path = ROOT) -> list[Path]:
    """The book's chapters: every notebook in book/."""
    return sorted((root / "book").glob("*.ipynb"))



# ---------------------------------------------------------------------------------------------------
# fresh pages: the committed outputs are the cache. `execute` records, in each chapter's metadata, what its
# outputs were computed from and a digest of it; `book` re-executes only the chapters whose inputs differ now and
# renders every other one from its committed outputs (a fresh clone of a current tree executes nothing).
#
# What counts as an input is recorded while the chapter runs, not guessed from its code: an audit hook in its
# kernel notes every file opened for reading and every folder listed, and at the end its sys.modules names the
# modules it imported. So a chapter depends on the data/ tables it really read (the replication chapter reads
# eleven through rgr, its code names one), and on the rgr modules it imported, directly or through another
# module (the transitive closure, not the whole package): editing rgr/results/softmax.py re-executes the chapters
# that import it, not the theory chapter. The closure is what Python loaded, so it is exact; reading a table loads what
# the table is (rgr.catalog), never how it trains (rgr.trainers), so a data chapter imports 33-68 of its modules.
# Not inputs: markdown cells (they render, they do not compute), the install cell (inert in a checkout), the
# installed packages (pinned in pyproject.toml; nbval in `test` catches an output that a new pin changes), and
# folders that Python lists to find modules. A new file in a listed folder (a table's shard in data/) changes
# the digest of the chapters that listed it.

INPUTS_KEY = "inputs"  # notebook metadata: {"rgr": {"inputs": {"digest": ..., "files": [...], "folders": [...]}}}
IGNORED_PARTS = {".git", "_build", ".venv", "__pycache__", ".ipynb_checkpoints"}

# Runs in the chapter's kernel before its first cell (and is dropped from the written notebook): records every
# file opened for reading and every folder listed, as the chapter really executes (rgr's own loaders included)
RECORD_CELL = """\
import importlib.util as _rgr_util, os as _rgr_os, sys as _rgr_sys
_rgr_spec = _rgr_util.find_spec("rgr")  # fail now, not after the chapter ran, if rgr comes from another tree
if _rgr_spec and _rgr_spec.origin and not _rgr_os.path.realpath(_rgr_spec.origin).startswith({rgr!r}):
    raise ImportError(f"rgr would be imported from {{_rgr_spec.origin}}, not from {rgr}: PYTHONPATH={root}")
_rgr_seen, _rgr_listed = set(), set()
def _rgr_audit(event, args):
    try:
        if event == "open" and not isinstance(args[0], int):
            mode, flags = args[1], args[2] or 0
            if ((mode is None and not flags & (_rgr_os.O_WRONLY | _rgr_os.O_RDWR))
                    or (mode and not set(mode) & set("wax+"))):
                _rgr_seen.add(_rgr_os.path.abspath(_rgr_os.fsdecode(args[0])))
        elif event in ("os.listdir", "os.scandir") and not isinstance(args[0], int):
            _rgr_listed.add(_rgr_os.path.abspath(_rgr_os.fsdecode(args[0] if args[0] is not None else ".")))
    except Exception:
        pass
_rgr_sys.addaudithook(_rgr_audit)
"""
# ...and after its last cell: what it read, and the modules it imported (transitively: all of sys.modules)
REPORT_CELL = """\
import json as _rgr_json
print(_rgr_json.dumps({"files": sorted(_rgr_seen), "folders": sorted(_rgr_listed),
                       "path": [_rgr_os.path.abspath(x or ".") for x in _rgr_sys.path], "modules": {
    n: m.__file__ for n, m in list(_rgr_sys.modules.items()) if isinstance(getattr(m, "__file__", None), str)}}))
"""


def _code_of(nb: dict) -> list[str]:
    """The chapter's code cells, but the install cell (it does nothing in a checkout)."""
    return [cell_source(c) for c in nb["cells"]
            if c["cell_type"] == "code" and not cell_source(c).startswith(INSTALL_MARKER)]


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def inputs_digest(nb: dict, files: list[str], folders: list[str], root: Path = ROOT) -> str:
    """sha256 of a chapter's code cells, the bytes of ``files`` and the names in ``folders`` (paths relative to
    ``root``); a missing file or folder counts as empty and so changes the digest."""
    h = hashlib.sha256()
    for src in _code_of(nb):
        h.update(b"cell\0" + src.encode() + b"\0")
    for f in sorted(files):
        p = root / f
        h.update(b"file\0" + f.encode() + b"\0" + (p.read_bytes() if p.is_file() else b"\0missing") + b"\0")
    for d in sorted(folders):
        p = root / d
        h.update(b"folder\0" + d.encode() + b"\0"
                 + "\0".join(_listing(p) if p.is_dir() else ["\0missing"]).encode() + b"\0")
    return h.hexdigest()


def _inside(path: str, root: Path) -> str | None:
    """``path`` relative to ``root`` if it is a tracked kind of input there (not .git, _build, .venv, caches)."""
    try:
        rel = Path(path).resolve().relative_to(root.resolve())
    except ValueError:
        return None
    return None if IGNORED_PARTS & set(rel.parts) else rel.as_posix()


def chapter_inputs(record: dict, nb_path: Path, root: Path = ROOT) -> dict:
    """What a chapter's outputs were computed from, out of the ``record`` its kernel made (:data:`REPORT_CELL`):
    the files under ``root`` it read (data/ tables, a style file, shared notes) and the rgr modules in its
    ``sys.modules`` at the end, i.e. the closure of what it imported, not the whole package (editing one results
    module re-executes only the chapters that import it, directly or through another module); the folders it
    listed (a table's shards are found by listing data/: a new file there re-executes the chapters that looked),
    but those the import system lists to find modules (sys.path entries, packages)."""
    nb_rel = _inside(str(nb_path), root)
    rgr = (root / "rgr").resolve()
    for name, file in record["modules"].items():
        if (name == "rgr" or name.startswith("rgr.")) and not Path(file).resolve().is_relative_to(rgr):
            raise RuntimeError(f"the chapter imported {name} from {file}, not from {rgr}: put this tree first on "
                               "the path (PYTHONPATH) or install it (pip install -e .)")
    files = {_inside(f, root) for f in record["files"] if Path(f).is_file()}
    files |= {_inside(m, root) for m in record["modules"].values()
              if m.endswith(".py") and os.path.isabs(m) and Path(m).is_file()}
    files = sorted(f for f in files - {None, nb_rel} if not f.endswith(".pyc"))
    # the import system lists the folders of sys.path and of packages to find modules: not a chapter's reads
    searched = set(record.get("path", []))
    folders = sorted({d for x in record["folders"] if x not in searched and (d := _inside(x, root)) is not None
                      and (root / d).is_dir() and not (root / d / "__init__.py").exists()})
    return {"files": files, "folders": folders}


def stamp(nb: dict, inputs: dict, root: Path = ROOT) -> None:
    """Store ``inputs`` (:func:`chapter_inputs`) and their digest in ``nb``'s metadata."""
    entry = {"digest": inputs_digest(nb, inputs["files"], inputs["folders"], root), **inputs}
    nb.setdefault("metadata", {}).setdefault("rgr", {})[INPUTS_KEY] = entry


def staleness(nb_path: Path, root: Path = ROOT) -> str | None:
    """Why ``nb_path``'s committed outputs are not current (None: they are), from the digest stored at execution."""
    nb = read_nb(nb_path)
    entry = nb.get("metadata", {}).get("rgr", {}).get(INPUTS_KEY)
    if not entry:
        return "never stamped (executed before inputs were recorded)"
    if inputs_digest(nb, entry["files"], entry["folders"], root) == entry["digest"]:
        return None
    changed = [f for f in entry["files"] if not (root / f).is_file()]
    return "inputs changed" + (f" (missing: {', '.join(changed[:3])})" if changed else "")


def stale_chapters(notebooks: list[Path], root: Path = ROOT) -> dict[Path, str]:
    """The chapters among ``notebooks`` whose committed outputs are not current, with the reason."""
    return {p: why for p in notebooks if (why := staleness(p, root)) is not None}


def strip_timings(nb: dict) -> None:
    """Drop what only says when a cell ran (nbclient's ``execution`` timestamps in each cell's metadata), so that a
    re-executed chapter's diff shows what changed in its outputs, not the clock (issue 49)."""
    for c in nb["cells"]:
        c.get("metadata", {}).pop("execution", None)


def _renumber(nb: dict, by: int) -> None:
    for c in nb["cells"]:
        if c["cell_type"] == "code" and c.get("execution_count"):
            c["execution_count"] -= by
            for o in c.get("outputs", []):
                if o.get("execution_count"):
                    o["execution_count"] -= by


def execute_recorded(nb_path: Path, root: Path = ROOT, timeout: int = 1800) -> dict:
    """Execute the chapter at ``nb_path`` in place (default parameters, its folder as working directory) and stamp
    its inputs; needs nbformat and nbclient (the book's environment). Returns the inputs recorded."""
    import nbclient
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    rgr = str((root / "rgr").resolve()) + os.sep
    nb.cells.insert(0, nbformat.v4.new_code_cell(RECORD_CELL.format(rgr=rgr, root=root.resolve())))
    nb.cells.append(nbformat.v4.new_code_cell(REPORT_CELL))
    started = time.time_ns()
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(nb_path.parent)}}).execute()
    report = nb.cells.pop()
    nb.cells.pop(0)
    _renumber(nb, 1)
    text = "".join(o.get("text", "") for o in report.outputs if o.get("name") == "stdout")
    inputs = chapter_inputs(json.loads(text.strip().splitlines()[-1]), nb_path, root)
    changed_while_running(inputs["files"], started, root)
    plain = json.loads(nbformat.writes(nb))
    strip_timings(plain)
    stamp(plain, inputs, root)
    write_nb(plain, nb_path)
    return inputs


def changed_while_running(files: list[str], started_ns: int, root: Path = ROOT) -> None:
    """Refuse to stamp a chapter whose input files changed after its execution began (a sweep's rows copied into
    data/ meanwhile, an edit): the stamp would record the new content against outputs computed from the old."""
    late = [f for f in files if (root / f).stat().st_mtime_ns > started_ns]
    if late:
        raise RuntimeError(f"{', '.join(late)} changed while the chapter ran, so its outputs may come from the old "
                           "content: execute it again (nothing was written)")


def refresh(notebooks: list[Path], root: Path = ROOT, run: bool = True) -> dict[Path, str]:
    """Re-execute (and stamp) every chapter of ``notebooks`` whose inputs changed since it was stamped; the others
    keep their committed outputs. ``run=False``: execute nothing. Returns the stale chapters with the reason."""
    stale = stale_chapters(notebooks, root)
    for i, (p, why) in enumerate(stale.items(), 1):
        print(f"{p.relative_to(root)}: {why}: {f'[{i}/{len(stale)}] re-executing' if run else 'rendered as committed'}",
              flush=True)
        if run:
            inputs = execute_recorded(p, root)
            print(f"  stamped: {len(inputs['files'])} files, {len(inputs['folders'])} folders", flush=True)
    print(f"{len(notebooks) - len(stale)} of {len(notebooks)} chapters current: rendered from their committed outputs",
          flush=True)
    return stale
