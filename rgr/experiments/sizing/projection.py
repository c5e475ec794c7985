"""Know before you start: runs, an upper bound on model-steps, and a projected wall time (chapter *permutation sweeps*).

:func:`project` takes the runs a sweep would train, forms their stacks as the
engine will (:func:`rgr.experiments.engine.config.stack_groups`), and projects the
wall time of each stack from a cost model,

    stack = sum over steps (a + r R + b F_step) + sum over checks and the test (c + e F_check) + s R_0

    F_step  = R * h * d_k * (8 ell d_model + 6 ell^2)   (padded matmul FLOPs of one step of R active runs)
    F_check = R * n_val * h * d_k * (4 ell d_model + 2 ell^2)

with R the runs still active (a run leaves the stack at its cutoff), R_0 the stack's runs (setup: tasks,
init, validation contexts) and the test of each run costing like n_test / n_val checks. ``r`` is what each
active run costs per step beyond its FLOPs (sampling contexts, gathers, the optimizer's per-run work). The
coefficients come from one of two calibrations:

* :func:`calibrate` (``source="timed"``): a few of the very stacks to project, *whole* (every run; slices of a
  large stack ran 13x short of its per-run costs), are built and timed for a fraction of a second of steps (the
  fastest of three stretches) at all their runs and at half of them (so a per-run cost separates from a
  per-FLOP one), and one check of a few runs; non-negative least squares on relative error. Process-CPU
  seconds on a CPU: what one dedicated core takes, whatever else the machine runs meanwhile (so a loaded
  machine's wall time runs longer); wall seconds on CUDA.
* :func:`calibrate_from_history` (``source="history"``): the same model fitted to the wall times of a table's
  finished stacks (rows sharing date and stack size), each at the steps its runs actually took: the machine
  as it was while the table was written, load included. :func:`dry_run_report` uses it when the table already
  holds enough finished stacks that reach the pending runs' sizes, and says which it used.

The projection is an *upper bound* in steps (every run trains to its cutoff; the protocol's early stop only
shortens it) and an estimate in seconds. Stacks are spread over ``workers`` processes by longest-first
assignment. Nothing is written.

With futility stopping (:mod:`rgr.experiments.futility`) a run rarely trains to its
cutoff; ``futility_share`` (the model-steps a replay of the rule kept, as a share
of the bound, on a finished table: :func:`rgr.experiments.futility.kept_share`)
scales the time of each stack's runs that have the rule: an estimate, not a bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import pandas as pd
import torch

from ...protocol import GPU_FP32_PEAK, GPU_UTILIZATION
from ..engine.config import RunConfig, resolve_device, stack_groups
from .calibration import Calibration, calibrate, cost_terms, features, pick_calibration


def model_steps_bound(configs: Sequence[RunConfig]) -> int:
    """Upper bound on the model-steps (one run advancing one step) of training ``configs``: every cutoff reached."""
    return sum(c.max_steps for c in configs)


def _matmul_flops(configs: Sequence[RunConfig], futility_share: float | None = None) -> float:
    """Matmul FLOPs of training ``configs`` alone (no padding), every run to its cutoff with its checks and test;
    runs with futility stopping scaled by ``futility_share`` (an estimate; the bound without it)."""
    total = 0.0
    for c in configs:
        step, check = features([c], 1)
        run = c.max_steps * step + (c.max_steps // c.check_every + c.n_test / c.n_val) * check
        total += run * (futility_share if c.futility and futility_share is not None else 1.0)
    return total


def _stack_seconds(cfgs: Sequence[RunConfig], cal: Calibration) -> float:
    """Upper-bound seconds of one stack: every run trains to its cutoff, checked every check_every steps; the
    test (n_test contexts) costs like n_test / n_val checks (:func:`cost_terms`)."""
    return float(cost_terms(cfgs) @ cal.coefficients)


@dataclass(frozen=True)
class _Projection:
    """What a set of runs will cost: runs, stacks, an upper bound on model-steps, projected seconds."""

    runs: int
    stacks: int
    model_steps: int  # upper bound: every run to its cutoff
    seconds: float  # projected wall time on `workers` processes (upper bound in steps)
    cpu_seconds: float  # the same summed over workers
    device: str
    workers: int
    calibration: Calibration
    expected_steps: int | None = None  # with futility stopping: the bound scaled by the replay's kept share

    @property
    def rate(self) -> float:
        """Projected model-steps per second per worker."""
        steps = self.model_steps if self.expected_steps is None else self.expected_steps
        return steps / max(self.cpu_seconds, 1e-12)

    def describe(self) -> str:
        rule = ("" if self.expected_steps is None else
                f", about {self.expected_steps:,} with futility stopping (the replay's kept share)")
        return (f"{self.runs} runs in {self.stacks} stacks; at most {self.model_steps:,} model-steps{rule}; projected "
                f"{_format_seconds(self.seconds)} on {self.workers} worker(s) ({self.device}; "
                f"~{self.rate:,.0f} model-steps/s per worker, {self.calibration.describe()})")


def _format_seconds(s: float) -> str:
    """Seconds as a short human reading: 42 s, 17 min, 3.2 h, 2.5 days."""
    if s < 120:
        return f"{s:.0f} s"
    if s < 2 * 3600:
        return f"{s / 60:.0f} min"
    if s < 2 * 86400:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} days"


def project(
    configs: Sequence[RunConfig],
    device: str | torch.device = "cpu",
    workers: int = 1,
    calibration: Calibration | None = None,
    max_stack: int | None = None,
    futility_share: float | None = None,
) -> _Projection:
    """Project the wall time of training ``configs`` on ``workers`` processes of ``device`` (see the module docstring).

    ``calibration`` defaults to :func:`calibrate` on these configs (a few seconds). ``futility_share``: the share of
    its bound a run with futility stopping is expected to train (None: every run to its cutoff, a bound).
    """
    configs = list(configs)
    if not configs:
        raise ValueError("configs must hold at least one RunConfig")
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    dev = resolve_device(device)
    if futility_share is not None and not 0.0 < futility_share <= 1.0:
        raise ValueError(f"futility_share must be in (0, 1], got {futility_share}")
    cal = calibration if calibration is not None else calibrate(configs, dev)
    keep = 1.0 if futility_share is None else futility_share
    groups = [[configs[i] for i in g] for g in stack_groups(configs, max_stack, dev)]
    times = sorted((_stack_seconds(g, cal) * _kept(g, keep) for g in groups), reverse=True)
    load = [0.0] * workers
    for t in times:  # longest first, each to the least loaded worker
        load[load.index(min(load))] += t
    expected = None
    if futility_share is not None:
        expected = round(sum(c.max_steps * (keep if c.futility else 1.0) for c in configs))
    return _Projection(runs=len(configs), stacks=len(times), model_steps=model_steps_bound(configs), seconds=max(load),
                      cpu_seconds=sum(times), device=str(dev), workers=workers, calibration=cal,
                      expected_steps=expected)


def _kept(cfgs: Sequence[RunConfig], share: float) -> float:
    """The expected share of a stack's bound: its runs with futility stopping keep ``share`` of theirs."""
    ruled = sum(1 for c in cfgs if c.futility) / len(cfgs)
    return 1.0 - ruled * (1.0 - share)


def _refinement_runs(configs: Sequence[RunConfig], rounds: int, at: str = "median",
                    dk_max: int | None = None) -> list[RunConfig]:
    """Stand-ins for the runs ``rounds`` refinement rounds may add: per (cell, h) unit and seed, one run per round.

    ``at="median"``: at the unit's median first-round D_K (a bisection point lies between tested ones);
    ``at="extend"``: at twice its largest (up to ``dk_max``), where a unit that never reached the target
    extends — the costliest a round can be. Measured on the base paper preset, round 1 cost between the two.
    """
    if at not in ("median", "extend"):
        raise ValueError(f"at must be 'median' or 'extend', got {at!r}")
    units: dict[tuple, list[RunConfig]] = {}
    for c in configs:
        units.setdefault((c.m, c.d_model, c.r, c.h, c.model, c.graph, c.seed), []).append(c)
    out = []
    for runs in units.values():
        by_dk = sorted(runs, key=lambda c: c.D_K)
        if at == "median":
            pick = by_dk[len(by_dk) // 2]
        else:
            top = by_dk[-1]
            pick = replace(top, d_k=2 * top.d_k) if dk_max is None or 2 * top.D_K <= dk_max else top
        out += [pick] * rounds
    return out


def dry_run_report(
    configs: Sequence[RunConfig], device: str | torch.device = "cpu", workers: int = 1, refine_rounds: int = 0,
    pending: Sequence[RunConfig] | None = None, dk_max: int | None = None, futility_share: float | None = None,
    history: pd.DataFrame | None = None, max_stack: int | None = None,
) -> list[str]:
    """The lines ``sweep --dry-run`` prints (one calibration for all of them).

    ``configs``: the first round's runs. ``pending``: on a resumed sweep, the runs the current round still has
    to train (projected exactly, in place of the first round). With refinement rounds, their bound and a range
    of estimates: stand-ins at each unit's median D_K and at twice its largest (:func:`_refinement_runs`).
    ``history``: the table's rows of this preset; their finished stacks calibrate the projection
    (:func:`pick_calibration`) when there are enough of them, else a timed calibration here does. ``max_stack``:
    the sweep's ``--max-stack`` (None: the engine's own cap, :func:`rgr.experiments.engine.config.stack_groups`),
    so stacks are projected as they will train.
    """
    configs = list(configs)
    todo = configs if pending is None else list(pending)
    cal = pick_calibration([*todo, *configs] if pending is not None else configs, device, history)
    total_lo = total_hi = 0.0
    if todo:
        now = project(todo, device, workers, cal, max_stack, futility_share)
        label = "first round" if pending is None else "this round (the runs not yet in the table)"
        lines = [f"{label}: {now.describe()}"]
        total_lo = total_hi = now.seconds
    else:
        lines = ["this round: nothing left to train"]
    if refine_rounds > 0:
        lo = project(_refinement_runs(configs, 1), device, workers, cal, max_stack, futility_share)
        hi = project(_refinement_runs(configs, 1, "extend", dk_max), device, workers, cal, max_stack, futility_share)
        total_lo += refine_rounds * lo.seconds
        total_hi += refine_rounds * max(lo.seconds, hi.seconds)
        lines.append(f"refinement: up to {refine_rounds} round(s) of at most {lo.runs} runs each, "
                     f"{_span(lo.seconds, max(lo.seconds, hi.seconds))} per round "
                     "(stand-ins at each (cell, h)'s median "
                     "D_K, and at twice its largest, as when every unit extends)")
    flops = _matmul_flops([*todo, *(_refinement_runs(configs, refine_rounds) if refine_rounds else [])], futility_share)
    lines.append(f"matmul FLOPs: {flops:.2e}; one GPU at {100 * GPU_UTILIZATION:.0f}% of an H100's float32 peak "
                 f"({GPU_FP32_PEAK / 1e12:.0f} TFLOP/s): {_format_seconds(flops / (GPU_FP32_PEAK * GPU_UTILIZATION))} "
                 "(an estimate from the FLOP count, with refinement stand-ins at the median D_K; not a measurement)")
    kind = ("an upper bound in steps (runs that converge stop early)" if futility_share is None else
            f"an estimate: runs with futility stopping at {100 * futility_share:.0f}% of their bound, the share a "
            "replay of the rule kept on base's paper rows")
    lines.append(f"projected total: {_span(total_lo, total_hi)} on {workers} worker(s) ({cal.device}); {kind}; "
                 f"{cal.describe()} (README, 'Know before you start': how far off it has been)")
    return lines


def _span(lo: float, hi: float) -> str:
    a, b = _format_seconds(lo), _format_seconds(hi)
    return a if a == b else f"{a} to {b}"
