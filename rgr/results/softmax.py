"""Findings of the chapter *softmax* (book/softmax.ipynb; protocol E5 and the linear-sum ablation).

Each function takes the chapter's tables and returns a small frozen result that the chapter words:

- :func:`threshold_shift` — D_K* of the softmax model over D_K* of the max-over-heads model
  per cell, both read on the seeds both ran (seed s draws the same graph, embeddings, contexts and initial weights
  in both: :func:`rgr.results.thresholds.paired_seeds`), against Theorem 8.1's extra factor ln m;
- :func:`softmax_cells_summary`, :func:`algorithm2_reading` — where Algorithm 2's explicit weights reach the target
  on sampled contexts (data/softmax_cells.csv);
- :func:`linear_sum_check` — the linear sum of h heads against one max head of the same width, run for
  run. By construction (one d_model x D_K init whatever h, a score that is one matrix product) they are
  the same model up to floating-point rounding: a sanity check of the argument, not a measured effect.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..protocol import F1_TARGET, reaches_target
from .findings import int_or_none, listed
from .thresholds import curves

_CELL = ["m", "d_model", "r"]


@dataclass(frozen=True)
class _ShiftCell:
    """One cell measured by both models: thresholds, head counts, their ratio and ln m."""

    m: int
    d_model: int
    D_K_star_max: int | None
    D_K_star_soft: int | None
    h_star_max: int | None
    h_star_soft: int | None
    max_f1_h1_soft: float  # best mean F1 of one softmax head at any tested budget
    h_lo_max: int | None = None  # h*'s tie set (head counts within noise of h*: thresholds' h_lo, h_hi), max model
    h_hi_max: int | None = None
    h_lo_soft: int | None = None  # ... softmax model
    h_hi_soft: int | None = None
    n_seeds: int = 0  # seeds behind each model's means here (the fewer of the two)

    @property
    def more_heads(self) -> bool:
        """The softmax model's h* tie set lies wholly above the max-over-heads model's (the sets apart)."""
        return self.h_lo_soft is not None and self.h_hi_max is not None and self.h_lo_soft > self.h_hi_max

    @property
    def ln_m(self) -> float:
        return math.log(self.m)

    @property
    def ratio(self) -> float:
        """D_K*(softmax) / D_K*(max); NaN where either threshold was not reached."""
        if self.D_K_star_max is None or self.D_K_star_soft is None:
            return math.nan
        return self.D_K_star_soft / self.D_K_star_max


@dataclass(frozen=True)
class _ThresholdShift:
    """The cells both tables measured (see :func:`threshold_shift`)."""

    cells: tuple[_ShiftCell, ...]

    def table(self) -> pd.DataFrame:
        rows = [dict(m=c.m, d_model=c.d_model, seeds=c.n_seeds, D_K_star_max=c.D_K_star_max, h_star_max=c.h_star_max,
                     h_ties_max=_ties(c.h_lo_max, c.h_hi_max), D_K_star_soft=c.D_K_star_soft,
                     h_star_soft=c.h_star_soft, h_ties_soft=_ties(c.h_lo_soft, c.h_hi_soft), ratio=c.ratio,
                     ln_m=c.ln_m, best_f1_one_soft_head=c.max_f1_h1_soft) for c in self.cells]
        cols = ["m", "d_model", "seeds", "D_K_star_max", "h_star_max", "h_ties_max", "D_K_star_soft", "h_star_soft",
                "h_ties_soft", "ratio", "ln_m", "best_f1_one_soft_head"]
        out = pd.DataFrame(rows, columns=cols)
        for c in ("D_K_star_max", "h_star_max", "D_K_star_soft", "h_star_soft"):
            out[c] = out[c].astype("Int64")
        return out


def _ties(lo: int | None, hi: int | None) -> str:
    """An h* tie set as the table shows it: "4", "2 to 4", "" when unknown."""
    return "" if lo is None or hi is None else str(lo) if lo == hi else f"{lo} to {hi}"


def threshold_shift(max_cells: pd.DataFrame, soft_cells: pd.DataFrame) -> _ThresholdShift:
    """Pair the per-cell rows of :func:`rgr.results.thresholds.thresholds` of the max-over-heads (read on
    :func:`rgr.results.thresholds.paired_seeds`) and the softmax tables on (m, d_model, r); cells only one table has
    are left out."""
    both = max_cells.merge(soft_cells, on=_CELL, suffixes=("_max", "_soft")).sort_values(["m", "d_model"])
    return _ThresholdShift(tuple(
        _ShiftCell(int(r.m), int(r.d_model), int_or_none(r.D_K_star_max), int_or_none(r.D_K_star_soft),
                  int_or_none(r.h_star_max), int_or_none(r.h_star_soft), float(r.max_f1_h1_soft),
                  h_lo_max=int_or_none(r.h_lo_max), h_hi_max=int_or_none(r.h_hi_max),
                  h_lo_soft=int_or_none(r.h_lo_soft), h_hi_soft=int_or_none(r.h_hi_soft),
                  n_seeds=int(min(r.n_seeds_max, r.n_seeds_soft)))
        for r in both.itertuples()))


@dataclass(frozen=True)
class _ShiftFinding:
    """The chapter's reading of :class:`_ThresholdShift`, by the names its prose pastes (see :func:`shift_finding`)."""

    n_both: int  # cells where both models reach the target
    n_cells: int  # cells both tables have
    ratio_min: float  # D_K*(softmax) / D_K*(max), smallest over n_both
    ratio_max: float
    n_costly: int  # of n_both, cells where normalising the heads costs budget (ratio >= 1)
    n_below_ln_m: int  # of n_both, cells whose ratio is at most ln m, Theorem 8.1's extra factor
    n_more_heads: int  # cells where the softmax model's h* tie set lies wholly above the max-over-heads model's
    n_point_more_heads: int  # cells where the softmax model's point h* exceeds the max model's (ties or not)
    n_seeds: str  # seeds per cell behind both models' readings: "3", or "2 to 3" where cells differ
    n_one_head_soft: int  # cells where one softmax head reaches the target at some budget
    one_head_soft_cells: str  # those cells, "(64, 32)", "(64, 32) and (128, 32)", ... ("none" if none)
    n_soft_reach: int  # cells of the softmax table whose D_K* was reached
    n_soft_cells: int  # cells of the softmax table


def shift_finding(shift: _ThresholdShift, soft_cells: pd.DataFrame) -> _ShiftFinding:
    """Word ``shift`` beside the softmax table's own cells (``soft_cells``: its
    :func:`rgr.results.thresholds.thresholds`)."""
    both = tuple(c for c in shift.cells if not math.isnan(c.ratio))
    one = [c for c in shift.cells if reaches_target(c.max_f1_h1_soft)]
    where = listed([f"({c.m}, {c.d_model})" for c in one]) if one else "none"
    return _ShiftFinding(n_both=len(both), n_cells=len(shift.cells),
                        ratio_min=min((c.ratio for c in both), default=math.nan),
                        ratio_max=max((c.ratio for c in both), default=math.nan),
                        n_costly=sum(c.ratio >= 1 for c in both), n_below_ln_m=sum(c.ratio <= c.ln_m for c in both),
                        n_more_heads=sum(c.more_heads for c in shift.cells),
                        n_point_more_heads=sum(c.h_star_soft is not None and c.h_star_max is not None
                                               and c.h_star_soft > c.h_star_max for c in shift.cells),
                        n_seeds=_ties(min((c.n_seeds for c in shift.cells), default=None),
                                      max((c.n_seeds for c in shift.cells), default=None)) or "0",
                        n_one_head_soft=len(one), one_head_soft_cells=where,
                        n_soft_reach=int(soft_cells.D_K_star.notna().sum()), n_soft_cells=len(soft_cells))


def softmax_cells_summary(df: pd.DataFrame, target: float = F1_TARGET) -> pd.DataFrame:
    """Per cell of data/softmax_cells.csv (rows of :func:`rgr.studies.softmax_cells.softmax_at_cells`): the shortest
    context at which the one-hot construction's mean F1 reaches ``target`` (NaN if none), the lowest single seed's
    F1 there, the seeds and contexts per seed behind each mean, and the best mean F1 of the Gaussian-input
    construction over every width and length tried."""
    df = df if "n_contexts" in df else df.assign(n_contexts=0)
    mean = df.groupby(["m", "d_model", "inputs", "d_k", "ell"], as_index=False).agg(
        f1=("f1", "mean"), low=("f1", "min"), h=("h", "first"), n_seeds=("seed", "nunique"),
        n_contexts=("n_contexts", "min"))
    rows = []
    for (m, d), cell in mean.groupby(["m", "d_model"]):
        oh, ga = cell[cell.inputs == "one-hot"], cell[cell.inputs == "gaussian"]
        ok = oh[oh.f1 >= target]
        first = ok.loc[ok.ell.idxmin()] if len(ok) else None
        best = ga.loc[ga.f1.idxmax()] if len(ga) else None
        rows.append(dict(m=m, d_model=d, h=int(cell.h.iloc[0]), ln_m=math.log(m),
                         one_hot_min_ell=float(ok.ell.min()) if len(ok) else math.nan,
                         one_hot_low_seed_f1=float(first.low) if first is not None else math.nan,
                         n_seeds=int(oh.n_seeds.min()) if len(oh) else 0,
                         n_contexts=int(oh.n_contexts.min()) if len(oh) else 0,
                         gaussian_best_f1=float(best.f1) if best is not None else math.nan,
                         gaussian_best_d_k=int(best.d_k) if best is not None else -1,
                         gaussian_best_ell=int(best.ell) if best is not None else -1))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _Algorithm2Reading:
    """Algorithm 2 at the trained cells (from ``softmax_cells_summary``): one-hot and Gaussian inputs."""

    n_cells: int
    n_one_hot: int  # cells where the one-hot construction reaches the target at some tested ell
    ell_scale_min: float  # shortest such ell / max(h, ln m) (Theorem 8.1's condition), smallest over those cells
    ell_scale_max: float  # ... and largest
    gaussian_best_f1: float  # best mean F1 on Gaussian embeddings over every cell, width and length
    n_seeds: int = 0  # seeds behind each one-hot mean (fewest over cells)
    n_contexts: int = 0  # sampled contexts per seed (fewest over cells)
    ell: str = "none"  # the shortest one-hot ell reaching the target: "32 in every cell", "16 to 32" ("none" if none)
    low_seed_f1: float = math.nan  # lowest single seed's F1 at a cell's shortest such ell, over the cells


def algorithm2_reading(summary: pd.DataFrame) -> _Algorithm2Reading:
    """Word the per-cell summary of :func:`softmax_cells_summary`."""
    ok = summary.dropna(subset=["one_hot_min_ell"])
    scale = ok.one_hot_min_ell / [max(h, math.log(m)) for h, m in zip(ok.h, ok.m)]
    ells = sorted({int(e) for e in ok.one_hot_min_ell})
    ell = ("none" if not ells else f"{ells[0]} in every cell" if len(ells) == 1 and len(ok) == len(summary)
           else str(ells[0]) if len(ells) == 1 else f"{ells[0]} to {ells[-1]}")
    n = summary if "n_seeds" in summary else summary.assign(n_seeds=0, n_contexts=0, one_hot_low_seed_f1=math.nan)
    return _Algorithm2Reading(
        n_cells=len(summary),
        n_one_hot=len(ok),
        ell_scale_min=float(scale.min()) if len(ok) else math.nan,
        ell_scale_max=float(scale.max()) if len(ok) else math.nan,
        gaussian_best_f1=float(summary.gaussian_best_f1.max()) if len(summary) else math.nan,
        n_seeds=int(n.n_seeds.min()) if len(n) else 0,
        n_contexts=int(n.n_contexts.min()) if len(n) else 0,
        ell=ell,
        low_seed_f1=float(n.one_hot_low_seed_f1.min()) if len(n) else math.nan,
    )


@dataclass(frozen=True)
class _LinearSumCheck:
    """The linear-sum runs beside the one-head max runs of the same (cell, D_K, seed)."""

    n_runs: int  # linear-sum runs
    n_matched: int  # of them, with a one-head max run of the same (cell, D_K, seed) and step cutoff
    f1_gap: float  # largest |test F1 difference| over the matched runs (NaN when none)
    tau_gap: float  # largest |tau difference| over the matched runs
    h_spread: float  # largest spread of test F1 across head counts at one (cell, D_K, seed)
    n_same_f1: int = 0  # matched runs whose test F1 equals the one-head max run's exactly
    f1_differing: float = math.nan  # the best test F1 (either run) among matched pairs whose F1 differ


def linear_sum_check(linear: pd.DataFrame, maxed: pd.DataFrame) -> _LinearSumCheck:
    """Compare every linear-sum run with the one-head max-over-heads run of the same configuration."""
    key = [*_CELL, "D_K", "seed", "max_steps"]
    one = maxed[maxed.h == 1][[*key, "test_f1", "tau"]]
    both = linear.merge(one, on=key, suffixes=("", "_max"))
    spread = linear.groupby([*_CELL, "D_K", "seed"])["test_f1"].agg(lambda s: s.max() - s.min())
    differ = both[both.test_f1 != both.test_f1_max]
    return _LinearSumCheck(
        n_runs=len(linear),
        n_matched=len(both),
        f1_gap=float((both.test_f1 - both.test_f1_max).abs().max()) if len(both) else math.nan,
        tau_gap=float((both.tau - both.tau_max).abs().max()) if len(both) else math.nan,
        h_spread=float(spread.max()) if len(spread) else math.nan,
        n_same_f1=int((both.test_f1 == both.test_f1_max).sum()),
        f1_differing=float(differ[["test_f1", "test_f1_max"]].max().max()) if len(differ) else math.nan,
    )


def best_f1_by_cell(linear: pd.DataFrame, maxed: pd.DataFrame) -> pd.DataFrame:
    """Per cell of the linear table: best mean F1 of the linear sum, of one max head, of any max head count."""
    lin, mx = curves(linear), curves(maxed)
    rows = []
    for (m, d, r), g in lin.groupby(_CELL):
        cell = mx[(mx.m == m) & (mx.d_model == d) & (mx.r == r)]
        rows.append(dict(m=int(m), d_model=int(d), linear=float(g["mean"].max()),
                         max_one_head=float(cell[cell.h == 1]["mean"].max()) if len(cell) else math.nan,
                         max_best_h=float(cell["mean"].max()) if len(cell) else math.nan))
    return pd.DataFrame(rows, columns=["m", "d_model", "linear", "max_one_head", "max_best_h"])

