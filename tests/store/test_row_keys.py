"""Issue 44, case 10: a row edited in place under its old run_key is refused (rgr.store.RowKey).

Each table of data/ declares how its ``run_key`` follows from the row's own columns; the strict loader
recomputes it, so a config value changed by hand (``m`` from 128 to 256, the key left as it was) stops the
reader in one line naming the table, the line and the columns, where it used to load with at most a warning.
"""

from __future__ import annotations

import csv
import io
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from rgr import catalog
from rgr.cli import main as cli
from rgr.experiments import planner
from rgr.experiments.registry import get_experiment
from rgr.paths import data_dir
from rgr.results.peers import refit
from rgr.store import TableError, load_table, seal_path
from rgr.store import write as store_write
from rgr.store.write import repair_table

BASE = get_experiment("base").schema


def _copy(name: str, tmp_path: Path) -> Path:
    """data/<name>.csv and its seal, copied into ``tmp_path``."""
    out = tmp_path / f"{name}.csv"
    shutil.copy(data_dir() / f"{name}.csv", out)
    shutil.copy(seal_path(data_dir() / f"{name}.csv"), seal_path(out))
    return out


def _edit(path: Path, column: str, new: str, where: str | None = None) -> int:
    """Set ``column`` to ``new`` in the first row (whose value is ``where``, when given); the row's line number."""
    lines = path.read_text().splitlines(keepends=True)
    header = next(csv.reader([lines[0]]))
    i = header.index(column)
    for n, line in enumerate(lines[1:], start=2):
        row = next(csv.reader([line]))
        if row[i] != new and (where is None or row[i] == where):
            row[i] = new
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerow(row)
            lines[n - 1] = buf.getvalue()
            path.write_text("".join(lines))
            return n
    raise AssertionError(f"no row of {path} to edit")


def test_a_row_edited_in_place_under_its_old_key_is_refused_in_one_line(tmp_path, capsys):
    table = _copy("base", tmp_path)
    n = _edit(table, "m", "256", where="128")  # the case: same run_key, another cell
    with pytest.raises(TableError) as info:
        load_table(table, BASE)
    msg = str(info.value)
    assert msg.startswith(f"{table}: line {n} (1 of ") and "run_key is not the hash of the row's m, d_model" in msg
    assert "restore the table from git" in msg and f"python -m rgr repair {table}" in msg and "\n" not in msg
    seal_path(table).unlink()  # without its seal too: the key, not the seal, catches it
    with pytest.raises(TableError, match=f"line {n} "):
        load_table(table, BASE)
    assert cli(["sweep", "base", "--preset", "book", "--dry-run", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{table}: line {n} " in err, err


def test_repair_sets_the_edited_row_aside_and_keeps_every_other(tmp_path, monkeypatch):
    table = _copy("value_nostop", tmp_path)
    schema = get_experiment("value_nostop").schema
    rows = len(load_table(table, schema))
    n = _edit(table, "seed", "7")
    checks = []
    real = store_write.rows_of  # every check of some lines' values parses them with rows_of
    monkeypatch.setattr(store_write, "rows_of", lambda text, *a: checks.append(text.count("\n")) or real(text, *a))
    done = repair_table(table, schema)
    assert done.lines == (n,) and len(load_table(table, schema)) == rows - 1
    # found by halving, not line by line (and the kept rows checked once more, whole)
    assert len(checks) <= 2 * math.ceil(math.log2(rows)) + 2, checks
    assert table.with_name(table.name + ".damaged").read_text().startswith(f"line {n}: ")


SMALL = {"aot": "d", "constructions": "d_k_max", "gpt2": "ell", "pal": "lr", "settled": "max_steps",
         "peers_refit": "source_file"}  # a committed table of each kind of schema, and a column its key reads


@pytest.mark.parametrize("name", sorted(SMALL))
def test_every_kind_of_table_recomputes_its_keys(name, tmp_path):
    schema = refit.SCHEMA if name == "peers_refit" else catalog.get(name).schema
    table = _copy(name, tmp_path)
    assert len(load_table(table, schema)) > 0  # the committed rows' keys hold
    column = SMALL[name]
    value = pd.read_csv(table)[column].iloc[0]
    edited = (str(int(value) * 2) if pd.api.types.is_integer(value) else
              str(float(value) * 2) if pd.api.types.is_float(value) else f"{value}x")
    n = _edit(table, column, edited)
    with pytest.raises(TableError, match=f"line {n} .*run_key is not the hash of the row's .*{column}"):
        load_table(table, schema)


def test_every_table_of_data_declares_its_key():
    schemas = {name: catalog.get(name).schema for name in catalog.NAMES} | {"peers_refit": refit.SCHEMA}
    assert not [name for name, s in schemas.items() if s.key is None]
    assert {p.stem for p in data_dir().glob("*.csv")} <= set(schemas)  # every committed table is one of them
    assert "futility" not in planner.SCHEMA.key.columns  # a run with or without the rule fills the same place


def test_the_vectorised_key_is_run_key_of_the_rows_config():
    exp = get_experiment("base")
    configs = exp.planned_runs("smoke")[:5]
    configs.append(configs[0].replace(futility="trend-v1"))  # the rule is left out of the key
    configs += [configs[1].replace(rho=0.0), configs[1].replace(rho=-0.0)]  # equal floats that json writes apart
    rows = pd.DataFrame([{**c.to_dict(), "preset": p} for c in configs for p in ("smoke", "paper")])
    assert list(planner.SCHEMA.key.of(rows)) == [planner.run_key(c, p) for c in configs for p in ("smoke", "paper")]
