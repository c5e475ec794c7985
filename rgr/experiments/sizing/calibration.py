"""The cost model behind the dry run's projected time (chapter *permutation sweeps*; used by
:mod:`rgr.experiments.sizing.projection`): what a stack does (:func:`cost_terms`) and two calibrations of its
coefficients, timed here (:func:`calibrate`) or fitted to a table's finished stacks (:func:`calibrate_from_history`);
:func:`pick_calibration` chooses. The model and both calibrations are described in projection's docstring."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd
import torch
from scipy.optimize import nnls

from ..engine.config import RunConfig, resolve_device, stack_groups, stack_shape, sync
from ..engine.loop import check, train_steps
from ..engine.stack import build_stack

_MIN_HISTORY_STACKS = 8  # finished stacks a table needs before its own wall times calibrate the projection


def features(cfgs: Sequence[RunConfig], R: int) -> tuple[float, float]:
    """Padded matmul FLOPs of one step and of one validation check of ``R`` active runs of a stack of ``cfgs``.

    A run's step, with D = H w: forward, the Q and K projections 2 (2 ell d D) and the scores 2 ell^2 D; backward,
    both projections' weight gradients 2 (2 ell d D) (X_C needs none) and dQ, dK from the scores 2 (2 ell^2 D)."""
    H, w = stack_shape(cfgs)
    c0 = cfgs[0]
    ell, d = c0.ell, c0.d_model
    return R * H * w * (8 * ell * d + 6 * ell * ell), R * c0.n_val * H * w * (4 * ell * d + 2 * ell * ell)


@dataclass(frozen=True)
class Calibration:
    """Seconds per stack step ``a + r R + b F_step``, per check ``c + e F_check``, per run's setup ``s``.

    ``source``: "timed" (stacks timed here, :func:`calibrate`) or "history" (a table's finished stacks,
    :func:`calibrate_from_history`); ``points``: the stacks it was fitted to."""

    a: float
    b: float
    c: float
    e: float
    device: str
    points: int  # stacks timed (or, from history, finished stacks fitted)
    r: float = 0.0
    s: float = 0.0
    source: str = "timed"

    @property
    def coefficients(self) -> np.ndarray:
        """(a, r, b, c, e, s): the weights of :func:`cost_terms`."""
        return np.array([self.a, self.r, self.b, self.c, self.e, self.s])

    def describe(self) -> str:
        if self.source == "history":
            return f"calibrated on the wall times of {self.points} finished stacks of this table"
        return f"calibrated on {self.points} whole stacks timed here, CPU seconds"


def cost_terms(cfgs: Sequence[RunConfig]) -> np.ndarray:
    """What one stack of ``cfgs`` does, each run to its ``max_steps``: (stack steps, model-steps, step FLOPs,
    checks with the test, check FLOPs with the test, runs); its seconds are these times (a, r, b, c, e, s)."""
    every, tests = cfgs[0].check_every, cfgs[0].n_test / cfgs[0].n_val
    cut = sorted(c.max_steps for c in cfgs)
    terms = np.zeros(6)
    t, R = 0, len(cut)
    for stop in cut:  # between two cutoffs the stack has R active runs
        if stop > t:
            n, k = stop - t, stop // every - t // every
            f_step, f_check = features(cfgs, R)
            terms += (n, n * R, n * f_step, k, k * f_check, 0)
            t = stop
        R -= 1
    return terms + (0, 0, 0, tests, tests * features(cfgs, len(cut))[1], len(cut))


def _fit_relative(terms: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """Non-negative least squares of seconds ~ terms @ w on relative error (each point weighs alike)."""
    scale = terms.max(axis=0)
    scale[scale == 0] = 1.0
    w, _ = nnls(terms / scale / seconds[:, None], np.ones(len(seconds)))
    return w / scale


def _fit_line(x: list[float], y: list[float]) -> tuple[float, float]:
    """Least-squares y = a + b x with a, b >= 0 (a through-origin or constant fit when one comes out negative)."""
    A = torch.tensor([[1.0, xi] for xi in x], dtype=torch.float64)
    t = torch.tensor(y, dtype=torch.float64)
    if len(set(x)) > 1:
        a, b = torch.linalg.lstsq(A, t.unsqueeze(1)).solution.squeeze(1).tolist()
        if a >= 0 and b >= 0:
            return a, b
    b = float((A[:, 1] @ t) / (A[:, 1] @ A[:, 1]).clamp_min(1e-300))
    return (0.0, b) if b > 0 else (float(t.mean()), 0.0)


def calibrate(
    configs: Sequence[RunConfig], device: str | torch.device = "cpu", points: int = 4, seconds: float = 0.25,
    build_runs: int = 8, threads: int = 1,
) -> Calibration:
    """Time up to ``points`` of the stacks of ``configs`` (smallest, largest and between, by padded work) whole,
    on ``device``: their setup, about ``seconds`` of steps (in blocks of contexts, as the engine draws them) at all
    their runs and at half of them, and one check (of the built runs); fit (a, r, b), (c, e) and s (see the module
    docstring). Only ``build_runs`` of a stack's runs are built (its largest m, h and d_k among them), repeated to
    its size: a step costs the same, and a setup of hundreds of graphs would be most of the calibration. On a CPU
    with ``threads`` torch threads, as a sweep's worker trains (``--threads``, default 1): the process-CPU seconds
    of more threads count their spinning too (README, 'Know before you start')."""
    dev = resolve_device(device)
    before = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(threads)
    try:
        groups = [[configs[i] for i in g] for g in stack_groups(configs, None, dev)]
        if not groups:
            raise ValueError("configs must hold at least one RunConfig")
        groups.sort(key=lambda g: features(g, len(g))[0])
        picks = sorted({round(j * (len(groups) - 1) / max(1, points - 1)) for j in range(points)})
        steps, ys, checks, yc, setup = [], [], [], [], []
        clock = time.process_time if dev.type == "cpu" else time.perf_counter  # CPU: per-core work, steady under load
        for j in picks:
            cfgs = groups[j]
            few = _representatives(cfgs, build_runs)
            t0 = clock()
            built = build_stack(few, list(range(len(few))), dev, 1 << 24)
            sync(dev)
            setup.append((clock() - t0) / len(few))
            full = built.select([i % len(few) for i in range(len(cfgs))])  # the whole stack's R, its runs repeated
            for st in [full, full.select(list(range((len(cfgs) + 1) // 2)))] if len(cfgs) > 1 else [full]:
                train_steps(st, 0, 2, 1 << 24)  # warm-up
                sync(dev)
                t0 = clock()
                train_steps(st, 2, 4, 1 << 24)  # a first guess of the step time
                sync(dev)
                n = int(min(cfgs[0].check_every, max(1, seconds / ((clock() - t0) / 2) / 3)))
                per = []
                for k in range(3):  # the fastest of three stretches: other work on a shared core only slows one down
                    t0 = clock()
                    train_steps(st, 4 + k * n, 4 + (k + 1) * n, 1 << 24)
                    sync(dev)
                    per.append((clock() - t0) / n)
                steps.append((1.0, st.R, features(st.cfgs, st.R)[0]))
                ys.append(min(per))
            t0 = clock()  # a check is FLOPs (c + e F_check), most of the calibration on a whole stack: its built runs
            check(built, list(range(built.R)), 1 << 19)
            sync(dev)
            checks.append(features(cfgs, built.R)[1])
            yc.append(clock() - t0)
        a, r, b = _fit_relative(np.array(steps), np.array(ys))
        c, e = _fit_line(checks, yc)
        return Calibration(a=a, b=b, c=c, e=e, device=str(dev), points=len(picks), r=r, s=float(np.median(setup)))
    finally:
        torch.set_num_threads(before)


def _representatives(cfgs: Sequence[RunConfig], k: int) -> list[RunConfig]:
    """At most ``k`` runs of a stack with its padded shape: the runs of largest m, h and d_k first."""
    top = [max(cfgs, key=lambda c: (c.m, c.h, c.d_k)), max(cfgs, key=lambda c: c.h), max(cfgs, key=lambda c: c.d_k)]
    few = list(dict.fromkeys([*top, *cfgs]))[:max(k, 3)]
    return few if stack_shape(few) == stack_shape(cfgs) else list(cfgs)


def _history_stacks(rows: pd.DataFrame) -> list[tuple[list[RunConfig], float]]:
    """The whole stacks among a table's trained rows (not reused; trained on a CPU; rows sharing date and stack
    size), each as its runs' configs at the steps they actually took and the stack's measured wall seconds (the
    sum of its rows'). A GPU's rows (``device_name`` not a CPU's) are left out: they would not time a CPU."""
    if "reused_from" in rows:
        rows = rows[rows["reused_from"].isna() | (rows["reused_from"].astype(str) == "")]
    if "device_name" in rows:
        rows = rows[rows["device_name"].astype(str).str.startswith("cpu")]
    names = [f.name for f in dataclasses.fields(RunConfig)]
    out = []
    for (_, size), g in rows.groupby(["date", "stack_size"], sort=True):
        if len(g) != int(size):
            continue  # part of the stack is elsewhere (another shard, a merge): not a measurement of it
        cfgs = []
        for rec in g.to_dict("records"):
            kw = {k: (v.item() if hasattr(v, "item") else v) for k, v in rec.items() if k in names and not pd.isna(v)}
            cfgs.append(RunConfig(**{**kw, "max_steps": int(rec["steps"])}))
        out.append((cfgs, float(g["wall_time_s"].sum())))
    return out


def calibrate_from_history(rows: pd.DataFrame, min_stacks: int = _MIN_HISTORY_STACKS) -> Calibration | None:
    """The cost model fitted to the wall times of a table's finished stacks (:func:`_history_stacks`), each at its
    runs' actual steps; None with fewer than ``min_stacks`` of them. Wall seconds of the machine as it was."""
    return _fit_history(_history_stacks(rows), min_stacks)


def _fit_history(stacks: list[tuple[list[RunConfig], float]], min_stacks: int) -> Calibration | None:
    """:func:`calibrate_from_history` on stacks already read from the table."""
    if len(stacks) < min_stacks:
        return None
    w = _fit_relative(np.array([cost_terms(c) for c, _ in stacks]), np.array([max(t, 1e-9) for _, t in stacks]))
    a, r, b, c, e, s = (float(x) for x in w)
    return Calibration(a=a, b=b, c=c, e=e, device="cpu", points=len(stacks), r=r, s=s, source="history")


def pick_calibration(configs: Sequence[RunConfig], device: str | torch.device = "cpu",
                     history: pd.DataFrame | None = None) -> Calibration:
    """The table's own history (:func:`calibrate_from_history`) when ``history`` holds at least
    :data:`_MIN_HISTORY_STACKS` finished stacks, on a CPU, whose largest per-run step reaches half the largest of
    ``configs`` (no extrapolation far past what was measured); else :func:`calibrate` on ``configs``."""
    if history is not None and len(history) and resolve_device(device).type == "cpu":
        stacks = _history_stacks(history)
        seen = max((features([c], 1)[0] for cfgs, _ in stacks for c in cfgs), default=0.0)
        need = max(features([c], 1)[0] for c in configs)
        if seen >= need / 2:
            cal = _fit_history(stacks, _MIN_HISTORY_STACKS)
            if cal is not None:
                return cal
    return calibrate(configs, device)
