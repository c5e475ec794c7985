"""Where things are, and how one is replaced (ground; the standard library only).

- :func:`repo_root`, :func:`data_dir`: the repository root and its data/ folder, found from any working directory;
- :func:`replace_whole`: a file replaced whole: written to a temporary file beside the target, then renamed over
  it. A full disk, a kill or an error mid-way leaves the target as it was, never half-written. Standard library
  only, so that tasks.py and the book's extensions (book/_ext/rgr_fresh.py: the chapters' notebooks) use it in a
  bare Python too; the store's tables and seals (:func:`rgr.store.seal.replace_whole`), data/SCHEMA.md
  (:mod:`rgr.schema_doc`) and book/reported.md are written through it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def repo_root(start: Path | None = None) -> Path:
    """The nearest ancestor holding both ``_config.yml`` and ``rgr/`` (the book's root)."""
    here = (start or Path.cwd()).resolve()
    for p in (here, *here.parents):
        if (p / "_config.yml").is_file() and (p / "rgr").is_dir():
            return p
    pkg = Path(__file__).resolve().parent.parent
    if (pkg / "_config.yml").is_file():
        return pkg
    raise FileNotFoundError(f"no repository root (a folder with _config.yml and rgr/) above {here}")


def data_dir(start: Path | None = None) -> Path:
    """The repository's data/ folder: tables the project's own commands produced."""
    return repo_root(start) / "data"


def replace_whole(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``.<name>.<pid>.tmp`` beside it and a rename: whole or not at all.

    The temporary file is opened without following a symbolic link planted at its name (``OSError`` ELOOP);
    a link at ``path`` itself is replaced by the file (a rename never writes through a link). A regular file
    at ``path`` keeps its permission bits. The temporary file is removed on any failure."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as fh:
            try:
                old = os.lstat(path)
                if stat.S_ISREG(old.st_mode):
                    os.fchmod(fd, stat.S_IMODE(old.st_mode))
            except FileNotFoundError:
                pass
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
