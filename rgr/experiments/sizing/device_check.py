"""One stack trained on two devices, compared run by run (issue 28's CPU/GPU check; chapter *permutation sweeps*).

A sweep may train part of a table on a GPU and the rest on a CPU. Contexts, graphs, embeddings and inits
depend on a run's seed only (:mod:`rgr.task.contexts`), never on the device, so the same stack trained on
both differs only by float rounding: kernels that sum in another order. That difference is not zero,
and an optimiser can grow it (AdamW's first steps move every weight by about ``lr`` whatever the size of
its gradient, so a gradient that is zero up to rounding moves either way). :func:`compare_devices` reports
both levels: the weights after a few steps (rounding, not yet grown), and what a table stores after the
cut (steps, stop reason, validation curve, test F1 and tau). ``scripts/device_check.py`` runs it on a
paper stack and writes the record.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

import torch

from ..engine.config import RunConfig, RunResult, check_int, resolve_device
from ..engine.loop import train


@dataclass(frozen=True)
class _DeviceComparison:
    """Largest differences between the two devices' results over the stack's runs."""

    device_a: str
    device_b: str
    runs: int
    early_steps: int  # the cut of the weights comparison
    early_weight_max_abs: float  # max |W_a - W_b| over W_Q, W_K after early_steps steps
    early_weight_scale: float  # max |W_a| there, for scale
    steps: int  # the cut of the results comparison
    same_steps_and_stop: bool  # every run stopped at the same step for the same reason
    val_max_abs: float  # max |curve_a - curve_b| over every check of every run
    test_f1_max_abs: float
    tau_max_abs: float

    def as_dict(self) -> dict:
        return asdict(self)


def _weights_diff(a: Sequence[RunResult], b: Sequence[RunResult]) -> tuple[float, float]:
    diff = scale = 0.0
    for ra, rb in zip(a, b):
        for k in ("W_Q", "W_K"):
            wa, wb = ra.weights[k].double().cpu(), rb.weights[k].double().cpu()
            diff = max(diff, float((wa - wb).abs().max()))
            scale = max(scale, float(wa.abs().max()))
    return diff, scale


def compare_devices(
    configs: Sequence[RunConfig],
    device_a: str | torch.device = "cpu",
    device_b: str | torch.device = "cuda",
    early_steps: int = 10,
    steps: int = 1000,
) -> _DeviceComparison:
    """Train ``configs`` as one stack on both devices: cut at ``early_steps`` (weights compared) and at
    ``steps`` (the results a table stores compared); the largest differences over the runs."""
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one RunConfig")
    check_int("early_steps", early_steps, 1)
    check_int("steps", steps, 1)
    dev_a, dev_b = resolve_device(device_a), resolve_device(device_b)
    early = [c.replace(max_steps=min(c.max_steps, early_steps)) for c in configs]
    cut = [c.replace(max_steps=min(c.max_steps, steps)) for c in configs]
    kw = dict(progress=False, max_stack=len(configs))
    wa = train(early, device=dev_a, keep_weights=True, **kw)
    wb = train(early, device=dev_b, keep_weights=True, **kw)
    w_diff, w_scale = _weights_diff(wa, wb)
    ra, rb = train(cut, device=dev_a, **kw), train(cut, device=dev_b, **kw)
    same = all((x.steps, x.stop_reason) == (y.steps, y.stop_reason) for x, y in zip(ra, rb))
    val = max((abs(p[1] - q[1]) for x, y in zip(ra, rb) for p, q in zip(x.val_curve, y.val_curve)), default=0.0)
    f1 = max(abs((x.test_f1 or 0.0) - (y.test_f1 or 0.0)) for x, y in zip(ra, rb))
    tau = max(abs((x.tau or 0.0) - (y.tau or 0.0)) for x, y in zip(ra, rb))
    return _DeviceComparison(str(dev_a), str(dev_b), len(configs), early_steps, w_diff, w_scale, steps, same,
                            float(val), float(f1), float(tau))
