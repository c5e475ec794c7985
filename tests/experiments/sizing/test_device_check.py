"""rgr.experiments.sizing.device_check: one stack on two devices, compared (issue 28's CPU/GPU check)."""

from __future__ import annotations

import pytest
import torch

from rgr.experiments.engine.config import RunConfig
from rgr.experiments.sizing.bench import cell_stack
from rgr.experiments.sizing.device_check import compare_devices

TINY = dict(d_model=16, ell=8, check_every=25, patience=2, n_val=64, n_test=128, lr=1e-2)


def _cfgs() -> list[RunConfig]:
    return [RunConfig(m=16 + 4 * i, seed=i, h=h, d_k=k, max_steps=n, **TINY)
            for i, (h, k, n) in enumerate([(4, 8, 300), (2, 8, 120), (4, 4, 60)])]  # fmt: skip


def test_same_device_differs_by_nothing():
    c = compare_devices(_cfgs(), "cpu", "cpu", early_steps=5, steps=100)
    assert (c.runs, c.early_steps, c.steps) == (3, 5, 100) and c.same_steps_and_stop
    assert c.early_weight_max_abs == 0.0 and c.early_weight_scale > 0
    assert c.val_max_abs == c.test_f1_max_abs == c.tau_max_abs == 0.0
    assert set(c.as_dict()) >= {"device_a", "device_b", "val_max_abs"}


def test_a_different_stack_is_seen(monkeypatch):
    """The comparison is not blind: a doubled learning rate on the second device shows in every measure."""
    from rgr.experiments.sizing import device_check

    real, calls = device_check.train, []

    def second_side_faster(cfgs, device, **kw):  # calls alternate: a, b (early), then a, b (cut)
        calls.append(device)
        side_b = len(calls) % 2 == 0
        return real([c.replace(lr=2 * c.lr) for c in cfgs] if side_b else cfgs, device=device, **kw)

    monkeypatch.setattr(device_check, "train", second_side_faster)
    d = compare_devices(_cfgs(), "cpu", "cpu", early_steps=5, steps=100)
    assert len(calls) == 4 and d.early_weight_max_abs > 0.01 and d.val_max_abs > 0


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="configs"):
        compare_devices([])
    with pytest.raises(ValueError, match="steps"):
        compare_devices(_cfgs(), "cpu", "cpu", steps=0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cpu_and_gpu_agree_on_a_paper_stack():
    """Float32, a real (1024, 128) paper stack cut at 1,000 steps: what the table stores agrees (results level)."""
    c = compare_devices(cell_stack("1024x128", 8, "cpu"), "cpu", "cuda", early_steps=10, steps=1000)
    print(c.as_dict())
    assert c.same_steps_and_stop and c.test_f1_max_abs < 0.02 and c.val_max_abs < 0.02
    assert c.early_weight_max_abs < 0.1 * c.early_weight_scale
