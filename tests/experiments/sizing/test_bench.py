"""rgr.experiments.sizing.bench: the naive loop agrees with the engine, and the benchmark runs end to end
(no timing asserts)."""

from __future__ import annotations

import pytest
import torch

from rgr.__main__ import COMMANDS
from rgr.__main__ import main as cli
from rgr.experiments.engine.config import RunConfig
from rgr.experiments.engine.loop import train_run
from rgr.experiments.sizing import bench
from rgr.experiments.sizing.bench import main
from rgr.experiments.sizing.calibration import features
from rgr.experiments.sizing.loops import train_baseline, train_naive

TINY = dict(d_model=16, h=4, d_k=8, ell=8, check_every=25, patience=2, n_val=64, n_test=128, lr=1e-2, dtype="float64")


@pytest.mark.parametrize(
    "cfg",
    [
        RunConfig(m=16, seed=0, model="max", max_steps=400, **TINY),
        RunConfig(m=16, seed=1, model="softmax", max_steps=120, **TINY),
        RunConfig(m=24, seed=2, model="sum", graph="regular", r=2, max_steps=80, **TINY),
    ],
    ids=["max", "softmax", "sum-regular"],
)
@pytest.mark.parametrize("loop", ["naive", "baseline"])
def test_one_run_loops_equal_engine(cfg, loop):
    """Independent code paths (per-step or per-block sampling, autograd, one run vs the stacked engine) train alike."""
    naive = train_naive(cfg) if loop == "naive" else train_baseline(cfg, block=7)
    engine = train_run(cfg, progress=False, keep_weights=True)
    assert (naive.steps, naive.stop_reason) == (engine.steps, engine.stop_reason)
    assert [s for s, _ in naive.val_curve] == [s for s, _ in engine.val_curve]
    torch.testing.assert_close([v for _, v in naive.val_curve], [v for _, v in engine.val_curve], rtol=0, atol=1e-6)
    torch.testing.assert_close(naive.W_Q, engine.weights["W_Q"], rtol=1e-6, atol=1e-8)
    torch.testing.assert_close(naive.W_K, engine.weights["W_K"], rtol=1e-6, atol=1e-8)
    assert naive.tau == pytest.approx(engine.tau, abs=1e-8)
    assert naive.train_seconds > 0


def test_one_run_loops_reject_value_model():
    for fn in (train_naive, train_baseline):
        with pytest.raises(ValueError, match="model"):
            fn(RunConfig(m=16, model="value", **TINY))


def test_bench_sweep_trains_real_stacks(monkeypatch, capsys):
    """base/smoke's first round: 24 runs of two cells, 4 stacks (7 of exact shapes), each run cut at 10 steps."""
    stacks: list[list[int]] = []  # the steps each stack's runs took, the same-shape stack first
    real = bench.train

    def train(cfgs, **kw):
        results = real(cfgs, **kw)
        stacks.append([r.steps for r in results])
        return results

    monkeypatch.setattr(bench, "train", train)
    argv = ["--m", "32", "--d-model", "8", "--heads", "2", "--dk-total", "8", "--runs", "2", "--steps", "10",
            "--naive-runs", "1", "--naive-steps", "10", "--check-every", "10", "--sweep", "base", "--preset", "smoke",
            "--sweep-steps", "10"]  # fmt: skip
    assert main([*argv, "--budget", "1e-9"]) == 0  # the budget is spent after the first stack
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sweep:"))
    assert "base/smoke: 1 of 4 first-round stacks" in line and len(stacks) == 2 and len(stacks[1]) >= 2
    assert stacks[1] == [10] * len(stacks[1])
    stacks.clear()
    assert main([*argv, "--budget", "1e9", "--padding", "1"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sweep:"))
    assert "base/smoke: 7 of 7 first-round stacks (24 runs, <= 10 steps each, padding <= 1x)" in line
    assert sum(len(g) for g in stacks[1:]) == 24 and all(n == 10 for g in stacks[1:] for n in g)


def test_one_model_steps_flops():  # what the bench counts as a run's step: a one-run stack's FLOPs
    cfg = RunConfig(m=256, d_model=32, h=8, d_k=16)
    assert features([cfg], 1)[0] == 8 * 16 * 32 * 128 + 6 * 16 * 16 * 128


def test_bench_end_to_end(capsys):
    argv = ["--m", "32", "--d-model", "8", "--heads", "2", "--dk-total", "8", "--runs", "3", "--steps", "30",
            "--naive-runs", "1", "--naive-steps", "20", "--check-every", "10"]  # fmt: skip
    assert "bench" in COMMANDS
    assert cli(["bench", *argv]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("bench: m=32 d_model=8 h=2 D_K=8")
    assert any(line.startswith("naive:") for line in lines) and any(line.startswith("stacked:") for line in lines)
    name, value = lines[-1].split(": ")
    assert name == "speedup" and float(value) > 0
    assert any(line.startswith("baseline:") for line in lines) and lines[-2].startswith("speedup over baseline: ")
    assert torch.get_num_threads() == 1  # the bench restores the thread count it changed


def test_bench_sweep_mode(capsys):
    argv = ["--m", "32", "--d-model", "8", "--heads", "2", "--dk-total", "8", "--runs", "2", "--steps", "10",
            "--naive-runs", "1", "--naive-steps", "10", "--check-every", "10", "--sweep", "base", "--preset", "smoke",
            "--budget", "0.001", "--sweep-steps", "10"]  # fmt: skip
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("sweep:"))
    assert "base/smoke: 1 of " in line and "model-steps/s per worker" in line and "of the same-shape rate" in line


@pytest.mark.parametrize(
    "argv, name",
    [(["--heads", "3", "--dk-total", "128"], "--dk-total"), (["--dk-total", "0"], "--dk-total"), (["--m", "0"], "--m"),
     (["--d-model", "0"], "--d-model"), (["--seed", "-1"], "seed"), (["--runs", "0"], "--runs"),
     (["--sweep", "nope"], "experiment"), (["--budget", "0"], "--budget")],
)  # fmt: skip
def test_bench_rejects_bad_input_in_one_line(argv, name, capsys):
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and out.err.startswith("rgr bench: ") and name in out.err


def test_cell_stack_is_a_paper_first_round_stack():
    from rgr.experiments.sizing.bench import CELLS, cell_stack

    cfgs = cell_stack("4096x512", 8)
    assert {(c.m, c.d_model, c.h) for c in cfgs} == {(4096, 512, 8)}
    assert max(c.D_K for c in cfgs) == 512 and len(cfgs) == 6  # the cell's largest D_K, 3 seeds x 2 budgets
    assert set(CELLS) == {"1024x128", "2048x256", "4096x512", "1024x32"}
    with pytest.raises(ValueError, match="--heads"):
        cell_stack("1024x32", 3)


def test_bench_cell_and_cli(monkeypatch, capsys):
    cfgs = [RunConfig(m=16, seed=s, max_steps=10_000, **TINY) for s in range(3)]
    monkeypatch.setattr(bench, "cell_stack", lambda name, heads, device: cfgs)  # a tiny stand-in for the cell
    argv = ["--cell", "1024x32", "--cell-steps", "30", "--naive-steps", "20", "--cell-repeats", "2"]
    assert main([*argv, "--dtype", "float64"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("bench: cell 1024x32") and lines[1].startswith("matmul reference")
    assert "R = 3 runs" in lines[2] and f"{features([cfgs[0]], 1)[0] / 1e6:.3f} MFLOP per model-step" in lines[2]
    assert lines[3].startswith(f"stacked:  {2 * 3 * 30} model-steps")  # two repeats of 3 runs x 30 steps
    assert lines[4].startswith(f"baseline: {2 * 3 * 20} model-steps (one run at a time)")
    stacked, baseline = (float(x.split("-> ")[1].split(" model-steps/s")[0]) for x in lines[3:5])
    ratio = float(lines[-1].split(": ")[1])
    assert lines[-1].startswith("stacked / baseline: ") and ratio > 0 and stacked > 0 and baseline > 0
    assert ratio == pytest.approx(stacked / baseline, rel=0.05)  # the rates as printed (rounded)
