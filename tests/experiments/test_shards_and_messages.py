"""Issue 44, cases 10 and 11: a shard's dry run sees the runs already merged; a shard sweep says how many rows its
own file holds; ``sweep --help`` shows the defaults; a folder that cannot be written is named, not a probe file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rgr.cli import main as cli
from rgr.cli.common import UsageError, writable_dir
from rgr.experiments import trainer as experiment_trainer
from rgr.experiments.runner import run_sweep
from rgr.trainers import trainer


@pytest.fixture(scope="module")
def merged(tmp_path_factory):
    """A base smoke table (32 runs) in a --data folder of its own, as after `sweep --merge`."""
    root = tmp_path_factory.mktemp("data")
    run_sweep(trainer("base"), "smoke", "cpu", root=root, progress=False, log=lambda s: None)
    return root


def test_a_shard_dry_run_after_a_merge_counts_the_merged_runs(merged, monkeypatch, capsys):
    monkeypatch.setattr(experiment_trainer, "dry_run_report", lambda runs, *a, **kw: ["(projection)"])
    assert cli(["sweep", "base", "--preset", "smoke", "--shard", "0/3", "--dry-run", "--data", str(merged)]) == 0
    out = capsys.readouterr().out
    assert "runs already in the table" in out, out


def test_a_shard_sweep_says_how_many_rows_its_own_file_holds(merged):
    said = []
    run_sweep(trainer("base"), "smoke", "cpu", root=merged, shard=(1, 2), progress=False, log=said.append)
    assert said[-1].endswith("complete (32 runs done, 0 of them in base.shard-1-of-2.csv)"), said
    assert not (merged / "base.shard-1-of-2.csv").exists()


def test_sweep_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        cli(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: book" in text and "auto (default)" in text and "default: 0/1" in text


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc, a folder nobody can create files in")
def test_a_folder_that_cannot_be_written_is_named_not_its_probe_file():
    with pytest.raises(UsageError) as e:
        writable_dir(Path("/proc/nope"), "--data")
    assert str(e.value) == "--data: cannot write to /proc/nope (No such file or directory, in /proc)", str(e.value)
