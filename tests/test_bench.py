"""rgr.experiments.bench: the naive loop agrees with the engine, and the benchmark runs end to end (no timing asserts)."""

from __future__ import annotations

import pytest
import torch

from rgr.__main__ import COMMANDS
from rgr.__main__ import main as cli
from rgr.experiments.bench import main, step_flops, train_naive
from rgr.experiments.train import RunConfig, train_run

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
def test_naive_loop_equals_engine(cfg):
    """Two independent code paths (per-step sampling + rgr.model.attention vs the stacked engine) train alike."""
    naive = train_naive(cfg)
    engine = train_run(cfg, progress=False, keep_weights=True)
    assert (naive.steps, naive.stop_reason) == (engine.steps, engine.stop_reason)
    assert [s for s, _ in naive.val_curve] == [s for s, _ in engine.val_curve]
    torch.testing.assert_close([v for _, v in naive.val_curve], [v for _, v in engine.val_curve], rtol=0, atol=1e-6)
    torch.testing.assert_close(naive.W_Q, engine.weights["W_Q"], rtol=1e-6, atol=1e-8)
    torch.testing.assert_close(naive.W_K, engine.weights["W_K"], rtol=1e-6, atol=1e-8)
    assert naive.tau == pytest.approx(engine.tau, abs=1e-8)
    assert naive.train_seconds > 0


def test_naive_rejects_value_model():
    with pytest.raises(ValueError, match="model"):
        train_naive(RunConfig(m=16, model="value", **TINY))


def test_step_flops():
    cfg = RunConfig(m=256, d_model=32, h=8, d_k=16)
    assert step_flops(cfg) == 8 * 16 * 32 * 128 + 6 * 16 * 16 * 128


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
    assert torch.get_num_threads() == 1  # the bench restores the thread count it changed


def test_bench_rejects_bad_budget():
    with pytest.raises(SystemExit):
        main(["--heads", "3", "--dk-total", "128"])
