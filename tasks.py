#!/usr/bin/env python3
"""The project's two entry points, runnable with nothing but Python 3.11 and pip.

    python3 tasks.py book   # create .venv, install, execute the chapters, render _build/html
    python3 tasks.py test   # create .venv, install, run the unit/property tests and nbval, then `vary`
    python3 tasks.py vary [book/x.ipynb ...]         # nbval again, other thread count and floating-point kernels

    python3 tasks.py execute book/theory.ipynb ...   # re-execute chapters in place (commit the outputs)
    python3 tasks.py tag [book/x.ipynb ...]          # install cell first, `hide-input` on code cells
    python3 tasks.py check-site [page.html ...]      # render the built site in headless Chromium

``book`` re-executes every chapter whose inputs changed since its cached execution: its code, the
``rgr`` package, or a data/ table it reads (see :func:`chapter_inputs`), never showing a stale figure.

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


def book() -> None:
    ensure_env()
    _run(PY, __file__, "_invalidate")  # jupyter-cache keys on code only: drop records of changed inputs
    try:
        _run(BIN / "jupyter-book", "build", ".", "-n", "-W", "--keep-going")
    finally:
        _run(PY, __file__, "_stamp")  # remember the inputs of every record that matches the code now
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
    """Execute chapters in place with their default parameters, so the committed outputs are current."""
    ensure_env()
    code = (
        "import sys, nbformat, nbclient, pathlib\n"
        "for p in map(pathlib.Path, sys.argv[1:]):\n"
        "    nb = nbformat.read(p, as_version=4)\n"
        "    nbclient.NotebookClient(nb, timeout=1800, kernel_name='python3',\n"
        "        resources={'metadata': {'path': str(p.parent)}}).execute()\n"
        "    nbformat.write(nb, p)\n"
        "    print('executed', p)\n"
    )
    _run(PY, "-c", code, *(notebooks or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "book").glob("*.ipynb"))))


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


def install_cell_source(url: str, snippet: Path = INSTALL_SNIPPET) -> str:
    text = snippet.read_text(encoding="utf-8").rstrip("\n")
    if not text.startswith(INSTALL_MARKER):
        raise ValueError(f"{snippet} must start with {INSTALL_MARKER!r}")
    return text.replace("{repository_url}", url)


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
# fresh pages: a chapter's inputs are its code (jupyter-cache's key), rgr/**/*.py and the data/ files
# it reads; `book` drops the cached execution of every chapter whose inputs changed

STAMPS = "rgr-inputs.json"  # in the jupyter cache folder: {notebook: {"hashkey": ..., "inputs": ...}}


def _cache_dir(root: Path) -> Path:
    return root / "_build" / ".jupyter_cache"


def data_reads(nb: dict, data: Path) -> list[Path]:
    """The files of ``data`` a chapter reads: those named in its code, as a string literal of the file's
    name or stem (``"base"``, ``"constructions.csv"``), with their companions (``gpt2`` ->
    ``gpt2_items.npz``); ``metadata.rgr.reads`` (a list of file names) adds to them."""
    code = "\n".join(cell_source(c) for c in nb["cells"] if c["cell_type"] == "code")
    literals = set(re.findall(r"[\"']([A-Za-z0-9_.\-]+)[\"']", code))
    declared = set(nb.get("metadata", {}).get("rgr", {}).get("reads", []))
    stems = {x.rsplit(".", 1)[0] for x in literals}
    out = []
    for f in sorted(data.iterdir()) if data.is_dir() else []:
        if not f.is_file() or f.suffix == ".md":
            continue
        if f.name in declared or f.name in literals or f.stem in stems or any(f.stem.startswith(s + "_") for s in stems):
            out.append(f)
    missing = declared - {f.name for f in out}
    if missing:
        raise FileNotFoundError(f"metadata.rgr.reads names files not in {data}: {sorted(missing)}")
    return out


def _digest(files: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def chapter_inputs(nb_path: Path, root: Path = ROOT) -> str:
    """A digest of what a chapter's outputs depend on besides its code: rgr/**/*.py and its data/ reads."""
    package = sorted(p for p in (root / "rgr").rglob("*.py") if "__pycache__" not in p.parts)
    return _digest(package + data_reads(read_nb(nb_path), root / "data"), root)


def invalidate_stale(notebooks: list[Path], root: Path = ROOT, cache_dir: Path | None = None) -> list[Path]:
    """Drop the cached execution of every chapter whose inputs changed (or are unknown); returns them.

    Needs jupyter-cache (run inside the book's environment)."""
    from jupyter_cache import get_cache

    cache_dir = cache_dir or _cache_dir(root)
    if not cache_dir.exists():
        return []
    cache = get_cache(str(cache_dir))
    stamps = json.loads((cache_dir / STAMPS).read_text()) if (cache_dir / STAMPS).exists() else {}
    stale = []
    for nb_path in notebooks:
        import nbformat

        try:
            record = cache.match_cache_notebook(nbformat.read(nb_path, as_version=4))
        except KeyError:
            continue  # not cached: it executes anyway
        stamp = stamps.get(str(nb_path.resolve()), {})
        if stamp.get("hashkey") != record.hashkey or stamp.get("inputs") != chapter_inputs(nb_path, root):
            cache.remove_cache(record.pk)
            stale.append(nb_path)
    return stale


def stamp_cached(notebooks: list[Path], root: Path = ROOT, cache_dir: Path | None = None) -> None:
    """Record the current inputs of every chapter whose cached execution matches its code now."""
    import nbformat
    from jupyter_cache import get_cache

    cache_dir = cache_dir or _cache_dir(root)
    if not cache_dir.exists():
        return
    cache = get_cache(str(cache_dir))
    path = cache_dir / STAMPS
    stamps = json.loads(path.read_text()) if path.exists() else {}
    for nb_path in notebooks:
        try:
            record = cache.match_cache_notebook(nbformat.read(nb_path, as_version=4))
        except KeyError:
            continue
        stamps[str(nb_path.resolve())] = {"hashkey": record.hashkey, "inputs": chapter_inputs(nb_path, root)}
    path.write_text(json.dumps(stamps, indent=1, sort_keys=True))


def _invalidate(args: list[str]) -> None:
    for p in invalidate_stale(chapters()):
        print(f"inputs changed, re-executing: {p.relative_to(ROOT)}", flush=True)


def _stamp(args: list[str]) -> None:
    stamp_cached(chapters())


def check_site(args: list[str]) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from site_check import main as site_main

    raise SystemExit(site_main(args))


COMMANDS = {
    "book": lambda a: book(),
    "test": test,
    "vary": vary,
    "execute": execute,
    "tag": tag,
    "check-site": check_site,
    "_invalidate": _invalidate,
    "_stamp": _stamp,
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
