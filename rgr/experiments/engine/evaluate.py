"""Validation checks and test evaluation of a stack (chapter *permutation sweeps*).

Validation: micro-F1 (or MSE for "value") on the run's fixed "val" contexts
every ``check_every`` steps, with the protocol's early stop; test: the metric
on the fixed "test" contexts with the learned tau, at the stop.
"""

from __future__ import annotations

import dataclasses
from typing import Sequence

import torch

from ...model.qk import QKModel, context_scores
from ...task.contexts import sample_stacked
from ...task.metrics import Counts, counts
from ..futility import futile
from .config import RunResult
from .stack import Stack, blocks, context_blocks, gather, stream_keys

__all__ = ["check", "test", "evaluate_runs", "evaluate_group"]


def _eval_chunk(R: int, ell: int, h: int, D_K: int, d: int, eval_elems: int) -> int:
    per_ctx = R * ell * max(h * ell, 2 * D_K, d, ell)
    return max(1, eval_elems // per_ctx)


@torch.no_grad()
def evaluate_group(
    model: QKModel, X: torch.Tensor, items: torch.Tensor, labels: torch.Tensor, by_pairs: bool, eval_elems: int
) -> torch.Tensor:
    """Per-run sums over contexts (R, n, ...): (R, 3) [tp, fp, fn], or (R, 2) [sse, count] for "value"."""
    R, n, ell = items.shape
    if by_pairs:
        table = model.pair_scores(X)  # (R, m, m)
        score = lambda it: context_scores(table, it)
    else:
        tables = model.item_tables(X)  # every item projected once
        score = lambda it: model.scores_from_tables(tables, it)
    V = torch.bmm(X, model.W_V) if model.kind == "value" else None  # (R, m, d_msg) messages
    total = torch.zeros(R, 2 if V is not None else 3, dtype=torch.float64, device=X.device)
    for a, b in blocks(0, n, _eval_chunk(R, ell, model.h, model.D_K, model.d_model, eval_elems)):
        S = score(items[:, a:b])  # (R, c, ell, ell)
        y = labels[:, a:b]
        if V is not None:
            V_C = gather(V, items[:, a:b])  # (R, c, ell, d_msg)
            T = y.to(V_C.dtype) @ V_C
            valid = y.any(-1, keepdim=True)  # (R, c, ell, 1)
            total[:, 0] += ((S @ V_C - T).square() * valid).sum((1, 2, 3)).double()
            total[:, 1] += valid.sum((1, 2, 3)).double() * V_C.shape[-1]
        else:
            c = counts(model.predict_edges(S), y)
            total += torch.stack([c.tp, c.fp, c.fn], dim=1)
    return total


def evaluate_runs(
    model: QKModel,
    X: torch.Tensor,
    ms: Sequence[int],
    items: torch.Tensor,
    labels: torch.Tensor,
    eval_elems: int,
    n_set: int,
) -> torch.Tensor:
    """Per-run sums over contexts, as :func:`evaluate_group`, for runs with ``ms`` items each.

    A run's scores come from a table of all its item pairs when that is the
    cheaper way for its whole set of ``n_set`` contexts (a context-free
    aggregation, m^2 <= n_set ell^2, and m^2 <= 32 eval_elems), else from
    per-item queries and keys gathered per context. The choice depends on the
    run alone, never on the stack it is in.
    """
    R, n, ell = items.shape
    pairs = [model.aggregation != "softmax" and m * m <= min(n_set * ell * ell, 32 * eval_elems) for m in ms]
    groups: list[tuple[list[int], bool]] = [([i for i in range(R) if not pairs[i]], False)]
    by_pairs = [i for i in range(R) if pairs[i]]
    per = max(1, 32 * eval_elems // max([ms[i] ** 2 for i in by_pairs], default=1))  # runs per pair-table group
    groups += [(by_pairs[j : j + per], True) for j in range(0, len(by_pairs), per)]
    out = torch.zeros(R, 2 if model.kind == "value" else 3, dtype=torch.float64, device=X.device)
    for idx, use_pairs in groups:
        if not idx:
            continue
        m = max(ms[i] for i in idx)
        rows = torch.tensor(idx, device=X.device)
        if len(idx) == R and m == X.shape[1]:  # the whole stack, unpadded (idx is 0..R-1): its tensors as they are
            out[rows] = evaluate_group(model, X, items, labels, use_pairs, eval_elems)
        else:
            sub = model.select(rows)
            out[rows] = evaluate_group(sub, X[rows, :m], items[rows], labels[rows], use_pairs, eval_elems)
    return out


def _metric(model: QKModel, ev: torch.Tensor) -> list[float]:
    if model.kind == "value":
        return (ev[:, 0] / ev[:, 1].clamp_min(1)).tolist()
    return Counts(ev[:, 0], ev[:, 1], ev[:, 2]).f1.tolist()


def test(
    st: Stack, keep: list[int], block_elems: int, eval_elems: int, keep_weights: bool, reasons: dict[int, str]
) -> list[tuple[int, RunResult]]:
    """Evaluate runs ``keep`` of the stack on their test contexts and build their results."""
    sub = st.select(keep) if len(keep) < st.R else st
    c0, R, dev = sub.cfgs[0], sub.R, sub.X.device
    keys = stream_keys(sub.cfgs, "test", dev)
    total = None
    for a, b in context_blocks(R, c0.ell, c0.n_test, block_elems):
        batch = sample_stacked(sub.table, keys, torch.arange(a, b, device=dev).expand(R, -1), c0.ell, c0.rho)
        part = evaluate_runs(sub.model, sub.X, [c.m for c in sub.cfgs], batch.items, batch.labels, eval_elems,
                             c0.n_test)
        total = part if total is None else total + part
    w = sub.model.weights()
    out = []
    for j, i in enumerate(keep):
        cfg = sub.cfgs[j]
        common = dict(config=cfg, steps=st.step, stop_reason=reasons[i], val_curve=tuple(st.tracks[i].curve))
        if cfg.model == "value":
            res = RunResult(**common, test_mse=float(total[j, 0] / total[j, 1].clamp_min(1)))
        else:
            c = Counts(total[j : j + 1, 0], total[j : j + 1, 1], total[j : j + 1, 2])
            res = RunResult(
                **common,
                test_f1=float(c.f1),
                test_precision=float(c.precision),
                test_recall=float(c.recall),
                tau=float(w.tau[j]),
            )
        if keep_weights:
            W_Q, W_K = sub.model.run_weights(j)  # the run's own (h, d_model, d_k): padding cut off
            weights = {"W_Q": W_Q.cpu(), "W_K": W_K.cpu(), "tau": w.tau[j].cpu().clone()}
            if sub.model.W_V is not None:
                weights["W_V"] = sub.model.W_V[j].cpu().clone()
            res = dataclasses.replace(res, weights=weights)
        out.append((sub.ids[j], res))
    return out


def check(st: Stack, due: list[int], eval_elems: int) -> dict[int, str]:
    """Validation check of runs ``due``; returns {position: stop reason} of the runs that stop now."""
    stops: dict[int, str] = {}
    if due:
        sub = st.select(due) if len(due) < st.R else st
        ev = evaluate_runs(sub.model, sub.X, [c.m for c in sub.cfgs], sub.val_items, sub.val_labels, eval_elems,
                           sub.cfgs[0].n_val)
        values = _metric(st.model, ev)
        for i, v in zip(due, values):
            cfg, tr = st.cfgs[i], st.tracks[i]
            tr.curve.append((st.step, v))
            if cfg.metric == "f1":
                tr.streak = tr.streak + 1 if v > cfg.f1_stop else 0
            else:
                improved = v < tr.best * (1 - cfg.mse_tol)
                tr.best = min(tr.best, v)
                tr.streak = 0 if improved else tr.streak + 1
            if tr.streak >= cfg.patience:
                stops[i] = "converged"
            elif st.step < cfg.max_steps and futile(cfg.futility, tr.curve, cfg.max_steps):
                stops[i] = "futile"
    for i, cfg in enumerate(st.cfgs):
        if i not in stops and st.step >= cfg.max_steps:
            stops[i] = "cutoff"
    return stops
