"""Findings of the chapter *value channel* (book/value_channel.ipynb; protocol E6).

The layer predicts ``sum_q S_pq y_q`` with the raw max-over-heads scores ``S`` as mixing weights. Zero
error needs a score of exactly 1 on the target and 0 on every other item in context: a regression onto
the permutation matrix P, not a sign test as in the F1 task. One head's score matrix
``X W_Q W_K^T X^T`` has rank at most d_model < m, while P has rank m; the share of P that the closest such matrix
misses is ``1 - d_model / m`` (Eckart–Young; the column "rank floor" of :func:`cells_table`). The table's MSE
is a mean over the d_msg coordinates of a message (the paper sums them: multiply by d_msg); every ratio here
divides it by the mean-message predictor's MSE, computed the same way, so the convention cancels.

- :func:`error_ratios` — test MSE / the mean predictor's, per (m, d_model, h, D_K);
- :func:`value_cells` — per cell: the first budget below a level, the best head counts, the F1 threshold;
- :func:`one_head_stopping` / :func:`stopping_effect` — one head with and without early stopping;
- :func:`trivial_mse_table` — the scale of a test MSE: two trivial predictors on the very same test contexts,
  the zero message and the mean message of all items. A trained layer that does not beat the mean message has
  learned nothing about where to attend. Both are, like the table's ``test_mse``, squared errors averaged over the
  d_msg coordinates of a message, so ratios against them do not depend on the convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..experiments.engine.config import DTYPES, RunConfig
from ..task.contexts import build_task, sample
from ..task.embeddings import value_projection
from .findings import int_or_none
from .stats import by_seed, paired_difference, summarize


def _rank_floor(m: int, d_model: int) -> float:
    """min over rank-d_model matrices S of ||S - P||_F^2 / ||P||_F^2 for an m x m permutation matrix P:
    (m - min(d_model, m)) / m, since all m singular values of P equal 1."""
    if m < 1 or d_model < 1:
        raise ValueError(f"m and d_model must be positive, got m={m}, d_model={d_model}")
    return (m - min(d_model, m)) / m


def paper_mse(mse: float, d_msg: int) -> float:
    """The table's per-coordinate MSE in the paper's convention (squared error summed over d_msg)."""
    return mse * d_msg


def error_ratios(runs: pd.DataFrame, baselines: pd.DataFrame) -> pd.DataFrame:
    """Mean test MSE and its 95% interval per (m, d_model, h, D_K), divided by the mean-message predictor's
    MSE of the cell (``baselines``: d_model, mse_mean, averaged over seeds): columns ratio, lo, hi; ``below_one``:
    this head count's error is below one head's at the same budget on paired seeds (95% interval below zero)."""
    s = summarize(runs, ["m", "d_model", "h", "D_K"], "test_mse")
    ref = s["d_model"].map(baselines.groupby("d_model")["mse_mean"].mean())
    below = [h != 1 and paired_difference(by_seed(runs, "test_mse", h, dk, m=m, d_model=d),
                                          by_seed(runs, "test_mse", 1, dk, m=m, d_model=d)).side() == "a lower"
             for m, d, h, dk in zip(s["m"], s["d_model"], s["h"], s["D_K"])]
    return s.assign(ratio=s["mean"] / ref, lo=s["lo"] / ref, hi=s["hi"] / ref, below_one=below)


@dataclass(frozen=True)
class _ValueCell:
    """One (m, d_model) cell of E6 beside the F1 threshold of the same cell (E1)."""

    m: int
    d_model: int
    n_budgets: int
    multi_head_best: int  # budgets where the lowest mean error has h > 1
    multi_head_paired: int  # ... and that head count's error is below one head's on paired seeds
    lowest_ratio: float
    first_solved_D_K: int | None  # smallest D_K whose mean error is <= solved x the mean predictor's
    first_solved_h: int | None
    one_head_solved_D_K: int | None
    one_head_best_ratio: float
    f1_D_K_star: int | None  # the F1 task's threshold in the same cell (None: not measured or not reached)
    f1_h_star: int | None

    @property
    def lam(self) -> float:
        return self.m / self.d_model

    @property
    def solved_over_f1(self) -> float:
        """First solved budget / the F1 threshold (NaN when either is missing)."""
        if self.first_solved_D_K is None or self.f1_D_K_star is None:
            return math.nan
        return self.first_solved_D_K / self.f1_D_K_star


def value_cells(ratios: pd.DataFrame, f1_cells: pd.DataFrame, solved: float) -> tuple[_ValueCell, ...]:
    """Per (m, d_model) of :func:`error_ratios`; ``f1_cells`` are the E1 rows of
    :func:`rgr.results.thresholds.thresholds` (may be empty); ``solved`` a fraction in (0, 1]."""
    if not 0 < solved <= 1:
        raise ValueError(f"solved must be in (0, 1], got {solved}")
    f1 = {(int(r.m), int(r.d_model)): r for r in f1_cells.itertuples()} if len(f1_cells) else {}
    out = []
    for (m, d), g in ratios.groupby(["m", "d_model"]):
        best = g.loc[g.groupby("D_K")["ratio"].idxmin()]
        ok, one = g[g.ratio <= solved].sort_values(["D_K", "ratio"]), g[g.h == 1].sort_values("D_K")
        one_ok, ref = one[one.ratio <= solved], f1.get((int(m), int(d)))
        out.append(_ValueCell(m=int(m), d_model=int(d), n_budgets=len(best), multi_head_best=int((best.h > 1).sum()),
                             multi_head_paired=int(((best.h > 1) & best.below_one.astype(bool)).sum()),
                             lowest_ratio=float(g.ratio.min()),
                             first_solved_D_K=int(ok.D_K.iloc[0]) if len(ok) else None,
                             first_solved_h=int(ok.h.iloc[0]) if len(ok) else None,
                             one_head_solved_D_K=int(one_ok.D_K.iloc[0]) if len(one_ok) else None,
                             one_head_best_ratio=float(one.ratio.min()) if len(one) else math.nan,
                             f1_D_K_star=int_or_none(getattr(ref, "D_K_star", None)),
                             f1_h_star=int_or_none(getattr(ref, "h_star", None))))
    return tuple(out)


def cells_table(cells: tuple[_ValueCell, ...]) -> pd.DataFrame:
    """The per-cell readings as the chapter's table."""
    cols = ["m", "d_model", "m/d_model", "F1 D_K*", "F1 h*", "first D_K below level", "its h",
            "one head: first D_K below", "lowest ratio", "one head: lowest ratio", "rank floor 1 - d_model/m",
            "budgets with best h > 1"]
    rows = [(c.m, c.d_model, c.lam, c.f1_D_K_star, c.f1_h_star, c.first_solved_D_K, c.first_solved_h,
             c.one_head_solved_D_K, c.lowest_ratio, c.one_head_best_ratio, _rank_floor(c.m, c.d_model),
             f"{c.multi_head_best} of {c.n_budgets}") for c in cells]
    out = pd.DataFrame(rows, columns=cols)
    for c in ("F1 D_K*", "F1 h*", "first D_K below level", "its h", "one head: first D_K below"):
        out[c] = out[c].astype("Int64")
    return out


def one_head_stopping(stopped: pd.DataFrame, full: pd.DataFrame, baselines: pd.DataFrame) -> pd.DataFrame:
    """One head's error ratio per (d_model, D_K) with early stopping (``stopped``: the E6 table) and trained
    to the step cutoff (``full``: the value_nostop table); long format with a ``stopping`` column."""
    parts = []
    for how, runs in (("early stop", stopped), ("to the cutoff", full)):
        one = runs[runs.h == 1]
        if len(one):
            r = error_ratios(one, baselines)
            steps = one.groupby(["d_model", "D_K"])["steps"].mean().rename("mean_steps").reset_index()
            parts.append(r.merge(steps, on=["d_model", "D_K"]).assign(stopping=how))
    cols = ["m", "d_model", "D_K", "stopping", "ratio", "lo", "hi", "n", "mean_steps"]
    return pd.concat(parts)[cols].reset_index(drop=True) if parts else pd.DataFrame(columns=cols)


@dataclass(frozen=True)
class _StoppingEffect:
    """Does one head's error still rise with D_K once early stopping is off? Per d_model, over the D_K both
    tables tested: the best ratio and the ratio at the largest D_K, with and without early stopping."""

    d_model: tuple[int, ...]
    best_stop: tuple[float, ...]
    top_stop: tuple[float, ...]
    best_full: tuple[float, ...]
    top_full: tuple[float, ...]
    best_D_K_full: tuple[int, ...]


def stopping_effect(compare: pd.DataFrame) -> _StoppingEffect:
    """Summarise :func:`one_head_stopping`'s rows over the D_K that both variants tested."""
    rows = []
    for d, g in compare.groupby("d_model"):
        p = g.pivot_table(index="D_K", columns="stopping", values="ratio").dropna()
        if len(p) and {"early stop", "to the cutoff"} <= set(p.columns):
            s, f = p["early stop"], p["to the cutoff"]
            rows.append((int(d), float(s.min()), float(s.iloc[-1]), float(f.min()), float(f.iloc[-1]), int(f.idxmin())))
    cols = list(zip(*rows)) if rows else [()] * 6
    return _StoppingEffect(*(tuple(c) for c in cols))


@dataclass(frozen=True)
class _ValueSetup:
    """How the E6 table was trained, as the chapter's prose pastes it (see :func:`value_setup`)."""

    n_runs: int
    n_dmsg: int  # runs whose message width d_msg equals d_model
    patience: int
    check_every: int
    mse_tol: str  # the stopping rule's improvement tolerance, as "%g"


def value_setup(runs: pd.DataFrame) -> _ValueSetup:
    """The training settings of an E6 table (``runs``: one preset's rows; the settings are the first row's)."""
    if runs.empty:
        raise ValueError("runs has no rows")
    return _ValueSetup(n_runs=len(runs), n_dmsg=int((runs.d_msg == runs.d_model).sum()),
                      patience=int(runs.patience.iloc[0]), check_every=int(runs.check_every.iloc[0]),
                      mse_tol=f"{runs.mse_tol.iloc[0]:g}")


@dataclass(frozen=True)
class _ValueFinding:
    """The chapter's readings of :func:`value_cells` over all cells and of :class:`_StoppingEffect`, by the names its
    prose pastes (see :func:`value_finding`); a missing number is None (no cell reached the level)."""

    solved: float  # the level: a fraction of the mean predictor's MSE
    n_cells: int
    n_solved: int  # cells where some tested budget brings the mean error to the level
    tracks: str  # "does" / "does not": every cell within 2x its F1 threshold
    closest_to_f1: float  # smallest (first solved D_K) / (F1 threshold) over the solved cells; NaN if none
    closest_d_model: int | None  # the cell attaining it
    closest_first_D_K: int | None
    closest_f1_D_K: int | None
    n_one_head_solved: int
    multi_head_best: int  # budgets (all cells) whose lowest error has h > 1
    multi_head_paired: int  # ... where that head count's error is below one head's on paired seeds
    n_budgets: int
    n_f1_one_head_cells: int  # cells whose F1 task has h* = 1 ...
    n_f1_one_head_multi: int  # ... and where some h > 1 has the lowest error at a budget and beats one head there on
    # paired seeds (multi_head_paired), not on means alone
    n_d_model: int  # d_model compared with and without early stopping
    n_min_at_d_model: int  # ... whose one-head minimum (no early stop) sits at D_K = d_model (one head's rank tops out)
    n_rise_without_stop: int  # ... whose error at the largest D_K is above its minimum by more than 5%, no early stop
    largest_gain: float  # largest drop of the top-rung ratio from training to the cutoff (stop - full), over d_model
    best_gain: float  # largest change of one head's lowest ratio from early stopping to training to the cutoff
    floor: str  # "is not" / "may be": one head's floor moved by early stopping


def value_finding(cells: tuple[_ValueCell, ...], stop: _StoppingEffect, solved: float,
                  tracks_factor: float = 2.0, floor_tol: float = 0.01) -> _ValueFinding:
    """Word ``cells`` (of :func:`value_cells`) and ``stop``: whether the value channel tracks the F1 thresholds
    (every cell's error reaches the level within ``tracks_factor`` x its F1 threshold) and whether early stopping
    leaves one head's floor (its lowest ratio moves by at most ``floor_tol`` in every d_model)."""
    ranked = sorted((c for c in cells if not math.isnan(c.solved_over_f1)), key=lambda c: c.solved_over_f1)
    one = [c for c in cells if c.f1_h_star == 1]
    n_solved = sum(c.first_solved_D_K is not None for c in cells)
    farthest = ranked[-1].solved_over_f1 if ranked else math.nan
    closest = ranked[0] if ranked else None
    best_gain = float(max((abs(s - f) for s, f in zip(stop.best_stop, stop.best_full)), default=math.nan))
    return _ValueFinding(solved=solved, n_cells=len(cells), n_solved=n_solved,
                        tracks="does" if len(cells) > 0 and n_solved == len(cells) and farthest <= tracks_factor
                        else "does not", closest_to_f1=ranked[0].solved_over_f1 if ranked else math.nan,
                        closest_d_model=closest and closest.d_model,
                        closest_first_D_K=closest and closest.first_solved_D_K,
                        closest_f1_D_K=closest and closest.f1_D_K_star,
                        n_one_head_solved=sum(c.one_head_solved_D_K is not None for c in cells),
                        multi_head_best=sum(c.multi_head_best for c in cells),
                        multi_head_paired=sum(c.multi_head_paired for c in cells),
                        n_budgets=sum(c.n_budgets for c in cells), n_f1_one_head_cells=len(one),
                        n_f1_one_head_multi=sum(c.multi_head_paired > 0 for c in one), n_d_model=len(stop.d_model),
                        n_min_at_d_model=int(sum(d == k for d, k in zip(stop.d_model, stop.best_D_K_full))),
                        n_rise_without_stop=int(sum(t > 1.05 * b for t, b in zip(stop.top_full, stop.best_full))),
                        largest_gain=float(max((s - f for s, f in zip(stop.top_stop, stop.top_full)),
                                               default=math.nan)),
                        best_gain=best_gain,
                        floor="is not" if bool(stop.d_model) and best_gain <= floor_tol else "may be")


@dataclass(frozen=True)
class _LowestHead:
    """Which head count has the lowest error at one d_model (the value chapter's reading of ``value_long``, the
    decision run): that d_model, its table's size, top budget and cutoff; the lowest mean MSE's (h, D_K) and the
    best point with another head count; their seed-paired difference (lowest - other), its 95% t-interval and
    p-value; the seeds where the lowest is lower; whether it "beats" the other (interval below zero) or "ties
    with" it; and so whether the paper's "lowest at h = 4 and 8" holds (the lowest is one of them), does not hold
    (another head count beats the best of them on paired seeds) or is not decided."""

    d_model: int
    n_runs: int
    top_D_K: int
    steps: int
    best_h: int
    best_D_K: int
    best_mse: float
    next_h: int
    next_D_K: int
    next_mse: float
    diff: float
    lo: float
    hi: float
    p: float
    n_lower: int
    n_seeds: int
    beats: str
    paper_claim: str  # the paper's "lowest at h = 4 and 8": "holds", "does not hold" or "is not decided"


_PAPER_LOWEST = (4, 8)  # the head counts the paper reports with the lowest error at d_model = 32


def lowest_head(runs: pd.DataFrame, d_model: int = 32) -> _LowestHead | None:
    """:class:`_LowestHead` of ``runs`` (an E6 table) at ``d_model``; None without two head counts there."""
    cell = runs[runs["d_model"] == d_model] if len(runs) else runs
    if not len(cell) or cell["h"].nunique() < 2:
        return None
    s = summarize(cell, ["h", "D_K"], "test_mse").sort_values("mean")
    top = s.iloc[0]
    other = s[s.h != top.h].iloc[0]
    a, b = (int(top.h), int(top.D_K)), (int(other.h), int(other.D_K))
    pair = paired_difference(by_seed(cell, "test_mse", *a), by_seed(cell, "test_mse", *b))
    return _LowestHead(d_model=int(d_model), n_runs=len(cell), top_D_K=int(cell["D_K"].max()),
                      steps=int(cell["max_steps"].max()), best_h=a[0], best_D_K=a[1], best_mse=float(top["mean"]),
                      next_h=b[0], next_D_K=b[1], next_mse=float(other["mean"]), diff=pair.mean, lo=pair.lo,
                      hi=pair.hi, p=pair.p, n_lower=pair.a_lower, n_seeds=pair.n,
                      beats="beats" if pair.side() == "a lower" else "ties with",
                      paper_claim="holds" if a[0] in _PAPER_LOWEST else "does not hold"
                      if pair.side() == "a lower" and b[0] in _PAPER_LOWEST else "is not decided")


def _trivial_mse(cfg: RunConfig) -> dict[str, float]:
    """MSE of the zero and the mean-message predictors on ``cfg``'s test contexts (valid positions only)."""
    if cfg.model != "value":
        raise ValueError(f"cfg.model must be 'value', got {cfg.model!r}")
    graph, X = build_task(cfg)
    W_V = value_projection(cfg.d_model, cfg.d_msg, cfg.seed).to(DTYPES[cfg.dtype]).double()  # the run's own
    Y = X.double() @ W_V  # (m, d_msg) messages of all items
    b = sample(graph, cfg.seed, n=cfg.n_test, ell=cfg.ell, rho=cfg.rho, stream="test")
    valid = b.labels.any(-1)  # (n, ell): positions whose target is in context
    target = (b.labels.double() @ Y[b.items])[valid]  # (n_valid, d_msg)
    return {
        "mse_zero": float(target.square().mean()),
        "mse_mean": float((target - Y.mean(0)).square().mean()),
    }


def trivial_mse_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Trivial-predictor MSE per (m, d_model, seed) of a value-channel table (from the runs' configs)."""
    fields = set(RunConfig.__dataclass_fields__)
    rows = []
    for _, r in runs.drop_duplicates(["m", "d_model", "seed", "d_msg", "n_test"]).iterrows():
        cfg = RunConfig(**{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items() if k in fields})
        rows.append(dict(m=cfg.m, d_model=cfg.d_model, seed=cfg.seed, **_trivial_mse(cfg)))
    return pd.DataFrame(rows)
