"""A table's files on disk: side files opened without following links, files replaced whole (ground wing; see
:mod:`rgr.store`)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .. import atomic
from .schema import TableError

__all__ = ["NotAFile", "open_own", "replace_whole"]

_CREATE = os.O_RDWR | os.O_CREAT
_FLAGS = {"r": os.O_RDONLY, "rb": os.O_RDONLY, "a": _CREATE | os.O_APPEND, "a+": _CREATE | os.O_APPEND,
          "w": _CREATE | os.O_TRUNC, "wb": _CREATE | os.O_TRUNC}


def open_own(path: Path, mode: str):
    """Open a table's side file (a lock, its seal, ``.damaged``, a temporary file) without following a symbolic
    link planted at its name; ``mode``: r, rb (read), a, a+ (create, append), w, wb (create, truncate).

    Anything at the name that is not a regular file (a folder, a FIFO, a device) is refused at once with a
    :class:`NotAFile` naming it: opened without blocking (a FIFO with no writer would hang every reader), then
    checked with ``fstat``."""
    if mode not in _FLAGS:
        raise ValueError(f"mode must be one of {sorted(_FLAGS)}, got {mode!r}")
    try:
        fd = os.open(path, _FLAGS[mode] | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TableError(f"{path}: is a symbolic link; rgr does not follow links at its lock and side files "
                             "(remove it)") from None
        if e.errno in (errno.EISDIR, errno.ENXIO):
            raise NotAFile(path, "a folder" if e.errno == errno.EISDIR else "a FIFO or socket") from None
        raise
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise NotAFile(path, _kind(kind))
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")


class NotAFile(TableError):
    """Something other than a regular file where rgr expects one of its files (``path``, ``kind``)."""

    def __init__(self, path: Path, kind: str):
        self.path, self.kind = Path(path), kind
        super().__init__(f"{path}: is {kind}, not a file; rgr reads and writes only regular files there (remove it)")


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
