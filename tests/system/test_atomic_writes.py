"""Every writer of a committed file writes whole or not at all (rgr.paths.replace_whole; issue 44, case 2):
notebooks (book/_ext/rgr_fresh.py write_nb: tasks.py execute, tag and book), seals, data/SCHEMA.md. Tried
under a full disk: a real file-size limit in a subprocess (the write fails mid-way, as on a full tmpfs), and
ENOSPC raised after part of the data went out."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rgr import paths, schema_doc
from rgr.store.seal import replace_whole as store_replace_whole
from rgr.store.seal import seal_of, write_seal
from tests import ROOT

# a bare Python (no rgr installed) writes a notebook bigger than the file-size limit: as on a disk that fills up
FULL_DISK = r"""
import json, resource, signal, sys
sys.path.insert(0, sys.argv[1])
from rgr_fresh import write_nb
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
nb = {"cells": [{"cell_type": "code", "source": "x" * 20000, "outputs": [], "metadata": {}}], "metadata": {},
      "nbformat": 4, "nbformat_minor": 5}
write_nb(nb, sys.argv[2])
"""


def _old_notebook(path: Path) -> str:
    text = json.dumps({"cells": [], "metadata": {"old": True}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"
    path.write_text(text)
    return text


def test_a_full_disk_leaves_the_committed_notebook_whole(tmp_path):
    nb = tmp_path / "theory.ipynb"
    old = _old_notebook(nb)
    run = subprocess.run([sys.executable, "-S", "-c", FULL_DISK, str(ROOT / "book" / "_ext"), str(nb)],
                         capture_output=True, text=True)
    assert run.returncode != 0 and ("File too large" in run.stderr or "No space" in run.stderr), run.stderr
    assert nb.read_text() == old and json.loads(nb.read_text())["metadata"] == {"old": True}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theory.ipynb"]  # no temporary file left


class _FillsUp:
    """A file object that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, fh, room: int):
        self.fh, self.room = fh, room

    def write(self, data: bytes) -> int:
        self.fh.write(data[: self.room])
        self.fh.flush()
        raise OSError(errno.ENOSPC, "No space left on device")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()

    def __getattr__(self, name):
        return getattr(self.fh, name)


@pytest.fixture
def full_disk(monkeypatch):
    real = os.fdopen
    monkeypatch.setattr(paths.os, "fdopen", lambda fd, *a, **k: _FillsUp(real(fd, *a, **k), 10))


def _load_rgr_fresh():
    import importlib.util

    spec = importlib.util.spec_from_file_location("rgr_fresh_t", ROOT / "book" / "_ext" / "rgr_fresh.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_nb_on_a_full_disk_raises_and_changes_nothing(tmp_path, full_disk):
    nb = tmp_path / "theory.ipynb"
    old = _old_notebook(nb)
    with pytest.raises(OSError, match="No space"):
        _load_rgr_fresh().write_nb({"cells": [], "metadata": {"new": True}}, nb)
    assert nb.read_text() == old and os.listdir(tmp_path) == ["theory.ipynb"]


def test_seals_and_schema_doc_on_a_full_disk_change_nothing(tmp_path, full_disk):
    table = tmp_path / "base.csv"
    seal = tmp_path / "base.csv.seal"
    seal.write_text("old seal\n")
    with pytest.raises(OSError, match="No space"):
        write_seal(table, seal_of(b"m,h\n1,2\n3,4\n5,6\n", 3))
    assert seal.read_text() == "old seal\n"
    schema = tmp_path / "SCHEMA.md"
    schema.write_text("old schema\n")
    with pytest.raises(OSError, match="No space"):
        schema_doc.write(schema)
    assert schema.read_text() == "old schema\n"
    with pytest.raises(OSError, match="No space"):
        store_replace_whole(table, b"a\n1\n")
    assert not table.exists() and sorted(os.listdir(tmp_path)) == ["SCHEMA.md", "base.csv.seal"]


def test_replace_whole_keeps_the_permission_bits_and_replaces_a_link(tmp_path):
    target = tmp_path / "tasks.sh"
    target.write_text("old\n")
    target.chmod(0o755)
    paths.replace_whole(target, b"new\n")
    assert target.read_text() == "new\n" and target.stat().st_mode & 0o777 == 0o755
    outside = tmp_path / "outside"
    outside.write_text("keep\n")
    link = tmp_path / "link.ipynb"
    link.symlink_to(outside)
    paths.replace_whole(link, b"{}\n")
    assert outside.read_text() == "keep\n" and not link.is_symlink() and link.read_text() == "{}\n"
