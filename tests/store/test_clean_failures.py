"""Issue 44, cases 3, 7 and 8: the store fails cleanly, at once, naming the file.

- a seal that is a folder or a FIFO is refused at once, naming it (a FIFO used to hang every reader forever);
- ``repair`` on a table whose header has a renamed column says "columns missing" before checking any line (it
  used to check every line on its own and then advise deleting the intact table);
- a repair killed between its table and its seal can simply be rerun.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rgr.cli import main as cli
from rgr.experiments.registry import get_experiment
from rgr.paths import data_dir
from rgr.store import TableError, load_table, seal_path
from rgr.store import write as store_write
from rgr.store.write import repair_table, write_rows
from tests import ROOT

NAME = "value_nostop"  # a small committed table (45 runs), sealed
SCHEMA = get_experiment(NAME).schema


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / f"{NAME}.csv"
    shutil.copy(data_dir() / f"{NAME}.csv", out)
    shutil.copy(seal_path(data_dir() / f"{NAME}.csv"), seal_path(out))
    return out


def test_a_seal_that_is_a_folder_is_refused_naming_it(tmp_path, capsys):
    table = _copy(tmp_path)
    seal_path(table).unlink()
    seal_path(table).mkdir()
    with pytest.raises(TableError, match=f"{seal_path(table)}: is a folder, not a seal; remove it"):
        load_table(table, SCHEMA)
    for argv in (["repair", str(table)], ["repair", str(table), "--seal"]):
        assert cli(argv) != 0
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(seal_path(table)) in err and "folder" in err, err
    seal_path(table).rmdir()  # as the message says; then repair --seal records it
    assert cli(["repair", str(table), "--seal"]) == 0 and len(load_table(table, SCHEMA)) > 0


# load_table in a child with a deadline: before issue 44 it blocked forever in open() of the FIFO
FIFO_LOAD = r"""
import sys
from rgr.experiments.registry import get_experiment
from rgr.store import TableError, load_table
try:
    load_table(sys.argv[1], get_experiment(sys.argv[2]).schema)
except TableError as e:
    print(e)
    sys.exit(2)
"""


def test_a_seal_that_is_a_fifo_is_refused_at_once(tmp_path, capsys):
    table = _copy(tmp_path)
    seal_path(table).unlink()
    os.mkfifo(seal_path(table))
    start = time.monotonic()
    try:
        run = subprocess.run([sys.executable, "-c", FIFO_LOAD, str(table), NAME], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"reading a table whose seal is a FIFO blocked for {time.monotonic() - start:.0f} s")
    assert run.returncode == 2 and f"{seal_path(table)}: is a FIFO, not a seal file" in run.stdout, run.stdout
    assert cli(["repair", str(table), "--seal"]) == 0  # the rename replaces the FIFO with a seal
    assert seal_path(table).is_file() and len(load_table(table, SCHEMA)) > 0


def test_repair_of_a_renamed_header_column_says_which_column_first(tmp_path, capsys, monkeypatch):
    table = _copy(tmp_path)
    text = table.read_text()
    table.write_text(text.replace("run_key", "runkey", 1))
    before = table.read_bytes()
    checked = []
    real = store_write.rows_of  # what checks the lines' values
    monkeypatch.setattr(store_write, "rows_of", lambda *a: checked.append(1) or real(*a))
    assert cli(["repair", str(table)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{table}: columns missing: ['run_key'] (schema {NAME!r})") and "delete" not in err, err
    assert len(err.splitlines()) == 1 and checked == []  # no line was checked: the header says it all
    assert table.read_bytes() == before and not table.with_name(table.name + ".damaged").exists()


def test_a_repair_killed_between_its_table_and_its_seal_is_simply_rerun(tmp_path, monkeypatch):
    table = _copy(tmp_path)
    lines = table.read_text().splitlines(keepends=True)
    table.write_text("".join(lines[:5] + ["garbage,line\n"] + lines[5:]))  # one damaged line in the middle
    rows = len(lines) - 1

    steps = []

    def step(real):  # the kill lands after the first of the two renames (table and seal), whichever goes first
        def run(*a):
            steps.append(real.__name__)
            if len(steps) == 2:
                raise KeyboardInterrupt
            return real(*a)
        return run

    monkeypatch.setattr(store_write, "write_seal", step(store_write.write_seal))
    monkeypatch.setattr(store_write, "replace_whole", step(store_write.replace_whole))
    with pytest.raises(KeyboardInterrupt):
        repair_table(table, SCHEMA)
    monkeypatch.undo()
    with pytest.raises(TableError, match="repair"):  # the loader sends the reader to the repair, never "cut off"
        load_table(table, SCHEMA)
    done = repair_table(table, SCHEMA)  # rerun: it finishes the job
    assert (done.kept, done.dropped) == (rows, 1) and len(load_table(table, SCHEMA)) == rows


def test_a_link_at_the_seals_temporary_name_says_the_table_was_written(tmp_path):
    """Issue 44, case 11: the table is replaced before its seal; the error says so instead of reading as if
    nothing had been written."""
    table = _copy(tmp_path)
    text = table.read_text()
    (tmp_path / "elsewhere").write_text("x\n")
    planted = tmp_path / f".{seal_path(table).name}.{os.getpid()}.tmp"
    planted.symlink_to(tmp_path / "elsewhere")
    rows = len(text.splitlines()) - 1
    last = load_table(table, SCHEMA).tail(1).to_dict("records")  # a run written again: the table is rewritten
    with pytest.raises(TableError, match=rf"{table}: written \({rows} rows\), but not its seal: .*is a symbolic link"):
        write_rows(table, SCHEMA, last)
    assert (tmp_path / "elsewhere").read_text() == "x\n"  # nothing written through the link


def test_a_write_clears_the_temporary_files_a_killed_writer_left(tmp_path):
    """Issue 44, case 11: a SIGKILL inside a write leaves ``.<table>.seal.<pid>.tmp``; the next write (under the
    table's lock, which every writer holds) removes it instead of leaving it forever."""
    table = _copy(tmp_path)
    left = [tmp_path / f".{table.name}.seal.99999999.tmp", tmp_path / f".{table.name}.88888888.tmp"]
    for f in left:
        f.write_text("half\n")
    other = tmp_path / ".other.csv.77777777.tmp"  # another table's: not this write's business
    other.write_text("x\n")
    write_rows(table, SCHEMA, load_table(table, SCHEMA).tail(1).to_dict("records"))
    assert not any(f.exists() for f in left) and other.exists()
