"""Damaged, hostile and inconsistent tables (issue 33): one clear error naming the file, nothing lost or written."""

import os
from pathlib import Path

import pandas as pd
import pytest

from rgr import catalog
from rgr.cli import main as cli
from rgr.experiments.registry import get_experiment
from rgr.experiments.runner import run_sweep
from rgr.store import FIELD_LIMIT, TableError, load_table
from rgr.store.write import repair_table, sweep_lock, write_rows
from rgr.trainers import trainer
from tests import ROOT

# These tests damage or hand-edit tables on purpose, so a table read here often has no matching seal: the
# UnsealedTable warning is expected (tests/store/test_seal.py tests the warning itself).
pytestmark = pytest.mark.filterwarnings("ignore::rgr.store.seal.UnsealedTable")

BASE = get_experiment("base").schema


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> Path:
    """A real base smoke table (32 rows), written once; each test edits a copy."""
    root = tmp_path_factory.mktemp("data")
    run_sweep(trainer("base"), "smoke", "cpu", root=root, progress=False, log=lambda s: None)
    return root / "base.csv"


def _copy(table: Path, tmp_path: Path, edit=None) -> Path:
    out = tmp_path / "base.csv"
    lines = table.read_text().splitlines(keepends=True)
    out.write_text("".join(edit(lines) if edit else lines))
    return out


def _edited(table: Path, tmp_path: Path, column: str, value: str, row: int = 3) -> Path:
    df = pd.read_csv(table, dtype=str, keep_default_na=False)
    df.loc[row, column] = value
    out = tmp_path / "base.csv"
    df.to_csv(out, index=False, lineterminator="\n")
    return out


def test_repair_drops_only_the_damaged_lines_and_says_which(table, tmp_path, capsys):
    p = _copy(table, tmp_path, lambda ls: ls[:10] + ["\n", "garbage,,\n"] + ls[10:])  # lines 11 and 12
    with pytest.raises(TableError, match="line 11"):
        load_table(p, BASE)
    assert cli(["repair", str(p)]) == 0
    assert "dropped 2 damaged line(s) (11, 12)" in capsys.readouterr().out
    assert len(load_table(p, BASE)) == 32  # every intact row, before and after the damage
    assert (tmp_path / "base.csv.damaged").read_text() == "line 11: \nline 12: garbage,,\n"


def test_repair_drops_a_line_of_the_right_width_whose_values_are_wrong(table, tmp_path):
    p = _edited(table, tmp_path, "m", "many", row=5)  # file line 7
    done = repair_table(p, BASE)
    assert (done.kept, done.dropped, done.lines) == (31, 1, (7,))


def test_a_byte_order_mark_is_read_and_other_encodings_are_named(table, tmp_path):
    p = _copy(table, tmp_path)
    p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes())
    assert len(load_table(p, BASE)) == 32
    p.write_bytes(p.read_bytes().replace(b"permutation", "permutati\xf3n".encode("latin-1"), 1))
    with pytest.raises(TableError, match=r"base.csv: not UTF-8 text"):
        load_table(p, BASE)


def test_long_fields_round_trip_and_too_long_ones_are_refused(table, tmp_path):
    p = _copy(table, tmp_path)
    row = load_table(p, BASE).iloc[0].to_dict()
    row["val_curve"] = [[500 * (i + 1), 0.5] for i in range(20_000)]  # about 280,000 characters
    write_rows(p, BASE, [row])
    back = load_table(p, BASE).set_index("run_key").loc[row["run_key"], "val_curve"]
    assert len(back) == 20_000
    before = p.read_bytes()
    row["val_curve"] = [[500 * (i + 1), 0.5] for i in range(FIELD_LIMIT // 10)]
    with pytest.raises(ValueError, match="'val_curve'.*over the"):
        write_rows(p, BASE, [row])
    assert p.read_bytes() == before


def test_lock_and_side_files_never_follow_a_symlink(table, tmp_path):
    p = _copy(table, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, tmp_path / ".base.csv.sweep.lock")
    with pytest.raises(TableError, match="symbolic link"):
        with sweep_lock(p):
            pass
    os.symlink(victim, tmp_path / "base.csv.damaged")
    p.write_text(p.read_text() + "garbage\n")
    os.remove(tmp_path / ".base.csv.sweep.lock")
    with pytest.raises(TableError, match="symbolic link"):
        repair_table(p, BASE)
    assert victim.read_text() == "precious" and p.read_text().endswith("garbage\n")


@pytest.mark.parametrize("column, value, says", [
    ("D_K", "999", "D_K = h \\* d_k fails on lines \\[5\\]"),
    ("lr", "inf", "'lr' out of range"),
    ("tau", "-inf", "'tau' out of range"),
    ("m", "1", "'m' out of range"),
    ("model", "bogus", "'model' out of range .*one of max"),
    ("val_curve", '{"a": 1}', "val_curve is a list of \\[step, value\\] pairs fails on lines \\[5\\]"),
    ("preset", "huge", "'preset' out of range"),
    ("stop_reason", "bored", "'stop_reason' out of range"),
])
def test_the_loader_refuses_inconsistent_rows_naming_the_file_line(table, tmp_path, column, value, says):
    p = _edited(table, tmp_path, column, value, row=3)  # file line 5
    with pytest.raises(TableError, match=f"base.csv: .*{says}"):
        load_table(p, BASE)


def test_catalog_refuses_a_preset_it_does_not_have():
    for name, preset in (("base", "nope"), ("base", 3), ("constructions", "paper")):
        with pytest.raises(ValueError, match="preset must be one of"):
            catalog.load(name, preset)


# ----------------------------------------------------------------------------- commands: one line, not a traceback

ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def _rgr(*args: str, shell_tail: str = ""):
    import shlex
    import subprocess
    import sys

    cmd = " ".join([shlex.quote(sys.executable), "-m", "rgr", *map(shlex.quote, args)]) + shell_tail
    return subprocess.run(cmd, shell=True, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)


def test_a_closed_pipe_ends_a_listing_quietly():
    r = _rgr("sweep", "--list", shell_tail=" | head -1")
    assert r.returncode == 0 and r.stdout.count("\n") == 1 and "Traceback" not in r.stderr and "Broken" not in r.stderr


def test_bench_names_the_flag_a_too_small_or_too_large_shape_breaks():
    small = _rgr("bench", "--m", "8", "--d-model", "4")
    assert small.returncode == 2 and small.stderr.strip() == ("rgr bench: --m must be at least the context length "
                                                              "ell = 16, got 8")
    huge = _rgr("bench", "--m", "100000000", "--d-model", "4096")
    assert huge.returncode == 2 and "--m x --d-model" in huge.stderr and len(huge.stderr.splitlines()) == 1


def test_a_folder_in_the_tables_place_is_refused_before_training(tmp_path):
    (tmp_path / "value.csv").mkdir()
    r = _rgr("sweep", "value", "--preset", "smoke", "--device", "cpu", "--data", str(tmp_path), "--no-progress")
    assert r.returncode == 2 and "value.csv: is not a file" in r.stderr and len(r.stderr.splitlines()) == 1


@pytest.mark.parametrize("error, code, says", [
    (KeyboardInterrupt(), 130, "interrupted; tables are written whole"),
    (OSError(28, "No space left on device", "data/base.csv"), 1, "No space left on device (data/base.csv)"),
])
def test_an_unhandled_interrupt_or_os_error_is_one_line(monkeypatch, capsys, error, code, says):
    import rgr.cli as cli_pkg

    def boom(argv):
        raise error

    monkeypatch.setitem(cli_pkg.COMMANDS, "schema", (boom, "test"))
    assert cli(["schema"]) == code
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("field, value", [("lr", float("inf")), ("init_std", float("inf")),
                                          ("weight_decay", float("nan")), ("beta1", float("nan"))])
def test_the_gpt2_block_config_refuses_values_that_train_to_nan(field, value):
    from rgr.gpt2.experiment import Config

    with pytest.raises(ValueError, match=f"{field} must be a finite number"):
        Config(**{field: value})


def test_the_design_rule_names_an_absurd_or_degenerate_input():
    from rgr.results.choosing_heads import design

    rule = design.fit_from_runs(catalog.load("base", "paper"), "paper")
    for kw, says in ((dict(m_prime=10**400, d_model=32, D_K=64), "m_prime"),
                     (dict(m_prime=512, d_model=32, D_K=10**400), "D_K")):
        with pytest.raises(ValueError, match=says):
            design.recommend(rule, **kw)
    with pytest.raises(ValueError, match="m_prime = 1"):
        design.lookup(rule, [1], [32])


def test_a_shard_rerun_after_a_merge_trains_nothing_and_a_merge_says_what_is_missing(tmp_path, capsys):
    from rgr.experiments.runner import merge_shards

    base = trainer("base")
    run_sweep(base, "smoke", "cpu", shard=(0, 2), root=tmp_path, progress=False, log=lambda s: None)
    assert cli(["sweep", "base", "--preset", "smoke", "--data", str(tmp_path), "--merge"]) == 0
    assert "missing" in capsys.readouterr().out  # only shard 0 of 2 was there
    logs: list[str] = []
    run_sweep(base, "smoke", "cpu", shard=(0, 2), root=tmp_path, progress=False, log=logs.append)
    assert logs and all("to train" not in line for line in logs)  # its runs are in the main table now
    run_sweep(base, "smoke", "cpu", shard=(1, 2), root=tmp_path, progress=False, log=lambda s: None)
    merge_shards(base.schema, root=tmp_path)
    assert cli(["sweep", "base", "--preset", "smoke", "--data", str(tmp_path), "--merge"]) == 0
    assert "preset smoke: 32 of 32 planned runs present (complete)" in capsys.readouterr().out


def test_a_header_only_table_is_refused_and_never_written(table, tmp_path):
    p = _copy(table, tmp_path, lambda ls: ls[:1])
    with pytest.raises(TableError, match="a header and no rows"):
        load_table(p, BASE)
    empty = tmp_path / "new" / "base.csv"
    assert write_rows(empty, BASE, []) == 0 and not empty.exists()
