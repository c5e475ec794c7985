"""How well the book knows a number on its own cells: the seed bootstrap (chapter *Does it replicate?*).

The verdicts compare the book's value with the paper's on the same cells, so the interval that decides them
measures the measurement's own noise, not the choice of cells:

- :func:`seed_draws` resamples, within each (m, d_model, r) cell, its seeds with replacement, jointly (a seed's
  runs at every h and D_K move together), and recomputes the cell's D_K* and h* from the resampled means, as
  :func:`rgr.results.stats.dk_star` does from all seeds; each cell draws from its own fixed random stream, so a
  cell's replicates do not depend on which other cells are read;
- :func:`noise` evaluates a number of the cells (a fit's slope, a ratio, a median) on every replicate and gives
  its 95% and 99% percentile intervals, widened to hold the book's own value and the values at the protocol's
  threshold ends (every cell at its optimistic, then at its conservative D_K*, E3), which the ladder allows; for a
  ratio, where those two cancel, over every mix of the cells' ends as well;
- :func:`cell_noise` — per cell, the noise interval of its D_K*, h* or d_k*;
- :func:`fit_stats` — least squares on every replicate at once (slope, intercept, centred R², as
  :func:`rgr.results.stats.fit_line`).

The verdict rule for claims that one configuration beats another, or that the best lies at some h (paired seeds,
:data:`PAIRED_CLAIMS`), is declared in chapter *Does it replicate?*, "Comparisons are paired".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...protocol import F1_TARGET, reaches_target
from ..stats import within
from ..thresholds import CELL, thresholds

_N_BOOT = 2000  # replicates: enough for a stable 99% percentile


_BOOT_SEED = 0  # fixed: the intervals are the same on every machine


@dataclass(frozen=True)
class Draws:
    """One sweep's cells (:func:`rgr.results.thresholds.thresholds` rows, in order) and ``n_boot`` seed-bootstrap
    replicates of each cell's D_K* (``dk``), h* (``h``) and one head's threshold (``dk1``), arrays (cells, n_boot);
    NaN where a replicate's means reach the target at no tested D_K (with one head, for ``dk1``)."""

    cells: pd.DataFrame
    dk: np.ndarray
    h: np.ndarray
    dk1: np.ndarray

    @property
    def n_boot(self) -> int:
        return int(self.dk.shape[1])

    def subset(self, mask) -> "Draws":
        """The draws of the cells where ``mask`` (aligned with :attr:`cells`) is true."""
        return self.take(np.flatnonzero(np.asarray(mask, bool)))

    def take(self, order) -> "Draws":
        """The draws of the cells at positions ``order``, in that order."""
        i = np.asarray(order, int)
        return Draws(self.cells.iloc[i].reset_index(drop=True), self.dk[i], self.h[i], self.dk1[i])


def _cell_draws(runs: pd.DataFrame, key: tuple[int, ...], n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray,
                                                                                         np.ndarray]:
    """Replicates of one cell's (D_K*, h*, one head's threshold): seeds drawn with replacement, the same draw for
    every (h, D_K)."""
    table = runs.pivot_table(index=["D_K", "h"], columns="seed", values="test_f1", aggfunc="mean").sort_index()
    f1 = table.to_numpy(float)  # (points, seeds), NaN where a seed lacks that point
    dks = table.index.get_level_values("D_K").to_numpy(float)
    rng = np.random.default_rng([seed, *key])
    pick = rng.integers(0, f1.shape[1], size=(n_boot, f1.shape[1]))
    vals = f1[:, pick]  # (points, n_boot, seeds)
    count = (~np.isnan(vals)).sum(-1)
    mean = np.where(count > 0, np.nansum(vals, -1) / np.maximum(count, 1), np.nan)
    ok = reaches_target(np.nan_to_num(mean, nan=-1.0), F1_TARGET)
    dk = np.where(ok, dks[:, None], np.inf).min(0)
    at = ok & (dks[:, None] == dk[None, :])
    best = np.where(at, mean, -np.inf).argmax(0)  # points sort by (D_K, h): the first of equal means is the smaller h
    heads = table.index.get_level_values("h").to_numpy(float)
    h = heads[best]
    one = np.where(ok & (heads[:, None] == 1), dks[:, None], np.inf).min(0)
    reached = np.isfinite(dk)
    return np.where(reached, dk, np.nan), np.where(reached, h, np.nan), np.where(np.isfinite(one), one, np.nan)


def seed_draws(runs: pd.DataFrame, law: str = "permutation", n_boot: int = _N_BOOT, seed: int = _BOOT_SEED) -> Draws:
    """:class:`Draws` of every cell of ``runs`` (one sweep, one preset)."""
    if n_boot < 100:
        raise ValueError(f"n_boot must be at least 100, got {n_boot}")
    cells = thresholds(runs, law=law)
    dk, h, dk1 = (np.full((len(cells), n_boot), np.nan) for _ in range(3))
    for i, row in enumerate(cells.itertuples()):
        key = (int(row.m), int(row.d_model), int(row.r))
        one = runs[(runs.m == key[0]) & (runs.d_model == key[1]) & (runs.r == key[2])]
        dk[i], h[i], dk1[i] = _cell_draws(one, key, n_boot, seed)
    return Draws(cells, dk, h, dk1)


@dataclass(frozen=True)
class Noise:
    """The book's ``value`` of a number and its noise intervals: 95% [lo, hi] and 99% [lo99, hi99] over the
    replicates, each widened to hold ``value`` and ``ends`` (the number with every cell at its optimistic, then its
    conservative D_K*; NaN where a cell lacks that end). ``used`` replicates of ``n_boot`` had every cell's D_K*."""

    value: float
    lo: float
    hi: float
    lo99: float
    hi99: float
    ends: tuple[float, float]
    used: int
    n_boot: int
    boot: tuple[float, float] = (math.nan, math.nan)  # the 95% percentile interval alone, before widening
    missing_ends: tuple[int, int] = (0, 0)  # cells without an optimistic / a conservative D_K* (beyond the ladder)
    mixed: tuple[float, float] = (math.nan, math.nan)  # lowest / highest with each cell at either end (mixed=True)

    def holds(self, x: float) -> bool:
        return within(x, self.lo, self.hi)

    def words(self, digits: int = 3) -> str:
        return f"[{self.lo:.{digits}g}, {self.hi:.{digits}g}]"

    def parts(self, digits: int = 3) -> str:
        """Where the interval comes from: the seed bootstrap's 95% interval and the values at the E3 ends (a missing
        end: "—")."""
        g = lambda v: f"{v:.{digits}g}" if math.isfinite(v) else "—"  # noqa: E731
        seeds = f"seed bootstrap [{g(self.boot[0])}, {g(self.boot[1])}]"
        if all(e == self.value for e in self.ends):
            return seeds + " (the D_K* ends do not move it)"
        gone = "".join(f"; {k} cell(s) have no {w} D_K* on the ladder, so that end is left out"
                       for k, w in zip(self.missing_ends, ("optimistic", "conservative")) if k)
        mixed = (f"; each cell at either end (mixed): {g(self.mixed[0])} to {g(self.mixed[1])}"
                 if all(math.isfinite(v) for v in self.mixed) else "")
        return (f"{seeds}; every cell at its optimistic / conservative D_K*: {g(self.ends[0])} / {g(self.ends[1])}"
                f"{mixed}{gone}")


_Stat = Callable[[np.ndarray, np.ndarray], np.ndarray]  # (D_K*, h*) arrays (cells, k) -> the number per column (k,)


_MAX_MIXED = 16  # cells whose ends differ, at most, for the mixed ends (2^16 evaluations of the statistic)


def _mixed_ends(c: pd.DataFrame, h0: np.ndarray, stat: _Stat) -> tuple[float, float]:
    """The lowest and highest ``stat`` with each cell at its optimistic or its conservative D_K*, in every
    combination (a missing end: the cell's D_K*); h* kept. For a statistic monotone in each cell's D_K* (a ratio, a
    value over a fitted line) these are its extremes over the E3 ends."""
    star = c["D_K_star"].to_numpy(float)
    opt, cons = (c[col].fillna(c["D_K_star"]).to_numpy(float) for col in ("D_K_opt", "D_K_cons"))
    free = np.flatnonzero(opt != cons)
    if len(free) > _MAX_MIXED:
        raise ValueError(f"{len(free)} cells with two ends: the mixed ends need at most {_MAX_MIXED}")
    pick = (np.arange(2 ** len(free))[None, :] >> np.arange(len(free))[:, None]) & 1  # (free, corners)
    dk = np.repeat(star[:, None], pick.shape[1], axis=1)
    dk[free] = np.where(pick == 1, cons[free, None], opt[free, None])
    vals = np.asarray(stat(dk, np.repeat(h0, pick.shape[1], axis=1)), float)
    vals = vals[np.isfinite(vals)]
    return (float(vals.min()), float(vals.max())) if vals.size else (math.nan, math.nan)


def noise(draws: Draws, stat: _Stat, mixed: bool = False) -> Noise:
    """:class:`Noise` of ``stat`` on ``draws``: its value at the cells' own D_K*, h*; its percentile intervals over the
    replicates in which every cell reached the target; its values at the E3 threshold ends (h* kept). With ``mixed``
    (for a ratio, or a value over a line fitted on other cells, where numerator and denominator moving together
    cancel): widened as well over every combination of the cells' ends (:func:`_mixed_ends`)."""
    c = draws.cells
    dk0, h0 = c["D_K_star"].to_numpy(float)[:, None], c["h_star"].to_numpy(float)[:, None]
    value = float(stat(dk0, h0)[0])
    if not math.isfinite(value):
        return Noise(value=value, lo=math.nan, hi=math.nan, lo99=math.nan, hi99=math.nan, ends=(math.nan, math.nan),
                     used=0, n_boot=draws.n_boot)
    ends = tuple(float(stat(c[col].to_numpy(float)[:, None], h0)[0]) for col in ("D_K_opt", "D_K_cons"))
    full = ~np.isnan(draws.dk).any(0)
    reps = stat(draws.dk[:, full], draws.h[:, full]) if full.any() else np.array([])
    reps = reps[np.isfinite(reps)]
    both = _mixed_ends(c, h0, stat) if mixed else (math.nan, math.nan)
    hull = [value, *(e for e in (*ends, *both) if math.isfinite(e))]
    if reps.size < 0.5 * draws.n_boot:  # too few complete replicates: no interval
        return Noise(value=value, lo=math.nan, hi=math.nan, lo99=math.nan, hi99=math.nan, ends=ends,
                     used=int(reps.size), n_boot=draws.n_boot)
    lo, hi, lo99, hi99 = np.percentile(reps, [2.5, 97.5, 0.5, 99.5])
    missing = tuple(int(c[col].isna().sum()) for col in ("D_K_opt", "D_K_cons"))
    return Noise(value=value, lo=float(min(lo, *hull)), hi=float(max(hi, *hull)), lo99=float(min(lo99, *hull)),
                 hi99=float(max(hi99, *hull)),
                 ends=ends, used=int(reps.size), n_boot=draws.n_boot, boot=(float(lo), float(hi)), missing_ends=missing,
                 mixed=both)


def origin_slope(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least squares through the origin of every column of ``y`` (cells, k) on ``x`` (cells,): the slope, (k,)."""
    return (x[:, None] * y).sum(0) / (x ** 2).sum()


def fit_stats(x: np.ndarray, y: np.ndarray, intercept: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Least squares of every column of ``y`` (cells, k) on ``x`` (cells,): slope, intercept and centred R², each
    (k,)."""
    x = np.asarray(x, float)[:, None]
    if intercept:
        xm, ym = x.mean(0), y.mean(0)
        slope = ((x - xm) * (y - ym)).sum(0) / ((x - xm) ** 2).sum(0)
        icpt = ym - slope * xm
    else:
        slope = origin_slope(x[:, 0], y)
        icpt = np.zeros(y.shape[1])
    res = y - (slope * x + icpt)
    sst = ((y - y.mean(0)) ** 2).sum(0)
    r2 = np.where(sst > 0, 1 - (res ** 2).sum(0) / np.where(sst > 0, sst, 1.0), np.nan)
    return slope, icpt, r2


def cell_noise(draws: Draws, what: str) -> pd.DataFrame:
    """Per cell, the noise interval of its ``what`` ("D_K_star", "h_star" or "d_k_star"): columns m, d_model, r,
    value, lo, hi (95%, hull with the cell's E3 ends for D_K* and d_k*)."""
    pick = {"D_K_star": lambda dk, h: dk, "h_star": lambda dk, h: h, "d_k_star": lambda dk, h: dk / h}[what]
    rows = []
    for i in range(len(draws.cells)):
        n = noise(draws.subset(np.arange(len(draws.cells)) == i), lambda dk, h: pick(dk, h)[0])
        rows.append((*(int(draws.cells.iloc[i][k]) for k in CELL), n.value, n.lo, n.hi))
    return pd.DataFrame(rows, columns=[*CELL, "value", "lo", "hi"])


PAIRED_CLAIMS: tuple[str, ...] = ("fig1_one_head_worse", "value_d16", "value_d32_small", "value_d32_best", "gpt2_best")
