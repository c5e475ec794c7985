#!/usr/bin/env python3
"""The project's two entry points, runnable with nothing but Python 3.11 and pip.

    python3 tasks.py book   # create .venv, install, re-execute stale chapters, render _build/html
    python3 tasks.py test   # create .venv, install, run the unit/property tests and nbval, then `vary`
    python3 tasks.py vary [book/x.ipynb ...]         # nbval again, other thread count and floating-point kernels

    python3 tasks.py execute book/theory.ipynb ...   # re-execute chapters in place (commit the outputs)
    python3 tasks.py tag [book/x.ipynb ...]          # install cell first, `hide-input` on code cells
    python3 tasks.py check-site [page.html ...]      # render the built site in headless Chromium

    python3 tasks.py fresh [book/x.ipynb ...]       # which chapters' committed outputs are stale (exit 1 if any)
    python3 tasks.py pdf                             # the whole book as one PDF: _build/pdf/rgr-book.pdf

The committed outputs are the cache: ``execute`` stores in each chapter a digest of what it read (its code, the
``rgr`` modules it imported, the data/ tables it opened; :func:`chapter_inputs`), and ``book`` and ``pdf``
re-execute only the chapters whose digest differs now, rendering every other one from its committed outputs
(``--committed``: execute nothing, render stale chapters as they are and name them). A fresh clone with no stale
chapter builds in about 20 s here (2 busy cores; README, "Build times").

Extra arguments after ``test`` go to pytest (e.g. ``python3 tasks.py test -k graphs``); the ``vary`` pass
runs only after a plain ``test`` (see :func:`variant_env` and tests/README.md).
The virtual environment is reused while pyproject.toml is unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("RGR_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


def _run(*cmd: str | Path) -> None:
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.run([str(c) for c in cmd], cwd=ROOT, check=True)


def ensure_env() -> None:
    """Create .venv and install the package with its book and test extras (pinned)."""
    if sys.version_info[:2] != (3, 11):
        print(f"note: the pins are tested on Python 3.11; this is {sys.version.split()[0]}", flush=True)
    stamp = VENV / ".rgr-installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == want:
        return
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    _run(PY, "-m", "pip", "install", "--quiet", "-e", ".[book,test]")
    stamp.write_text(want)


def book(args: list[str]) -> None:
    """Re-execute the chapters whose inputs changed (:func:`stale_chapters`), then render every chapter from its
    outputs (_config.yml: execution off); the site gets the source bundle (book/_ext/rgr_site.py). With
    ``--committed``, nothing executes: stale chapters are rendered as committed, and named."""
    ensure_env()
    _run(PY, __file__, "_fresh", *args)
    _run(BIN / "jupyter-book", "build", ".", "-n", "-W", "--keep-going")
    print(f"book written to {ROOT / '_build' / 'html' / 'index.html'}")


def test(args: list[str]) -> None:
    ensure_env()
    env_args = ["-p", "no:cacheprovider"] if os.environ.get("CI") else []
    _run(PY, "-m", "pytest", *env_args, *args)
    if not args:
        vary([])


# ---------------------------------------------------------------------------------------------------
# vary: a chapter's outputs must not rest on the machine. nbval compares every output with the committed
# one, so passing it twice, under a plain environment and under one whose thread count and floating-point
# kernels differ, shows that no output hangs on a float tie, a thread count or a BLAS kernel (issue 33)

# chapters computed live with linear algebra, as many as `test`'s 20-minute budget on 2 cores allows (the pass
# runs on one thread: under a minute for these two): lower bounds (a pseudo-inverse, training, fits: every kind
# of kernel) and theory (random float32 weights and their scores). Constructions (four minutes more) and the
# data chapters are left out for time; tests/README.md says when to run `python3 tasks.py vary` on them
VARY_CHAPTERS = ("book/lower_bounds.ipynb", "book/theory.ipynb")


def variant_env(env: dict[str, str] | None = None, machine: str | None = None, cores: int | None = None) -> dict[str, str]:
    """``env`` (default: this process's) changed so that floating-point results take other paths than a plain run.

    Threads: one where a plain run gets several, else two (OpenMP, OpenBLAS, MKL). Kernels, each through its
    library's own switch: torch's ATen loops without SIMD (``ATEN_CPU_CAPABILITY=default`` instead of AVX2 or
    AVX-512); on x86-64 also numpy's baseline loops (``NPY_ENABLE_CPU_FEATURES=X86_V2``: no AVX2/AVX-512
    log, exp, power), OpenBLAS's generic kernels (``OPENBLAS_CORETYPE=Prescott``, where a plain run picks the
    CPU's: Haswell, Zen, SkylakeX, ...) and MKL's compatible code path (``MKL_CBWR=COMPATIBLE``, torch's matmuls).
    """
    env = dict(os.environ if env is None else env)
    machine = (machine or platform.machine()).lower()
    plain = int(env.get("OMP_NUM_THREADS") or cores or os.cpu_count() or 1)
    threads = "1" if plain > 1 else "2"
    env.update(OMP_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads, MKL_NUM_THREADS=threads,
               ATEN_CPU_CAPABILITY="default")
    if machine in ("x86_64", "amd64"):
        env.update(NPY_ENABLE_CPU_FEATURES="X86_V2", OPENBLAS_CORETYPE="Prescott", MKL_CBWR="COMPATIBLE")
    return env


VARIED = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "ATEN_CPU_CAPABILITY",
          "NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "MKL_CBWR")


def vary(notebooks: list[str]) -> None:
    """nbval on ``notebooks`` (default :data:`VARY_CHAPTERS`) under :func:`variant_env`: fails on any output that
    differs from the committed one, i.e. from what a plain run on the machine that made them gives."""
    ensure_env()
    env = variant_env()
    said = " ".join(f"{k}={env[k]}" for k in VARIED if k in env)
    print(f"+ nbval under another thread count and other kernels: {said}", flush=True)
    env_args = ["-p", "no:cacheprovider"] if os.environ.get("CI") else []
    cmd = [str(PY), "-m", "pytest", *env_args, *(notebooks or VARY_CHAPTERS)]
    print("+", " ".join(cmd), flush=True)
    if subprocess.run(cmd, cwd=ROOT, env=env).returncode:
        print(f"vary: a chapter's output changed with the thread count or the floating-point kernels ({said}); "
              "it rests on the machine, not on the code: see tests/README.md", flush=True)
        raise subprocess.CalledProcessError(1, cmd)


def execute(notebooks: list[str]) -> None:
    """Execute chapters in place with their default parameters, so the committed outputs are current, and stamp
    each with the digest of its inputs (:func:`execute_recorded`)."""
    ensure_env()
    _run(PY, __file__, "_execute", *(notebooks or [str(p.relative_to(ROOT)) for p in chapters()]))


# ---------------------------------------------------------------------------------------------------
# notebooks as JSON (this file runs on a bare Python: no nbformat), written the way nbformat writes them


def read_nb(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def write_nb(nb: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def chapters(root: Path = ROOT) -> list[Path]:
    """The book's chapters: every notebook in book/."""
    return sorted((root / "book").glob("*.ipynb"))


# ---------------------------------------------------------------------------------------------------
# tag: the install cell first, `hide-input` on every code cell (idempotent)

INSTALL_SNIPPET = ROOT / "book" / "_install_cell.py"
INSTALL_MARKER = "# rgr: install cell"
HIDE = "hide-input"
INSTALL_TAGS = ["remove-cell"]  # plumbing: runs everywhere, never shown on the site


def repository_url(root: Path = ROOT) -> str:
    """``repository.url`` of _config.yml (the one place that names the public repository)."""
    text = (root / "_config.yml").read_text(encoding="utf-8")
    block = re.search(r"^repository:\s*\n((?:[ \t]+.*\n?)*)", text, re.M)
    m = block and re.search(r"^\s+url:\s*[\"']?([^\"'#\s]*)", block.group(1), re.M)
    return m.group(1) if m else ""


def bundle_name(root: Path = ROOT) -> str:
    """The source bundle's file name, ``rgr-book-<version>.zip`` (written into the site by book/_ext/rgr_site.py)."""
    m = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', (root / "rgr" / "__init__.py").read_text(), re.M)
    if not m:
        raise ValueError("rgr/__init__.py defines no __version__")
    return f"rgr-book-{m.group(1)}.zip"


def install_cell_source(url: str, snippet: Path = INSTALL_SNIPPET, bundle: str | None = None) -> str:
    text = snippet.read_text(encoding="utf-8").rstrip("\n")
    if not text.startswith(INSTALL_MARKER):
        raise ValueError(f"{snippet} must start with {INSTALL_MARKER!r}")
    return text.replace("{repository_url}", url).replace("{bundle}", bundle or bundle_name())


def tag_notebook(nb: dict, install_source: str) -> bool:
    """Put the install cell first among the code cells and tag every other code cell ``hide-input``.

    Keeps every other tag (``parameters`` among them); an existing install cell is replaced in place
    of the first code cell, so rerunning changes nothing. Returns whether ``nb`` changed.
    """
    before = json.dumps(nb, sort_keys=True)
    cells = [c for c in nb["cells"] if not (c["cell_type"] == "code" and cell_source(c).startswith(INSTALL_MARKER))]
    for c in cells:
        if c["cell_type"] == "code":
            tags = c.setdefault("metadata", {}).setdefault("tags", [])
            if HIDE not in tags and not {"remove-cell", "remove-input"} & set(tags):
                tags.append(HIDE)
    old = next((c for c in nb["cells"] if c["cell_type"] == "code" and cell_source(c).startswith(INSTALL_MARKER)), None)
    install = {
        "cell_type": "code",
        "execution_count": old.get("execution_count") if old else None,
        "id": "rgr-install",
        "metadata": {"tags": list(INSTALL_TAGS)},
        "outputs": old.get("outputs", []) if old else [],
        "source": install_source.splitlines(keepends=True),
    }
    if nb.get("nbformat_minor", 0) < 5:
        del install["id"]
    first_code = next((i for i, c in enumerate(cells) if c["cell_type"] == "code"), len(cells))
    cells.insert(first_code, install)
    nb["cells"] = cells
    return json.dumps(nb, sort_keys=True) != before


def tag(paths: list[str]) -> None:
    source = install_cell_source(repository_url())
    for p in [Path(x) for x in paths] or chapters():
        nb = read_nb(p)
        if tag_notebook(nb, source):
            write_nb(nb, p)
            print("tagged", p)


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
# that import it, not the theory chapter. The closure is what Python loaded, so it is exact, but wide for the
# data chapters: rgr.catalog imports every experiment's module, so they import about 60 of rgr's 110 modules.
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
            if (mode is None and not flags & (_rgr_os.O_WRONLY | _rgr_os.O_RDWR)) or (mode and not set(mode) & set("wax+")):
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
print(_rgr_json.dumps({"files": sorted(_rgr_seen), "folders": sorted(_rgr_listed), "path": [_rgr_os.path.abspath(x or ".") for x in _rgr_sys.path], "modules": {
    n: m.__file__ for n, m in list(_rgr_sys.modules.items()) if isinstance(getattr(m, "__file__", None), str)}}))
"""


def _code_of(nb: dict) -> list[str]:
    """The chapter's code cells, but the install cell (it does nothing in a checkout)."""
    return [cell_source(c) for c in nb["cells"] if c["cell_type"] == "code" and not cell_source(c).startswith(INSTALL_MARKER)]


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
        h.update(b"folder\0" + d.encode() + b"\0" + "\0".join(_listing(p) if p.is_dir() else ["\0missing"]).encode() + b"\0")
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
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(nb_path.parent)}}).execute()
    report = nb.cells.pop()
    nb.cells.pop(0)
    _renumber(nb, 1)
    text = "".join(o.get("text", "") for o in report.outputs if o.get("name") == "stdout")
    inputs = chapter_inputs(json.loads(text.strip().splitlines()[-1]), nb_path, root)
    plain = json.loads(nbformat.writes(nb))
    stamp(plain, inputs, root)
    write_nb(plain, nb_path)
    return inputs


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


def _execute(args: list[str]) -> None:
    paths = [Path(a).resolve() for a in args]
    for i, p in enumerate(paths, 1):
        print(f"[{i}/{len(paths)}] executing {p.relative_to(ROOT)}", flush=True)
        inputs = execute_recorded(p)
        print(f"  stamped: {len(inputs['files'])} files, {len(inputs['folders'])} folders", flush=True)


def _fresh(args: list[str]) -> None:
    """For ``book`` and ``pdf``: :func:`refresh` on every chapter (``--committed``: execute nothing)."""
    refresh(chapters(), ROOT, run="--committed" not in args)


def fresh(args: list[str]) -> None:
    """``python3 tasks.py fresh``: list the chapters whose committed outputs are not current; exit 1 if any."""
    stale = stale_chapters([Path(a) for a in args] or chapters())
    for p, why in stale.items():
        print(f"{p}: {why}: python3 tasks.py execute {p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}")
    if stale:
        raise SystemExit(1)
    print("every chapter's committed outputs are current")


# ---------------------------------------------------------------------------------------------------
# pdf: the whole book as one PDF, through the HTML route (Jupyter Book's single-page build, printed by headless
# Chromium with the site's print stylesheet, book/_static/rgr-print.css); no TeX needed

PDF = ROOT / "_build" / "pdf" / "rgr-book.pdf"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--no-pdf-header-footer", "--run-all-compositor-stages-before-draw", "--virtual-time-budget=120000")


def print_page(single: Path) -> Path:
    """The single-page build's one page, moved beside its _static/ and _images/ (Jupyter Book writes it as
    book/intro.html but links its assets from the root) and with every <details> open but the folded code's."""
    html = (single / "book" / "intro.html").read_text(encoding="utf-8")
    html = re.sub(r'<details(?![^>]*above-input)([^>]*)>', r"<details open\1>", html)
    page = single / "print.html"
    page.write_text(html, encoding="utf-8")
    return page


def pdf(args: list[str], out: Path = PDF) -> Path:
    """Build the whole book as one PDF at ``out`` (default _build/pdf/rgr-book.pdf); needs a Chromium. Stale
    chapters are re-executed first, as for ``book`` (``--committed``: not)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from site_check import find_chromium

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("pdf: no Chromium found (Debian: apt-get install chromium; or set CHROMIUM=/path/to/it)")
    ensure_env()
    _run(PY, __file__, "_fresh", *args)
    single = ROOT / "_build" / "singlehtml"
    _run(BIN / "jupyter-book", "build", ".", "--builder", "singlehtml", "-n", "-W", "--keep-going")
    out.parent.mkdir(parents=True, exist_ok=True)
    import tempfile

    with tempfile.TemporaryDirectory() as profile:
        _run(chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--print-to-pdf={out}",
             print_page(single).as_uri())
    if not out.exists() or out.stat().st_size == 0:
        raise SystemExit(f"pdf: Chromium wrote no PDF at {out}")
    print(f"pdf written to {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return out


def check_site(args: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from site_check import main as site_main

    raise SystemExit(site_main(args))


COMMANDS = {
    "book": book,
    "test": test,
    "vary": vary,
    "execute": execute,
    "tag": tag,
    "check-site": check_site,
    "fresh": fresh,
    "pdf": pdf,
    "_execute": _execute,
    "_fresh": _fresh,
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    try:
        COMMANDS[argv[0]](argv[1:])
    except subprocess.CalledProcessError as e:
        return e.returncode or 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
