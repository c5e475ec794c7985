"""A table's side files and seal: files opened without following links and replaced whole, and the seal, the rows
and bytes rgr last wrote to a table, recorded beside it (ground wing; see :mod:`rgr.store`).

A table cut at a line boundary (its last lines gone whole: a copy or a download that stopped, a disk that
filled while copying) still parses, since every line left is complete. So the store records, beside each table
it writes, what it wrote: ``<table>.seal`` (``data/base.csv.seal``), one JSON line with the row count, the byte
count, the sha256 of the bytes and short hashes of the first and last rows. Every write of the store
(:func:`rgr.store.write.write_rows`, :func:`rgr.store.write.replace_table`, :func:`rgr.store.write.repair_table`)
renames the table into place, then its new seal.
The loader compares (:func:`compare`):

- the table's bytes are the sealed ones: ``sealed``, nothing to say;
- fewer rows than sealed: ``cut``, refused with one line naming the file, both counts and the fix; the seal's
  hashes of the first and last rows say which loss it is: the end cut off (the first row intact), rows deleted
  (the last row intact), or the table replaced by another (neither);
- no seal (``unsealed``), or more rows than sealed with the sealed bytes intact at the start (``appended``: by a
  writer that does not seal, such as an rgr from before seals), or other bytes (``changed``): read, with an
  :class:`UnsealedTable` warning that says which, until ``python -m rgr repair <table> --seal``
  (:func:`rgr.store.write.repair_table` with ``seal=True``) records the table as it is.

The writer renames the table into place before its seal, and the loader reads the seal before the table, so a reader
racing a write sees at worst a table newer than its seal (a statement), never a cut. A writer killed between the two
renames leaves the old seal beside a table that only gained rows (a merge never removes one): ``appended`` or
``changed``, never ``cut``, until the next write. A repair, which drops lines, writes its seal first: killed between
the two, it leaves the damaged table beside the repaired table's seal, which the loader refuses for its damaged
line; rerun the repair. The seal is a function of the table's bytes alone (no date, no host), so it changes exactly
when the table does: a chapter that reads a table and its seal is not made stale by the seal. What it cannot see: a
cut that removes only rows appended after the seal by a writer that does not seal (they were never recorded). The
seal and its temporary file are opened without following a symbolic link planted at their names.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from .. import paths
from .schema import TableError

# ------------------------------------------------------------------ a table's files on disk: side files opened
# without following links, files replaced whole
_CREATE = os.O_RDWR | os.O_CREAT
_FLAGS = {"r": os.O_RDONLY, "rb": os.O_RDONLY, "a": _CREATE | os.O_APPEND, "a+": _CREATE | os.O_APPEND,
          "w": _CREATE | os.O_TRUNC, "wb": _CREATE | os.O_TRUNC}


def open_own(path: Path, mode: str):
    """Open a table's side file (a lock, its seal, ``.damaged``, a temporary file) without following a symbolic
    link planted at its name; ``mode``: r, rb (read), a, a+ (create, append), w, wb (create, truncate).

    Anything at the name that is not a regular file (a folder, a FIFO, a device) is refused at once with a
    :class:`_NotAFile` naming it: opened without blocking (a FIFO with no writer would hang every reader), then
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
            raise _NotAFile(path, "a folder" if e.errno == errno.EISDIR else "a FIFO or socket") from None
        raise
    try:
        kind = os.fstat(fd).st_mode
        if not stat.S_ISREG(kind):
            raise _NotAFile(path, _kind(kind))
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a socket"
            if stat.S_ISSOCK(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a file")


class _NotAFile(TableError):
    """Something other than a regular file where rgr expects one of its files (``path``, ``kind``)."""

    def __init__(self, path: Path, kind: str):
        self.path, self.kind = Path(path), kind
        super().__init__(f"{path}: is {kind}, not a file; rgr reads and writes only regular files there (remove it)")


def replace_whole(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it and a rename: whole or not at all
    (:func:`rgr.paths.replace_whole`; a link planted at the temporary name is a :class:`TableError`).

    A symbolic link at ``path`` itself is replaced by the file (a rename never writes through a link)."""
    try:
        paths.replace_whole(path, data)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise TableError(f"{e.filename}: is a symbolic link; rgr does not follow links at its lock and side "
                             "files (remove it)") from None
        raise


# ------------------------------------------------------------------ the seal

_SUFFIX = ".seal"
_FORMAT = 1  # the seal's layout; a seal of another format is refused (rewrite it with repair --seal)


class BadSeal(TableError):
    """A seal that is not one this rgr writes (malformed, another format, not a file)."""


class UnsealedTable(UserWarning):
    """A table read without a matching seal: no seal, rows appended after it, or other bytes (not a cut)."""


@dataclass(frozen=True)
class _Seal:
    """What the store wrote to a table: its row count, byte count and the sha256 of its bytes; ``first``, ``last``:
    a short hash of its first and last rows' lines (None in seals written before them), which tell a cut end from
    rows deleted or a table replaced (:func:`compare`)."""

    rows: int
    size: int
    sha256: str
    first: str | None = None
    last: str | None = None

    def text(self) -> str:
        ends = {} if self.first is None else {"first": self.first, "last": self.last}
        return json.dumps({"format": _FORMAT, "rows": self.rows, "bytes": self.size, "sha256": self.sha256, **ends},
                          sort_keys=True) + "\n"


class SealCheck(NamedTuple):
    """A table against its seal: ``state`` (sealed | unsealed | appended | changed | cut; unreadable, for
    :func:`rgr.store.write.repair_table` only) and what to say."""

    state: str
    message: str  # "" when sealed
    sealed_rows: int | None  # what the seal records (None: no seal)


def seal_path(table: str | Path) -> Path:
    """``<table>.seal``, beside the table."""
    table = Path(table)
    return table.with_name(table.name + _SUFFIX)


def seal_of(data: bytes, rows: int) -> _Seal:
    """The seal of a table whose bytes are ``data`` and which holds ``rows`` rows."""
    if rows < 0:
        raise ValueError(f"rows must be >= 0, got {rows}")
    return _Seal(rows, len(data), hashlib.sha256(data).hexdigest(), *_ends(data))


def _ends(data: bytes) -> tuple[str | None, str | None]:
    """Short hashes of the first and the last line after the header (None, None: no such line)."""
    lines = data.rstrip(b"\n").split(b"\n")[1:]
    if not lines:
        return None, None
    return tuple(hashlib.sha256(line).hexdigest()[:16] for line in (lines[0], lines[-1]))  # type: ignore[return-value]


def read_seal(table: str | Path) -> _Seal | None:
    """The seal beside ``table`` (None when there is none); a :class:`TableError` naming it if it is not one rgr
    wrote."""
    path = seal_path(table)
    fix = f"`python -m rgr repair {table} --seal` rewrites it from the table as it is"
    try:
        fh = open_own(path, "rb")
    except FileNotFoundError:
        return None
    except _NotAFile as e:  # a FIFO would block every reader: refused at once, never read
        if e.kind == "a folder":  # a rename cannot replace a folder: it goes first
            raise BadSeal(f"{path}: is a folder, not a seal; remove it (rmdir), then {fix}") from None
        raise BadSeal(f"{path}: is {e.kind}, not a seal file; {fix}") from None
    with fh:
        raw = fh.read(4096)
    try:
        d = json.loads(raw.decode("utf-8"))
        if d.get("format") != _FORMAT:
            raise ValueError(f"format {d.get('format')!r}, this rgr reads {_FORMAT}")
        seal = _Seal(d["rows"], d["bytes"], d["sha256"], d.get("first"), d.get("last"))
        if not (isinstance(seal.rows, int) and isinstance(seal.size, int) and seal.rows >= 0 and seal.size >= 0
                and isinstance(seal.sha256, str) and len(seal.sha256) == 64):
            raise ValueError("rows, bytes or sha256 out of range")
        if not all(e is None or isinstance(e, str) for e in (seal.first, seal.last)):
            raise ValueError("first or last is not a hash")
    except (ValueError, KeyError, TypeError, AttributeError, UnicodeDecodeError) as e:
        raise BadSeal(f"{path}: not a seal this rgr wrote ({e}); {fix}") from None
    return seal


def write_seal(table: str | Path, seal: _Seal) -> Path:
    """Write ``table``'s seal through a temporary file and a rename (never through a symbolic link at its name)."""
    path = seal_path(table)
    if path.is_symlink():
        raise TableError(f"{path}: is a symbolic link; rgr does not follow links at its lock and side files "
                         "(remove it)")
    if path.is_dir():
        raise _NotAFile(path, "a folder")
    replace_whole(path, seal.text().encode())
    return path


def drop_seal(table: str | Path) -> None:
    """Remove ``table``'s seal, if any (with the table: a merged shard)."""
    path = seal_path(table)
    if path.is_dir() and not path.is_symlink():
        raise _NotAFile(path, "a folder")
    if path.exists() or path.is_symlink():
        path.unlink()


def compare(table: str | Path, data: bytes, rows: int, seal: _Seal | None) -> SealCheck:
    """The table ``table``, whose bytes are ``data`` holding ``rows`` rows, against its seal ``seal`` (see the module).

    Read the seal before the table: a writer renames the table first, so a write between the two reads leaves a
    table newer than its seal (a statement), never older (a cut)."""
    name = seal_path(table).name
    fix = f"`python -m rgr repair {table} --seal`"
    if seal is None:
        return SealCheck("unsealed", f"{table}: no seal ({name}), so a cut at a line boundary would go unseen "
                                     f"(written by a writer that does not seal, such as an rgr from before seals); "
                                     f"{fix} records its {rows:,} rows", None)
    if len(data) == seal.size and hashlib.sha256(data).hexdigest() == seal.sha256:
        return SealCheck("sealed", "", seal.rows)
    if rows < seal.rows:
        return SealCheck("cut", f"{table}: {rows:,} rows, but its seal ({name}) records {seal.rows:,}: "
                                f"{_rows(seal.rows - rows)} fewer, {_loss(data, seal)}; restore the table (git "
                                f"checkout, or the copy it came from), or keep these {rows:,} rows with {fix} and "
                                "rerun the sweep to train the missing runs", seal.rows)
    if len(data) > seal.size and hashlib.sha256(data[:seal.size]).hexdigest() == seal.sha256:
        return SealCheck("appended", f"{table}: {rows:,} rows; its seal ({name}) records the first {seal.rows:,}, "
                                     f"intact, and {_rows(rows - seal.rows)} appended after it by a writer that does "
                                     f"not seal (such as an rgr from before seals), so a cut among them would go "
                                     f"unseen; {fix} records them", seal.rows)
    return SealCheck("changed", f"{table}: {rows:,} rows, changed since its seal ({name}, {seal.rows:,} rows) was "
                                f"written, by a writer that does not seal (an rgr from before seals, or an edit); "
                                f"{fix} records it as it is now", seal.rows)


def _loss(data: bytes, seal: _Seal) -> str:
    """Which loss a table with fewer rows than its seal shows, from the seal's first and last rows."""
    if seal.first is None:  # a seal written before it recorded them
        return "cut off its end at a line boundary, deleted, or the table replaced by another"
    first, last = _ends(data)
    if last == seal.last:
        return ("deleted from its middle (its first and last rows are the sealed ones)" if first == seal.first else
                "deleted at its start (its last row is the sealed one, its first is not)")
    if first == seal.first:
        return "cut off its end at a line boundary (its first row is the sealed one, its last is gone)"
    return "the table replaced by another (neither its first nor its last row is the sealed one)"


def _rows(n: int) -> str:
    return f"{n:,} row{'' if n == 1 else 's'}"


def enforce(table: str | Path, data: bytes, rows: int, seal: _Seal | None) -> SealCheck:
    """:func:`compare`, then raise :class:`TableError` on a cut and warn (:class:`UnsealedTable`) when not sealed."""
    found = compare(table, data, rows, seal)
    if found.state == "cut":
        raise TableError(found.message)
    if found.state != "sealed":
        warnings.warn(found.message, UnsealedTable, stacklevel=3)
    return found
