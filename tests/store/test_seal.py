"""A table's seal (issue 33: "a table cut at a line boundary is not detected"): rgr.store.seal.

A table written by the store is sealed (rows, size, sha256 in ``<table>.seal``); cutting its last full lines
is refused in one line (exit 2 from the commands); a table appended to by a writer that does not seal (the
code of a running sweep from before seals) is read with a statement and sealed by ``repair --seal``.
"""

import json
import os
import re
import shutil
import warnings
from pathlib import Path

import pytest

from rgr.cli import main as cli
from rgr.experiments.registry import get_experiment
from rgr.experiments.runner import run_sweep
from rgr.paths import data_dir
from rgr.store import TableError, UnsealedTable, load_table, seal_path
from rgr.store.seal import compare, read_seal
from rgr.store.write import repair_table, write_rows
from rgr.trainers import trainer

BASE = get_experiment("base").schema


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    """A real base smoke table (32 rows) as the store writes it, sealed; each test works on a copy."""
    root = tmp_path_factory.mktemp("data")
    run_sweep(trainer("base"), "smoke", "cpu", root=root, progress=False, log=lambda s: None)
    return root / "base.csv"


def _copy(table: Path, tmp_path: Path, seal: bool = True) -> Path:
    """The table (and its seal) copied into ``tmp_path``."""
    out = tmp_path / "base.csv"
    shutil.copy(table, out)
    if seal:
        shutil.copy(seal_path(table), seal_path(out))
    return out


def _cut(path: Path, k: int) -> None:
    """Drop the table's last ``k`` full lines: it still ends at a line boundary."""
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:-k]))


def _quiet_load(path: Path):
    """load_table, failing on any warning (an intact, sealed table is read silently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return load_table(path, BASE)


def test_the_store_seals_what_it_writes_and_an_intact_table_passes(table, tmp_path, capsys):
    assert read_seal(table).rows == 32 and read_seal(table).size == table.stat().st_size
    p = _copy(table, tmp_path)
    assert len(_quiet_load(p)) == 32
    assert cli(["repair", str(p)]) == 0
    assert capsys.readouterr().out.strip() == f"{p}: intact (32 rows) and sealed; nothing to repair"


@pytest.mark.parametrize("k", [1, 5])
def test_a_table_cut_at_a_line_boundary_is_refused_in_one_line(table, tmp_path, capsys, k):
    p = _copy(table, tmp_path)
    _cut(p, k)
    before = p.read_bytes()
    says = (f"{p}: {32 - k} rows, but its seal (base.csv.seal) records 32: {k} row{'s' * (k > 1)} fewer, cut off its "
            f"end at a line boundary (its first row is the sealed one, its last is gone); restore the table (git "
            f"checkout, or the copy it came from), or keep these {32 - k} rows with `python -m rgr repair {p} --seal` "
            f"and rerun the sweep to train the missing runs")
    with pytest.raises(TableError) as err:
        load_table(p, BASE)
    assert str(err.value) == says
    for argv in (["repair", str(p)], ["sweep", "base", "--preset", "smoke", "--data", str(tmp_path), "--dry-run"]):
        assert cli(argv) == 2
        assert capsys.readouterr().err == f"rgr {argv[0]}: {says}\n"
    row = load_table(table, BASE).iloc[-1].to_dict()
    with pytest.raises(TableError, match="cut off its end at a line boundary"):  # a write never seals a cut table over
        write_rows(p, BASE, [row])
    assert p.read_bytes() == before and read_seal(p).rows == 32


@pytest.mark.parametrize("loss, says", [
    (lambda lines: lines[:10] + lines[11:], "1 row fewer, deleted from its middle (its first and last rows are the "
                                            "sealed ones)"),
    (lambda lines: lines[:1] + lines[3:], "2 rows fewer, deleted at its start (its last row is the sealed one, its "
                                          "first is not)"),
    (lambda lines: lines[:1] + lines[5:17], "20 rows fewer, the table replaced by another (neither its first nor its "
                                            "last row is the sealed one)"),
])
def test_the_seal_tells_a_cut_end_from_rows_deleted_and_a_replaced_table(table, tmp_path, loss, says):
    """Issue 44, case 11: every loss of rows used to be called "cut off its end"."""
    p = _copy(table, tmp_path)
    p.write_text("".join(loss(p.read_text().splitlines(keepends=True))))
    with pytest.raises(TableError, match=f"records 32: {re.escape(says)}; restore the table"):
        load_table(p, BASE)


def test_a_seal_from_before_it_recorded_its_rows_names_every_possible_loss(tmp_path):
    name = "value_nostop"  # a committed seal: rows, bytes and sha256 only
    p = tmp_path / f"{name}.csv"
    shutil.copy(data_dir() / f"{name}.csv", p)
    d = json.loads(seal_path(data_dir() / f"{name}.csv").read_text())
    seal_path(p).write_text(json.dumps({k: d[k] for k in ("bytes", "format", "rows", "sha256")}) + "\n")
    _cut(p, 1)
    with pytest.raises(TableError, match=r"1 row fewer, cut off its end at a line boundary, deleted, or the table "
                                         r"replaced by another; restore"):
        load_table(p, get_experiment(name).schema)


def test_seal_accepts_a_cut_explicitly_and_the_sweep_then_retrains_the_missing_runs(table, tmp_path, capsys):
    p = _copy(table, tmp_path)
    _cut(p, 3)
    assert cli(["repair", str(p), "--seal"]) == 0
    assert capsys.readouterr().out.strip() == (f"{p}: intact; sealed at 29 rows (its seal recorded 32: the 3 lost "
                                               "are accepted)")
    assert len(_quiet_load(p)) == 29
    run_sweep(trainer("base"), "smoke", "cpu", root=tmp_path, progress=False, log=lambda s: None)
    assert len(_quiet_load(p)) == 32 and read_seal(p).rows == 32


def _old_code_appended(table: Path, tmp_path: Path, k: int) -> Path:
    """The table as a writer that does not seal leaves it: sealed at 32 - k rows, then ``k`` rows appended.

    An rgr from before seals rewrites the whole table on each write (the old rows byte for byte, as
    data/regular.csv's history shows) and leaves the seal as it was."""
    p = _copy(table, tmp_path)
    full = p.read_bytes()
    _cut(p, k)
    repair_table(p, BASE, seal=True)
    p.write_bytes(full)
    return p


def test_rows_appended_by_code_that_does_not_seal_are_reported_not_refused(table, tmp_path, capsys):
    p = _old_code_appended(table, tmp_path, 4)
    with pytest.warns(UnsealedTable) as said:
        assert len(load_table(p, BASE)) == 32
    assert str(said[0].message) == (
        f"{p}: 32 rows; its seal (base.csv.seal) records the first 28, intact, and 4 rows appended after it by a "
        f"writer that does not seal (such as an rgr from before seals), so a cut among them would go unseen; "
        f"`python -m rgr repair {p} --seal` records them")
    assert cli(["repair", str(p)]) == 0  # only says so
    assert capsys.readouterr().out.splitlines()[1] == str(said[0].message) and read_seal(p).rows == 28
    assert cli(["repair", str(p), "--seal"]) == 0
    assert capsys.readouterr().out.strip() == f"{p}: intact; sealed at 32 rows (its seal recorded the first 28)"
    assert len(_quiet_load(p)) == 32
    _cut(p, 2)  # now a cut among them is seen
    with pytest.raises(TableError, match="30 rows, but its seal .* records 32"):
        load_table(p, BASE)


def test_a_write_by_this_rgr_seals_a_table_that_old_code_appended_to(table, tmp_path):
    p = _old_code_appended(table, tmp_path, 4)
    row = load_table(table, BASE).iloc[0].to_dict()
    with pytest.warns(UnsealedTable, match="4 rows appended after it"):  # said once, when the write reads it
        assert write_rows(p, BASE, [row]) == 32
    assert len(_quiet_load(p)) == 32 and read_seal(p).rows == 32


def test_a_write_between_reading_the_seal_and_the_table_never_looks_like_a_cut(table, tmp_path, monkeypatch):
    """A chapter may read a table while a sweep writes it: the loader reads the seal first and the writer renames the
    table first, so the reader sees at worst a table newer than its seal (a statement), never a cut (an error)."""
    import rgr.store as store

    p = _copy(table, tmp_path)
    missing = load_table(p, BASE).tail(3).to_dict("records")
    _cut(p, 3)
    repair_table(p, BASE, seal=True)
    fired = []

    def then_write(fn):  # a sweep's write lands right after the seal is read (before the bytes: else 29 rows)
        def wrapped(*args):
            out = fn(*args)
            if not fired:
                fired.append(fn.__name__)
                write_rows(p, BASE, missing)
            return out
        return wrapped

    monkeypatch.setattr(store, "read_seal", then_write(store.read_seal))
    with pytest.warns(UnsealedTable, match="records the first 29, intact, and 3 rows appended"):
        assert len(load_table(p, BASE)) == 32
    assert fired == ["read_seal"] and len(_quiet_load(p)) == 32


def test_a_table_without_a_seal_or_changed_under_it_is_read_with_a_statement(table, tmp_path):
    p = _copy(table, tmp_path, seal=False)
    with pytest.warns(UnsealedTable, match=r"base.csv: no seal \(base.csv.seal\), so a cut at a line boundary would "
                                           r"go unseen .* records its 32 rows"):
        load_table(p, BASE)
    shutil.copy(seal_path(table), seal_path(p))
    text = p.read_text()  # a result edited in place: same count, other bytes (an edited config: test_row_keys.py)
    stop = ",cutoff," if ",cutoff," in text else ",converged,"
    p.write_text(text.replace(stop, ",futile," if stop == ",cutoff," else ",cutoff,", 1))
    with pytest.warns(UnsealedTable, match=r"32 rows, changed since its seal \(base.csv.seal, 32 rows\) was written"):
        load_table(p, BASE)


def test_the_seal_depends_on_the_bytes_alone(table, tmp_path):
    """Sealing the same table elsewhere, later, gives the same seal: no date or host in it, so a chapter reading a
    table and its seal is stale only when the table changed."""
    p = _copy(table, tmp_path, seal=False)
    assert repair_table(p, BASE, seal=True).sealed
    assert seal_path(p).read_bytes() == seal_path(table).read_bytes()
    assert not repair_table(p, BASE, seal=True).sealed  # already sealed: not rewritten


def test_a_symlinked_or_malformed_seal_is_refused_and_nothing_is_written_through_it(table, tmp_path, capsys):
    p = _copy(table, tmp_path, seal=False)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, seal_path(p))
    with pytest.raises(TableError, match=r"base.csv.seal: is a symbolic link"):
        load_table(p, BASE)
    row = load_table(table, BASE).iloc[0].to_dict()
    before = p.read_bytes()
    for attempt in (lambda: write_rows(p, BASE, [row]), lambda: repair_table(p, BASE, seal=True)):
        with pytest.raises(TableError, match="symbolic link"):
            attempt()
    assert cli(["repair", str(p), "--seal"]) == 2 and "symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "precious" and p.read_bytes() == before and seal_path(p).is_symlink()
    seal_path(p).unlink()
    seal_path(p).write_text('{"rows": 3}\n')
    with pytest.raises(TableError, match=rf"base.csv.seal: not a seal this rgr wrote .*`python -m rgr repair {p} "
                                         "--seal` rewrites it"):
        load_table(p, BASE)
    assert cli(["repair", str(p), "--seal"]) == 0
    assert capsys.readouterr().out.strip() == f"{p}: intact; sealed at 32 rows (its seal was unreadable)"
    assert len(_quiet_load(p)) == 32


def test_repair_of_a_damaged_table_reseals_it_and_says_what_its_seal_recorded(table, tmp_path, capsys):
    p = _copy(table, tmp_path)
    _cut(p, 2)
    p.write_text(p.read_text() + "garbage,,\n")  # line 32: damaged; two rows lost before it
    assert cli(["repair", str(p)]) == 0
    assert capsys.readouterr().out.strip() == (
        f"{p}: kept 30 intact rows; dropped 1 damaged line(s) (32), saved in {p}.damaged; sealed at 30 rows; its seal "
        "recorded 32 rows, 2 fewer now; rerun the sweep to train what is missing")
    assert len(_quiet_load(p)) == 30


def test_a_merge_removes_the_shards_and_their_seals(tmp_path):
    from rgr.experiments.runner import merge_shards

    base = trainer("base")
    for i in range(2):
        run_sweep(base, "smoke", "cpu", shard=(i, 2), root=tmp_path, progress=False, log=lambda s: None)
    assert len(list(tmp_path.glob("base.shard-*.csv.seal"))) == 2
    assert merge_shards(base.schema, root=tmp_path) == 32
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["base.csv", "base.csv.seal"]


def test_every_committed_table_is_sealed():
    """data/'s tables are committed with their seals, up to date: after copying in rows written by a sweep of an
    older rgr (which does not seal), `python -m rgr repair data/<table>.csv --seal` records them."""
    tables = sorted(data_dir().glob("*.csv"))
    assert tables
    stale = {}
    for t in tables:
        data = t.read_bytes()
        found = compare(t, data, data.count(b"\n") - 1, read_seal(t))  # rows: one record a line in data/
        if found.state != "sealed":
            stale[t.name] = found.state
    assert not stale, f"run `python -m rgr repair data/<table>.csv --seal` for {stale}"


def test_a_table_replaced_whole_is_validated_then_sealed(table, tmp_path):
    from rgr.store.write import replace_table

    rows = load_table(table, BASE)
    rows["val_curve"] = rows["val_curve"].map(json.dumps)
    p = tmp_path / "base.csv"
    assert replace_table(p, BASE, rows.head(5)) == 5 and len(_quiet_load(p)) == 5
    before = p.read_bytes()
    with pytest.raises(TableError, match="a header and no rows"):
        replace_table(p, BASE, rows.head(0))
    with pytest.raises(TableError, match="'m' out of range"):
        replace_table(p, BASE, rows.head(5).assign(m=1))
    assert p.read_bytes() == before and read_seal(p).rows == 5


def test_repair_knows_every_committed_table_and_refuses_a_seal_for_a_table(tmp_path, capsys):
    p = tmp_path / "peers_refit.csv"
    shutil.copy(data_dir() / p.name, p)  # not a sweep's table, yet one of data/
    assert cli(["repair", str(p), "--seal"]) == 0
    rows = read_seal(data_dir() / p.name).rows
    assert capsys.readouterr().out.strip() == f"{p}: intact; sealed at {rows} rows (it had no seal)"
    mine, committed = read_seal(p), read_seal(data_dir() / p.name)  # (a seal from before first/last lacks them)
    assert (mine.rows, mine.size, mine.sha256) == (committed.rows, committed.size, committed.sha256)
    assert cli(["repair", str(seal_path(p))]) == 2
    assert "is not a table of data/" in capsys.readouterr().err


def test_a_commands_seal_warning_is_one_line(tmp_path, capsys):
    """A table appended by a writer that does not seal: the command says so in one line, prefixed by its name."""
    import warnings

    from rgr.cli import main
    from rgr.store.seal import UnsealedTable

    def command(_argv):
        warnings.warn("data/x.csv: 3 rows appended after its seal", UnsealedTable, stacklevel=1)
        return 0

    from rgr import cli

    cli.COMMANDS["_probe"] = (command, "test only")
    try:
        assert main(["_probe"]) == 0
    finally:
        del cli.COMMANDS["_probe"]
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rgr _probe: warning: data/x.csv: 3 rows appended after its seal"]


def test_repair_reads_the_peers_refit_table_by_its_own_schema(tmp_path, capsys):
    """data/peers_refit.csv is not a sweep's table: repair finds its schema in the peers results (import path kept)."""
    import shutil

    from rgr.cli import main
    from rgr.paths import data_dir

    for name in ("peers_refit.csv", "peers_refit.csv.seal"):
        shutil.copy(data_dir() / name, tmp_path / name)
    assert main(["repair", str(tmp_path / "peers_refit.csv")]) == 0
    assert "intact" in capsys.readouterr().out
