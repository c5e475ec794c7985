"""``sweep --dry-run --data FOLDER`` looks for reusable rows where the sweep will (issue 44, case 4): it used to
read the repository's data/, so a dry run into an empty folder said "nothing to train: every run is reused" and the
sweep then trained every run."""

from __future__ import annotations

from rgr.cli import main as cli
from rgr.experiments import registry
from rgr.experiments import trainer as experiment_trainer
from rgr.trainers import trainer


def test_a_dry_run_into_an_empty_data_folder_projects_every_run(tmp_path, monkeypatch, capsys):
    projected = {}
    monkeypatch.setattr(experiment_trainer, "dry_run_report",
                        lambda runs, *a, **kw: projected.update(n=len(runs)) or ["(projection)"])
    empty = tmp_path / "data"
    empty.mkdir()
    assert cli(["sweep", "base", "--preset", "book", "--dry-run", "--data", str(empty)]) == 0
    out, err = capsys.readouterr()
    assert "nothing to train" not in out and "reused" not in out, out
    assert err.startswith("rgr sweep: projecting the wall time")  # said before the calibration, which takes time
    planned = len(registry.get_experiment("base").planned_runs("book", None))
    assert projected["n"] == planned and f"{planned} runs in the first round" in out


def test_the_dry_run_reuses_what_the_folder_it_reads_holds(tmp_path, monkeypatch):
    """The repository's data/ holds every base/book run in other tables: read there, they are all reused."""
    monkeypatch.setattr(experiment_trainer, "dry_run_report", lambda runs, *a, **kw: ["(projection)"])
    exp = trainer("base")
    assert "reused from other tables" in exp.dry_run_report("book", "cpu", 1)[0]
    assert "reused" not in exp.dry_run_report("book", "cpu", 1, root=tmp_path)[0]
