"""rgr.experiments.projection: the step bound, the cost model's arithmetic, and a calibration that runs."""

from __future__ import annotations

import pytest

from rgr.experiments.config import RunConfig
from rgr.experiments.projection import (
    Calibration,
    dry_run_report,
    format_seconds,
    model_steps_bound,
    project,
    refinement_runs,
)

TINY = dict(d_model=8, h=2, d_k=4, ell=8, check_every=10, n_val=16, n_test=32)


def test_model_steps_bound():
    cfgs = [RunConfig(m=16, seed=s, max_steps=n, **TINY) for s, n in ((0, 30), (1, 50))]
    assert model_steps_bound(cfgs) == 80


def test_projection_arithmetic():
    """Step cost a (no FLOP term), check cost c: a stack of cutoffs 30 and 50, checks every 10 steps."""
    cfgs = [RunConfig(m=16, seed=s, max_steps=n, **TINY) for s, n in ((0, 30), (1, 50))]
    cal = Calibration(a=1.0, b=0.0, c=10.0, e=0.0, device="cpu", points=1)
    p = project(cfgs, "cpu", 1, cal)
    # 50 steps, 5 checks, then the test: n_test / n_val = 2 checks' worth
    assert (p.runs, p.stacks, p.model_steps) == (2, 1, 80)
    assert p.seconds == pytest.approx(50 * 1.0 + 5 * 10.0 + 2 * 10.0)
    other = RunConfig(m=16, max_steps=30, **{**TINY, "d_model": 16})  # another d_model: another stack
    p2 = project([*cfgs, other], "cpu", 2, cal)
    assert p2.stacks == 2 and p2.seconds == pytest.approx(120.0) and p2.cpu_seconds == pytest.approx(120 + 30 + 30 + 20)
    with pytest.raises(ValueError, match="workers"):
        project(cfgs, "cpu", 0, cal)


def test_calibrated_projection_and_report():
    cfgs = [RunConfig(m=16, seed=s, max_steps=40, **{**TINY, "h": h, "d_k": 8 // h}) for s in (0, 1) for h in (1, 2)]
    p = project(cfgs, "cpu", 1)
    assert p.seconds > 0 and p.calibration.points >= 1 and "model-steps" in p.describe()
    assert len(refinement_runs(cfgs, 2)) == 2 * 4  # per (cell, h, seed) unit, one run a round
    lines = dry_run_report(cfgs, "cpu", 1, refine_rounds=1)
    assert lines[0].startswith("first round: 4 runs") and lines[-1].startswith("projected total: ")


def test_format_seconds():
    assert [format_seconds(s) for s in (42, 1020, 3.2 * 3600, 2.5 * 86400)] == ["42 s", "17 min", "3.2 h", "2.5 days"]
