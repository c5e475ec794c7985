"""Training the E7 block: stacked runs (protocol E7; chapter *GPT-2 block*).

Stacked runs: R runs with the same shapes (configs equal but for ``seed``) are
one program; every parameter has a leading run axis, the loss is the sum over
runs of each run's mean loss, and AdamW works elementwise, so each run's
update is the one it would get alone. Each run's randomness (its derangement,
its initial weights, its training/validation/test examples) comes from its own
seed through :mod:`rgr.task.rng`.

The model and the task are in :mod:`rgr.gpt2.block`; what the experiment's table is (its grid, keys, a
preset's cost) in :mod:`rgr.gpt2.experiment`; how its stacks train for the runner is :class:`GPT2Trainer`, at the
end of this module, which :mod:`rgr.trainers` alone imports.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pandas as pd
import torch
import torch.nn.functional as F

from ..experiments.engine.graphed import StepProgram, graphs_enabled
from ..experiments.runner import DeadlineExceeded, Sweepable
from ..task.graphs import permutation_graph
from ..task.rng import stream_key
from .block import GAINS, MATRICES, TaskBatch, block_logits, init_params, sample_task
from .experiment import SCHEMA, Config, GPT2Sweep
from .items import load_items
from .table import ItemTable, StandInSpec, stand_in_items

# ----------------------------------------------------------------------------- embeddings


def item_table(cfg: Config) -> ItemTable:
    """The config's table: GPT-2's (saved or local copy; an error if neither) or the stand-in."""
    if cfg.embeddings == "stand-in":
        return stand_in_items(cfg.m, StandInSpec(d_model=cfg.d_model))
    return load_items(cfg.m)


# ----------------------------------------------------------------------------- training


_PRECISIONS = ("auto", "fp32", "bf16")


def resolve_precision(precision: str, device: torch.device) -> str:
    """"auto": bf16 autocast on CUDA (the protocol's mixed precision), fp32 elsewhere; "bf16" on a CPU is the
    CUDA path's twin (CPU autocast), for tests."""
    if precision not in _PRECISIONS:
        raise ValueError(f"precision must be one of {_PRECISIONS}, got {precision!r}")
    return ("bf16" if device.type == "cuda" else "fp32") if precision == "auto" else precision


def _autocast(device: torch.device, precision: str):
    """bf16 autocast (mixed precision: matmuls in bf16, reductions and the loss in fp32), or plain fp32."""
    if precision != "bf16":
        return nullcontext()
    return torch.autocast(device.type, dtype=torch.bfloat16, cache_enabled=False)  # no cache: a CUDA graph replays it


_PRECISION_LABEL = {"bf16": "bf16 autocast", "fp32": "fp32"}  # the rows' ``precision`` column


@torch.no_grad()
def _accuracy(params, E, batch: TaskBatch, cfg: Config, device: torch.device, chunk: int,
              precision: str) -> torch.Tensor:
    """Per-run accuracy (R,) of argmax over the m + 1 classes, in chunks of examples."""
    correct = torch.zeros(batch.label.shape[0], device=device)
    n = batch.label.shape[1]
    for i in range(0, n, chunk):
        part = batch.take(i, i + chunk)
        with _autocast(device, precision):
            pred = block_logits(params, E, part, cfg).argmax(-1)
        correct += (pred == part.label).sum(1)
    return correct / n


def _train_stack(
    configs: list[Config],
    table: ItemTable,
    device: torch.device,
    tick: Callable[[int], None],
    precision: str = "fp32",
    deadline: float | None = None,
) -> list[dict]:
    """Train runs with equal shapes as one program; one row per run.

    ``deadline`` (``time.monotonic()`` seconds): after the first ``probe`` steps the stack's whole time is
    projected from them; a stack that would end past the deadline stops there with :class:`DeadlineExceeded`
    (its rows would be lost anyway: a stack's rows are written only when it ends).
    """
    c = configs[0]
    R, B = len(configs), c.batch_size
    t0 = time.perf_counter()
    E = table.head(c.m).table(device)  # (m + 1, d), frozen
    if E.shape[1] != c.d_model:
        raise ValueError(f"d_model={c.d_model} but the table has width {E.shape[1]}")
    pi = torch.stack([torch.from_numpy(permutation_graph(c.m, k.seed).pi) for k in configs]).to(device)  # (R, m)
    keys = {s: torch.tensor([stream_key(k.seed, s) for k in configs], device=device) for s in ("train", "val", "test")}

    def fixed_set(stream: str, n: int) -> TaskBatch:
        return sample_task(keys[stream], pi, torch.arange(n, device=device).expand(R, n), c.ell)

    val, test = fixed_set("val", c.n_val), fixed_set("test", c.n_test)
    params = {k: v.requires_grad_() for k, v in init_params(configs, device).items()}
    opt = torch.optim.AdamW(
        [
            {"params": [params[k] for k in MATRICES], "weight_decay": c.weight_decay},
            {"params": [params[k] for k in GAINS if k in params], "weight_decay": 0.0},
        ],
        lr=c.lr,
        betas=(c.beta1, c.beta2),
        fused=device.type == "cuda",  # one kernel per step on a GPU; the same update
        capturable=device.type == "cuda",  # its step count on the GPU: the whole step replays from a CUDA graph
    )
    best = {k: v.detach().clone() for k, v in params.items()}
    best_val = torch.full((R,), -1.0, device=device)
    best_step = torch.zeros(R, dtype=torch.long, device=device)
    window = min(100, c.steps)  # "final train loss": mean over the last `window` steps
    loss_tail = torch.zeros(R, device=device)
    # steps whose examples are drawn in one sampler call (the draws do not depend on it; a GPU takes more at once:
    # the sampler's rejection loop waits on the device once per round)
    block = 256 if device.type == "cuda" else 32
    probe = (min(c.steps // 2, 128), min(c.steps, 256))  # the deadline's projection times the steps between these
    per_run = torch.zeros(R, device=device)  # this step's loss per run, written by the step

    def body(pairs, query, succ, label) -> None:  # one AdamW step of every run; no host synchronisation
        opt.zero_grad(set_to_none=True)
        with _autocast(device, precision):
            logits = block_logits(params, E, TaskBatch(pairs, query, succ, label), c)  # (R, B, m + 1)
        loss = F.cross_entropy(logits.float().flatten(0, 1), label.flatten(), reduction="none")
        mean = loss.view(R, B).mean(1)  # (R,)
        mean.sum().backward()  # runs do not interact: each gets its own gradient
        opt.step()
        per_run.copy_(mean.detach())

    program: StepProgram | None = None
    marks: dict[int, float] = {}
    for step in range(1, c.steps + 1):
        if (step - 1) % block == 0:
            n = min(block, c.steps - step + 1) * B
            drawn = sample_task(keys["train"], pi, ((step - 1) * B + torch.arange(n, device=device)).expand(R, n),
                                c.ell)
        j = (step - 1) % block * B
        batch = drawn.take(j, j + B)
        inputs = (batch.pairs, batch.query, batch.succ, batch.label)
        if program is None:  # a CUDA graph on a GPU (RGR_CUDA_GRAPHS=0: eager), plain eager steps elsewhere
            graphs = graphs_enabled(device)
            program = StepProgram(body, inputs, capture=graphs and device.type == "cuda", static=graphs)
        program.step(*inputs)
        if step > c.steps - window:
            loss_tail += per_run.detach() / window
        if step % c.eval_interval == 0 or step == c.steps:
            acc = _accuracy(params, E, val, c, device, chunk=max(B, 256), precision=precision)
            better = acc > best_val  # strict: the earliest best checkpoint is kept
            best_val = torch.where(better, acc, best_val)
            best_step = torch.where(better, torch.full_like(best_step, step), best_step)
            for k, v in params.items():
                best[k] = torch.where(better.view(R, *([1] * (v.dim() - 1))), v.detach(), best[k])
        tick(1)
        if deadline is not None and probe[0] > 0 and step in probe:  # a one-step stack has nothing to project
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            marks[step] = time.perf_counter()
            if step == probe[1]:
                _check_deadline(marks, c, deadline)
    test_acc = _accuracy(best, E, test, c, device, chunk=max(B, 256), precision=precision)
    wall = time.perf_counter() - t0
    rows = []
    for r, cfg in enumerate(configs):
        rows.append(
            {
                **asdict(cfg),
                "test_acc": float(test_acc[r]),
                "best_val_acc": float(best_val[r]),
                "best_step": int(best_step[r]),
                "steps_done": int(c.steps),
                "final_train_loss": float(loss_tail[r]),
                "wall_s": wall,
                "stack_size": R,
                "device": str(device),
                "precision": _PRECISION_LABEL[precision],
                "embedding_source": table.source,
            }
        )
    return rows


def _check_deadline(marks: dict[int, float], c: Config, deadline: float) -> None:
    """Raise :class:`DeadlineExceeded` when the stack, at the pace of the steps between the two ``marks`` (step ->
    ``time.perf_counter()``, the device synchronised), ends past ``deadline`` (``time.monotonic()``); the checks
    and the test are counted at that pace, a third of a step per batch of examples (forward only)."""
    (a, ta), (b, tb) = sorted(marks.items())
    per_step = (tb - ta) / max(1, b - a)
    eval_steps = ((c.steps // c.eval_interval + 1) * c.n_val + c.n_test) / (3 * c.batch_size)
    left = per_step * (c.steps - b + eval_steps)
    if time.monotonic() + left > deadline:
        raise DeadlineExceeded(f"a stack of {c.steps:,} steps needs {left:,.0f} s more at {per_step * 1e3:.1f} "
                               f"ms/step; {max(0.0, deadline - time.monotonic()):,.0f} s are left")


def train_runs(
    configs: Sequence[Config],
    device: torch.device | str = "cpu",
    progress: Callable[[int, int], None] | None = None,
    max_stack: int = 64,
    table: ItemTable | None = None,
    precision: str = "auto",
    deadline: float | None = None,
) -> list[dict]:
    """Train every config; return one row per config, in the given order.

    Configs equal up to their seed are stacked (at most ``max_stack`` per
    program). Each row holds the config's fields and the results :data:`rgr.gpt2.experiment.SCHEMA` describes
    (``wall_s`` the stack's wall time, ``device`` where it ran). ``progress`` is a callable
    ``(steps_done, steps_total)``. ``table`` overrides the
    configs' embedding table (for tests and fixtures).
    ``precision``: :func:`resolve_precision` ("auto": bf16 autocast on CUDA, fp32 elsewhere). ``deadline``
    (``time.monotonic()`` seconds): a stack projected to end past it stops with :class:`DeadlineExceeded`
    after its first few hundred steps (:func:`_check_deadline`); stacks already finished are lost with it
    here, so a sweep trains one stack per call (:class:`rgr.gpt2.experiment.GPT2Sweep`).
    """
    configs = list(configs)
    if not configs:
        return []
    device = torch.device(device)
    precision = resolve_precision(precision, device)
    groups: dict[Config, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(c.shape_key(), []).append(i)
    total = sum(configs[idx[0]].steps * math.ceil(len(idx) / max_stack) for idx in groups.values())
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, total)

    rows: list[dict | None] = [None] * len(configs)
    tables: dict[tuple, ItemTable] = {}
    for key, idx in groups.items():
        tk = (key.embeddings, key.d_model)
        if table is not None:
            tab = table
        else:
            if tk not in tables:  # one table per source, large enough for every m asked of it
                m_max = max(c.m for c in configs if (c.embeddings, c.d_model) == tk)
                tables[tk] = item_table(replace(key, m=m_max))
            tab = tables[tk]
        for j in range(0, len(idx), max_stack):
            part = idx[j : j + max_stack]
            stack = _train_stack([configs[i] for i in part], tab, device, tick, precision, deadline)
            for i, row in zip(part, stack):
                rows[i] = row
    return rows  # type: ignore[return-value]


# ----------------------------------------------------------------------------- the runner's trainer

@dataclass(frozen=True)
class GPT2Trainer(Sweepable):
    """E7 as :func:`rgr.experiments.runner.run_sweep` trains it."""

    table: GPT2Sweep
    honours_deadline: bool = True  # a stack projects itself after its first steps (train_runs)

    def dry_run_report(self, preset: str, device, workers: int = 1, shard: tuple[int, int] = (0, 1),
                       done: pd.DataFrame | None = None, max_stack: int | None = None,
                       root: Path | None = None) -> list[str]:
        """What ``sweep gpt2 --dry-run`` prints: the runs, and their time from a short bench of the preset's cheapest
        and costliest stacks here (:mod:`rgr.gpt2.bench`: measured pace, one process per worker)."""
        from .bench import project_minutes, time_stack

        runs = self.planned_runs(preset, None, shard)
        have = set() if done is None or not len(done) else set(done["run_key"])
        pending = [c for c in runs if self.run_key(c, preset) not in have]
        head = f"gpt2/{preset}: {len(runs)} runs of {runs[0].steps:,} steps; {len(pending)} pending"
        if not pending:
            return [head, "nothing to train"]
        shapes = sorted({c.shape_key() for c in runs}, key=lambda c: (c.D_K, c.h))
        size = sum(c.shape_key() == shapes[0] for c in runs)
        dev = torch.device(device if isinstance(device, str) else device.type)
        paces = [time_stack(c, size, dev, steps=20, warmup=3) for c in (shapes[0], shapes[-1])]
        minutes = project_minutes(preset, paces) * len(pending) / len(runs) / max(1, workers)
        return [head, f"projected {minutes / 60:.1f} h on {workers} worker(s) ({dev.type}; stacks of {size} timed "
                      f"here for 20 steps at D_K = {shapes[0].D_K} and {shapes[-1].D_K}: "
                      f"{paces[0].ms_per_step:.0f}-{paces[1].ms_per_step:.0f} ms per stacked step)"]

    def stack_key(self, cfg: Config) -> Config:
        return cfg.shape_key()  # the seeds of one (D_K, h) shape

    def train_rows(self, configs: list[Config], preset: str, device: torch.device,
                   deadline: float | None = None) -> list[dict]:
        """One stack's rows; bf16 autocast on CUDA, fp32 on a CPU (the ``precision`` column says which)."""
        results = train_runs(configs, device=device, max_stack=len(configs), deadline=deadline)
        return [{**{c.name: res.get(c.name) for c in SCHEMA.columns}, **dataclasses.asdict(cfg), "d_k": cfg.d_k}
                for res, cfg in zip(results, configs)]
