#!/usr/bin/env python3
"""The project's two entry points, runnable with nothing but Python 3.11 and pip.

    python3 tasks.py book   # create .venv, install, re-execute stale chapters, render _build/html
    python3 tasks.py test   # create .venv, install, run the unit/property tests and nbval, then `vary`
    python3 tasks.py vary [book/x.ipynb ...]         # nbval again, other thread count and floating-point kernels

    python3 tasks.py execute book/theory.ipynb ...   # re-execute chapters in place (commit the outputs)
    python3 tasks.py tag [book/x.ipynb ...]          # install cell first, `hide-input` on code cells, then `pair`
    python3 tasks.py pair [book/x.ipynb ...]         # each chapter's reviewable text: book/_text/<name>.md
    python3 tasks.py check-site [page.html ...]      # render the built site in headless Chromium

    python3 tasks.py fresh [book/x.ipynb ...]       # which chapters' committed outputs are stale (exit 1 if any)
    python3 tasks.py pdf                             # the whole book as one PDF: _build/pdf/rgr-book.pdf

The committed outputs are the cache: ``execute`` stores in each chapter a digest of what it read (its code, the
``rgr`` modules it imported, the data/ tables it opened; :func:`chapter_inputs`), and ``book`` and ``pdf``
re-execute only the chapters whose digest differs now, rendering every other one from its committed outputs
(``--committed``: execute nothing, render stale chapters as they are and name them). A fresh clone with no stale
chapter builds in about 20 s here (2 busy cores; README, "Build times").

Every command runs on .venv's Python: run with any Python 3.11, tasks.py creates .venv where it is missing (its pinned
requirements installed by uv, which pip installs into it first; pip itself where uv fails: :func:`_install`) and
re-runs itself there (:func:`main`).

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
import shutil
import signal
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from rgr_fresh import (  # noqa: E402, F401  (chapters as JSON, fresh pages: book/_ext/rgr_fresh.py; re-exported)
    INSTALL_MARKER,
    NotebookError,
    cell_source,
    chapter_inputs,
    chapters,
    execute_recorded,
    inputs_digest,
    read_nb,
    refresh,
    stale_chapters,
    staleness,
    strip_timings,
    write_nb,
    write_whole,
)

VENV = Path(os.environ.get("RGR_VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"


class TaskError(Exception):
    """A failure a user can fix: :func:`main` prints it in one line, ``tasks.py <command>: <message>``, exit 2."""


STOP_SIGNAL = getattr(signal, "SIGUSR1", signal.SIGTERM)  # how a parent stops a child executing notebooks


class Interrupted(Exception):
    """Ctrl-C while a child ran: the child said what it left (one line); the parent exits 130 quietly."""


def _run(*cmd: str | Path, env: dict[str, str] | None = None, own_group: bool = False) -> int:
    """Run ``cmd`` in the repository; a CalledProcessError on failure, :class:`Interrupted` on Ctrl-C.

    ``own_group`` (a child that executes notebooks): the child runs in its own process group, so Ctrl-C reaches
    only this process, which then stops the child with SIGUSR1 (it says what it left, :func:`_stop_quietly`); the
    child also gets SIGUSR1 if this process dies (Linux), so a killed ``tasks.py execute`` leaves no child
    behind that would write the notebook later. Otherwise the child, in the same group, gets Ctrl-C itself."""
    print("+", " ".join(map(str, cmd)), flush=True)
    extra = (dict(start_new_session=True, preexec_fn=_die_with_parent) if own_group and os.name == "posix"
             else {})
    proc = subprocess.Popen([str(c) for c in cmd], cwd=ROOT, env=env, **extra)
    try:
        rc = proc.wait()
    except KeyboardInterrupt:
        if own_group:
            proc.send_signal(STOP_SIGNAL)
        try:
            proc.wait(timeout=60)
        except (subprocess.TimeoutExpired, KeyboardInterrupt):
            proc.kill()
            proc.wait()
        raise Interrupted from None
    if rc:
        raise subprocess.CalledProcessError(rc, [str(c) for c in cmd])
    return rc


def _die_with_parent() -> None:
    """In the child, before it runs: :data:`STOP_SIGNAL` when the parent dies (Linux's PR_SET_PDEATHSIG)."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, int(STOP_SIGNAL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _stop_quietly(say: Callable[[], str]) -> None:
    """In a child that executes notebooks: on :data:`STOP_SIGNAL` (Ctrl-C in the parent), print ``say()`` in one
    line and exit 130 at once (its kernel, orphaned, exits on its own). Notebooks are written whole at the end of
    their execution, so the one running is unchanged. (Not SIGINT or SIGTERM: nbclient takes those over and
    shuts its kernel down with two tracebacks.)"""

    def stop(signum, frame):
        print(say(), file=sys.stderr, flush=True)
        os._exit(130)

    signal.signal(STOP_SIGNAL, stop)


def notebook_args(args: list[str], what: str = "chapter") -> list[Path]:
    """The notebooks named on the command line, each checked: it exists, is a notebook, holds valid JSON
    (:class:`TaskError` naming the first that does not)."""
    paths = [Path(a) for a in args]
    for p in paths:
        if not p.exists():
            raise TaskError(f"no such {what}: {p}")
        if not p.is_file() or p.suffix != ".ipynb":
            raise TaskError(f"{p} is not a notebook (book/<chapter>.ipynb)")
        read_nb(p)  # NotebookError naming it when it is not valid JSON
    return paths


# the installer of the environment: uv (from PyPI, installed into the venv by its pip) resolves and installs the
# pinned requirements in parallel, several times faster than pip on a first run; pip is the fallback when uv cannot
# be installed or fails. The pins are pyproject.toml's either way (exact versions: the same environment).
UV_PIN = "uv==0.13.8"


def uv_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with pip's package sources given to uv too (``PIP_FIND_LINKS``,
    ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL`` as their ``UV_`` names, where those are not set): both installers read
    the same places."""
    env = dict(os.environ if env is None else env)
    for pip_name, uv_name in (("PIP_FIND_LINKS", "UV_FIND_LINKS"), ("PIP_INDEX_URL", "UV_INDEX_URL"),
                              ("PIP_EXTRA_INDEX_URL", "UV_EXTRA_INDEX_URL")):
        if env.get(pip_name) and not env.get(uv_name):
            env[uv_name] = env[pip_name]
    return env


def _install(editable: str = ".[book,test]") -> str:
    """Install the package and its pinned extras into :data:`VENV`: with uv where it can be had, else pip; returns
    which one installed."""
    if os.environ.get("RGR_INSTALLER", "uv") == "uv":
        uv = BIN / ("uv.exe" if os.name == "nt" else "uv")
        try:
            if not uv.exists():
                _run(PY, "-m", "pip", "install", "--quiet", UV_PIN)
            cmd = [str(uv), "pip", "install", "--quiet", "--python", str(PY), "-e", editable]
            print("+", " ".join(cmd), flush=True)
            subprocess.run(cmd, cwd=ROOT, check=True, env=uv_env())
            return "uv"
        except (subprocess.CalledProcessError, OSError) as e:
            print(f"note: uv could not install the environment ({e}); falling back to pip", flush=True)
    _run(PY, "-m", "pip", "install", "--quiet", "-e", editable)
    return "pip"


def ensure_env() -> None:
    """Create .venv and install the package with its book and test extras (pinned; :func:`_install`)."""
    if sys.version_info[:2] != (3, 11):
        print(f"note: the pins are tested on Python 3.11; this is {sys.version.split()[0]}", flush=True)
    stamp = VENV / ".rgr-installed"
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == want:
        return
    if not PY.exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    _install()
    stamp.write_text(want)


def in_venv() -> bool:
    """Whether this process runs on :data:`VENV`'s Python (every command does: :func:`main` re-runs itself there)."""
    return Path(sys.prefix).resolve() == VENV.resolve()


def book(args: list[str]) -> None:
    """Re-execute the chapters whose inputs changed (:func:`stale_chapters`), then render every chapter from its
    outputs (_config.yml: execution off); the site gets the source bundle (book/_ext/rgr_site.py). With
    ``--committed``, nothing executes: stale chapters are rendered as committed, and named."""
    ensure_env()
    _run(PY, __file__, "_fresh", *args, own_group=True)
    _run(BIN / "jupyter-book", "build", ".", "-n", "-W", "--keep-going")
    print(f"book written to {ROOT / '_build' / 'html' / 'index.html'}")


# the whole suite runs on up to this many cores (pytest-xdist). `--dist loadscope` keeps a file's tests on one
# worker, in order: a notebook's cells (nbval runs them one after the other in one kernel) and a module's tests
# (its module fixtures build the site or the PDF once). (`loadgroup` did not group under pytest 9: cells of one
# notebook ran on two workers, each missing the other's names.)
TEST_WORKERS = 4
SLOWEST_SHOWN = 25  # the whole suite names its slowest tests, so a CI log shows where the 20-minute budget goes


def test(args: list[str]) -> None:
    ensure_env()
    env_args = ["-p", "no:cacheprovider"] if os.environ.get("CI") else []
    spread = [] if args else ["-n", "auto", "--maxprocesses", str(TEST_WORKERS), "--dist", "loadscope",
                              f"--durations={SLOWEST_SHOWN}"]
    _run(PY, "-m", "pytest", *env_args, *spread, *args)
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


def variant_env(env: dict[str, str] | None = None, machine: str | None = None,
                cores: int | None = None) -> dict[str, str]:
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
    notebook_args(notebooks)
    ensure_env()
    env = variant_env()
    said = " ".join(f"{k}={env[k]}" for k in VARIED if k in env)
    print(f"+ nbval under another thread count and other kernels: {said}", flush=True)
    env_args = ["-p", "no:cacheprovider"] if os.environ.get("CI") else []
    cmd = [str(PY), "-m", "pytest", *env_args, *(notebooks or VARY_CHAPTERS)]
    try:
        _run(*cmd, env=env)
    except subprocess.CalledProcessError as e:
        if e.returncode == 1:  # pytest: some test failed, i.e. an output differed from the committed one
            print(f"vary: a chapter's output changed with the thread count or the floating-point kernels ({said}); "
                  "it rests on the machine, not on the code: see tests/README.md", flush=True)
        else:  # usage error, no tests collected, internal error: nothing was compared
            print(f"vary: pytest stopped (exit {e.returncode}) before comparing the outputs; see above", flush=True)
        raise


def execute(notebooks: list[str]) -> None:
    """Execute chapters in place with their default parameters, so the committed outputs are current, and stamp
    each with the digest of its inputs (:func:`execute_recorded`)."""
    notebook_args(notebooks)
    ensure_env()
    _run(PY, __file__, "_execute", *(notebooks or [str(p.relative_to(ROOT)) for p in chapters()]), own_group=True)


# ---------------------------------------------------------------------------------------------------
# tag: the install cell first, `hide-input` on every code cell (idempotent)

INSTALL_SNIPPET = ROOT / "book" / "_install_cell.py"
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
    strip_timings(nb)
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
        "metadata": {**(old.get("metadata", {}) if old else {}), "tags": list(INSTALL_TAGS)},
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
    for p in notebook_args(paths) or chapters():
        nb = read_nb(p)
        if tag_notebook(nb, source):
            write_nb(nb, p)
            print("tagged", p)
    pair(paths)


# ---------------------------------------------------------------------------------------------------
# pair: each chapter's reviewable text. The notebook is the source that is executed; book/_text/<name>.md is its
# code and Markdown cells (with their tags) as MyST Markdown, written by jupytext, without outputs or metadata, so
# that a diff of a chapter reads as text. Not next to the notebook: Jupyter Book would see two sources for one
# _toc.yml entry (_config.yml excludes book/_text). tests/system/test_chapter_text.py fails on a missing or
# outdated text.

TEXT_FORMAT = "md:myst"
TEXT_FILTERS = {"notebook_metadata_filter": "-all", "cell_metadata_filter": "tags,-all"}


def text_path(chapter: Path) -> Path:
    """Where the reviewable text of ``chapter`` (book/<name>.ipynb) lives: book/_text/<name>.md."""
    return chapter.parent / "_text" / f"{chapter.stem}.md"


def chapter_text(chapter: Path) -> str:
    """The reviewable text of ``chapter``: jupytext's MyST rendering of its cells (see the comment above)."""
    import jupytext  # the book extra's; tasks.py itself starts on a bare Python
    import nbformat

    nb = nbformat.reads(chapter.read_text(encoding="utf-8"), as_version=4)
    nb.metadata = {"jupytext": dict(TEXT_FILTERS)}
    return jupytext.writes(nb, fmt=TEXT_FORMAT)


def pair(paths: list[str]) -> None:
    """Write the reviewable text of the chapters named (default: every chapter, and remove the texts of chapters
    that are gone); a text that is current is left alone."""
    named = notebook_args(paths)
    for p in named or chapters():
        text, out = chapter_text(p), text_path(p)
        if not out.exists() or out.read_text(encoding="utf-8") != text:
            out.parent.mkdir(exist_ok=True)
            write_whole(out, text)
            print("paired", _shown(out), flush=True)
    if not named:
        for orphan in sorted((ROOT / "book" / "_text").glob("*.md")):
            if not (ROOT / "book" / f"{orphan.stem}.ipynb").exists():
                orphan.unlink()
                print("removed", _shown(orphan), "(its chapter is gone)", flush=True)


def _execute(args: list[str]) -> None:
    paths = [Path(a).resolve() for a in args]
    running = paths[:1]
    _stop_quietly(lambda: f"interrupted; {_shown(running[0])} unchanged" if running else "interrupted")
    for i, p in enumerate(paths, 1):
        running[:] = [p]
        print(f"[{i}/{len(paths)}] executing {_shown(p)}", flush=True)
        inputs = execute_recorded(p)
        print(f"  stamped: {len(inputs['files'])} files, {len(inputs['folders'])} folders", flush=True)
        pair([str(p)])  # its text, in case the notebook was edited since `tag`


def _shown(p: Path) -> Path:
    return p.relative_to(ROOT) if p.is_relative_to(ROOT) else p


def _fresh(args: list[str]) -> None:
    """For ``book`` and ``pdf``: :func:`refresh` on every chapter (``--committed``: execute nothing)."""
    _stop_quietly(lambda: "interrupted; the chapter being executed is left as committed")
    refresh(chapters(), ROOT, run="--committed" not in args)


def fresh(args: list[str]) -> None:
    """``python3 tasks.py fresh``: list the chapters whose committed outputs are not current; exit 1 if any."""
    stale = stale_chapters(notebook_args(args) or chapters())
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
                  "--no-pdf-header-footer", "--generate-pdf-document-outline",
                  "--run-all-compositor-stages-before-draw",
                  "--virtual-time-budget=120000")


def print_page(single: Path, when: str | None = None) -> Path:
    """The single-page build's one page, moved beside its _static/ and _images/ (Jupyter Book writes it as
    book/intro.html but links its assets from the root) and made a document (:func:`as_document`)."""
    html = (single / "book" / "intro.html").read_text(encoding="utf-8")
    page = single / "print.html"
    page.write_text(as_document(html, when), encoding="utf-8")
    return page


def chapter_titles(html: str) -> list[tuple[str, str]]:
    """(section id, title) of every chapter of the single-page build, in order: each chapter is the section after
    a ``<span id="document-...">`` marker (its heading an h2 there), the intro the first section (an h1)."""
    out = []
    start = r'(?:<span id="document-[^"]*"></span>\s*|<article[^>]*>\s*)'
    head = r'<section[^>]*id="([^"]+)"[^>]*>\s*<h([12])>(.*?)(?:<a class="headerlink".*?)?</h\2>'
    for sid, _, title in re.findall(start + head, html, re.S):
        out.append((sid, re.sub(r"<[^>]+>", "", title).strip()))
    return out


def _endnotes(html: str) -> str:
    """The verdict table's folded "Basis and why" rows moved out of the table into endnotes after it, each under its
    claim's name: the table stays compact on paper."""
    notes = []

    def take(m: re.Match) -> str:
        notes.append(m.group(1))
        return ""

    def table(m: re.Match) -> str:
        notes.clear()
        body = re.sub(r'<tr class="rgr-vdetail"><td colspan="\d+">(.*?)</td></tr>', take, m.group(0), flags=re.S)
        names = re.findall(r'<tr[^>]*id="verdict-[^"]+"[^>]*>\s*<td[^>]*>(.*?)</td>', m.group(0), flags=re.S)
        items = "".join(f"<li><p>{name}</p>{note}</li>" for name, note in zip(names, notes))
        return body + (f'<section class="rgr-endnotes"><h3>The verdict table: basis and why, row by row</h3>'
                       f"<ol>{items}</ol></section>" if notes else "")

    return re.sub(r'<table class="rgr-verdicts".*?</table>', table, html, flags=re.S)


def as_document(html: str, when: str | None = None) -> str:
    """The single page as a document to print: a title page (title, version, commit, date), a contents page (every
    chapter, linked), every <details> open but the folded code's, the verdict table's details as endnotes
    (:func:`_endnotes`); what is only for the screen is hidden by the print stylesheet (book/_static/rgr-print.css:
    ``rgr-screen-only``, the picker's <select>)."""
    from datetime import datetime, timezone

    from rgr_site import rgr_version, short_commit

    html = re.sub(r'<details(?![^>]*above-input)([^>]*)>', r"<details open\1>", html)
    html = _endnotes(html)
    book = "A Capacity-Based Rationale for Multi-Head Attention — the reproducible book"
    when = when or datetime.now(timezone.utc).strftime("%Y-%m-%d")
    chapters = chapter_titles(html)
    contents = "".join(f'<li><a href="#{sid}">{t}</a></li>' for sid, t in chapters)
    front = (f'<section class="rgr-title-page"><h1 class="rgr-title">{book}</h1>'
             f'<p class="rgr-title-meta">Version {rgr_version()} · commit {short_commit()} · printed {when}</p>'
             f'<p class="rgr-title-meta">After M. Adler, <i>A Capacity-Based Rationale for Multi-Head Attention</i> '
             f'(arXiv:2509.22840). The site, its source bundle and every chapter as a notebook: see the introduction.'
             f'</p></section><nav class="rgr-contents"><h2>Contents</h2><ol>{contents}</ol></nav>')
    return re.sub(r'(<article class="bd-article"[^>]*>)', lambda m: m.group(1) + front, html, count=1)


def pdf(args: list[str], out: Path = PDF) -> Path:
    """Build the whole book as one PDF at ``out`` (default _build/pdf/rgr-book.pdf); needs a Chromium. Stale
    chapters are re-executed first, as for ``book`` (``--committed``: not)."""
    sys.path.insert(0, str(ROOT))
    from tests.system.site_check import find_chromium

    chromium = find_chromium()
    if chromium is None:
        raise SystemExit("pdf: no Chromium found (Debian: apt-get install chromium; or set CHROMIUM=/path/to/it)")
    ensure_env()
    _run(PY, __file__, "_fresh", *args, own_group=True)
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
    site = ROOT / "_build" / "html"
    if site.is_dir():  # beside the site, where its download menu and the intro link it
        from rgr_site import pdf_name

        shutil.copy2(out, site / pdf_name())
        print(f"and beside the site: {site / pdf_name()}")
    return out


def check_site(args: list[str]) -> None:
    """Render built pages in headless Chromium (tests/system/site_check.py), in .venv like every command."""
    pages = [a for i, a in enumerate(args) if not a.startswith("--") and (i == 0 or args[i - 1] != "--screenshots")]
    missing = [a for a in pages if not Path(a).is_file()]
    if missing:
        raise TaskError(f"no such page: {missing[0]}; run `python3 tasks.py book` first (pages are in _build/html)")
    sys.path.insert(0, str(ROOT))
    from tests.system.site_check import main as site_main

    raise SystemExit(site_main(args))


COMMANDS = {
    "book": book,
    "test": test,
    "vary": vary,
    "execute": execute,
    "tag": tag,
    "pair": pair,
    "check-site": check_site,
    "fresh": fresh,
    "pdf": pdf,
    "_execute": _execute,
    "_fresh": _fresh,
}


def main(argv: list[str]) -> int:
    """Run a command. Failures a user can fix are one line on stderr (exit 2); Ctrl-C and a closed pipe end
    quietly (tests/README.md, "Failures")."""
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        if argv:
            print(f"tasks.py: unknown command {argv[0]!r}; choose from {', '.join(c for c in COMMANDS if c[0] != '_')}",
                  file=sys.stderr)
        return 2
    name = argv[0]
    if not in_venv():  # every command runs on .venv's Python: create it first, then run there
        try:
            ensure_env()
        except subprocess.CalledProcessError as e:
            return e.returncode or 1
        except KeyboardInterrupt:
            print(f"tasks.py {name}: interrupted", file=sys.stderr)
            return 130
        return subprocess.run([str(PY), __file__, *argv], cwd=ROOT).returncode
    try:
        COMMANDS[name](argv[1:])
    except subprocess.CalledProcessError as e:
        return e.returncode or 1
    except (TaskError, NotebookError) as e:
        print(f"tasks.py {name}: {e}", file=sys.stderr)
        return 2
    except Interrupted:  # the child said what it left
        return 130
    except KeyboardInterrupt:
        print(f"tasks.py {name}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `tasks.py tag | head`: the reader went away; what was written is whole
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
