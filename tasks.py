#!/usr/bin/env python3
"""The project's two entry points, runnable with nothing but Python 3.11 and pip.

    python3 tasks.py book   # create .venv, install, execute the chapters, render _build/html
    python3 tasks.py test   # create .venv, install, run the unit/property tests and nbval

    python3 tasks.py execute book/theory.ipynb ...   # re-execute chapters in place (commit the outputs)

Extra arguments after ``test`` go to pytest (e.g. ``python3 tasks.py test -k graphs``).
The virtual environment is reused while pyproject.toml is unchanged.
"""

from __future__ import annotations

import hashlib
import os
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
    _run(BIN / "jupyter-book", "build", ".", "-n", "-W", "--keep-going")
    print(f"book written to {ROOT / '_build' / 'html' / 'index.html'}")


def test(args: list[str]) -> None:
    ensure_env()
    env_args = ["-p", "no:cacheprovider"] if os.environ.get("CI") else []
    _run(PY, "-m", "pytest", *env_args, *args)


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


COMMANDS = {"book": lambda a: book(), "test": test, "execute": execute}


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
