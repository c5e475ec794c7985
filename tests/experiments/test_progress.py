"""Progress that moves and a projection before a long sweep (issue 16 item 7)."""

import re

import torch

from rgr import cli
from rgr.experiments import runner
from rgr.experiments import trainer as experiment_trainer
from rgr.experiments.runner import Job, run_job
from rgr.trainers import trainer


def test_a_stack_reports_model_steps_while_it_trains():
    exp = trainer("base")
    configs = exp.planned_runs("smoke", None, (0, 1))[:6]
    seen: list[int] = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = run_job(Job(exp, "smoke", tuple(configs)), "cpu", on_steps=seen.append)
    finally:
        torch.set_num_threads(threads)
    assert len(rows) == 6 and len(seen) > 1  # more than one update within the one stack
    assert sum(seen) == sum(r["steps"] for r in rows) <= exp.steps_bound(configs)


def test_dry_run_prints_a_projection(capsys):
    assert cli.main(["sweep", "base", "--preset", "smoke", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "model-steps" in out and "projected total" in out
    assert cli.main(["sweep", "base", "--preset", "smoke", "--dry-run", "--max-stack", "1"]) == 0
    runs, stacks = re.search(r"first round: (\d+) runs in (\d+) stacks", capsys.readouterr().out).groups()
    assert runs == stacks  # projected as --max-stack will train them: one run a stack


def test_paper_on_a_cpu_says_how_long_before_it_starts(monkeypatch, capsys, tmp_path):
    calls = []
    monkeypatch.setattr(experiment_trainer, "dry_run_report",
                        lambda runs, device, workers, rounds, **kw: ["projected total: 9 h"])
    monkeypatch.setattr(runner, "run_sweep", lambda sweep, **kw: calls.append(capsys.readouterr().out))
    assert cli.main(["sweep", "linear", "--preset", "paper", "--device", "cpu", "--data", str(tmp_path)]) == 0
    assert calls and "projected total: 9 h" in calls[0]  # printed before the sweep started
