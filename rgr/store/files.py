"""A table's files on disk: side files opened without following links, files replaced whole (ground wing; see
:mod:`rgr.store`)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .. import atomic
from .schema import TableError

__all__ = ["open_own", "replace_whole"]

_CREATE = os.O_RDWR | os.O_CREAT
_FLAGS = {"r": os.O_RDONLY, "rb": os.O_RDONLY, "a": _CREATE | os.O_APPEND, "a+": _CREATE | os.O_APPEND,
          "w": _CREATE | os.O_TRUNC, "wb": _CREATE | os.O_TRUNC}


def open_own(path: Path, mode: str):
    """Open a table's side file (a lock, its seal, ``.damaged``, a temporary file) without following a symbolic
    link planted at its name; ``mode``: r, rb (read), a, a+ (create, append), w, wb (create, truncate)."""
    if mode not in _FLAGS:
        raise ValueError(f"mode must be one of {sorted(_FLAGS)}, got {mode!r}")
    try:
        return os.fdopen(os.open(path, _FLAGS[mode] | os.O_NOFOLLOW, 0o644), mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TableError(f"{path}: is a symbolic link; rgr does not follow links at its lock and side files "
                             "(remove it)") from None
        raise


def replace_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename: whole or not at all
    (:func:`rgr.atomic.replace_whole`; a link planted at the temporary name is a :class:`TableError`).

    A symbolic link at ``path`` itself is replaced by the file (a rename never writes through a link)."""
    try:
        atomic.replace_whole(path, data)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TableError(f"{e.filename}: is a symbolic link; rgr does not follow links at its lock and side "
                             "files (remove it)") from None
        raise
