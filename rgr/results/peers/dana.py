"""A peer's committed capacity numbers, re-fitted by their own rule (chapter *the law beside other capacity results*).

Dana et al., "Memorization in Attention-only Transformers" (AISTATS 2025) train one attention-only layer to
memorise N^2 token associations and publish the accuracy per configuration (what of it is committed here, and why
only that: :mod:`rgr.results.peers.refit`). Their analysis (``EXP_1_and_4.py``):

1. for each width d = d_head, a slope of accuracy in the head count H (:func:`their_slope`);
2. regress that slope on d^p with an intercept, for p = 2 and p = 3, and read the better one ("cubic").

The RGR law's form, capacity proportional to h * d_k * d_model at a fixed vocabulary, predicts slope ∝ d^2 on
their diagonal d_k = d_model = d. :func:`power_refit` applies their step 2 to every p of a grid and reports which
power fits best, by their own least-squares rule, and how far that moves when one width is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import loglog_slope

EXP1_WIDTHS: tuple[int, ...] = tuple(range(3, 14))  # their experiment 1: d = d_head from 3 to 13
EXP1_LARGE_WIDTHS: tuple[int, ...] = (40, 50, 60)  # their appendix B.1: experiment 1 at N = 200, d = d_head
_SATURATION = 0.95  # EXP_1_and_4.py: the linear fit stops at the first accuracy above this (included)
POWERS: tuple[float, ...] = tuple(round(1.0 + 0.05 * i, 2) for i in range(61))  # p in [1, 4]


def their_stop(acc: np.ndarray, saturation: float = _SATURATION) -> int:
    """How many leading points their step 1 uses: up to the first accuracy above ``saturation``, included (>= 2)."""
    above = np.flatnonzero(np.asarray(acc, float) > saturation)
    return max(int(above[0]) + 1 if len(above) else len(acc), 2)


def their_slope(H: np.ndarray, acc: np.ndarray, saturation: float = _SATURATION) -> float:
    """Slope of accuracy against H up to the first point above ``saturation`` (included), least squares."""
    H, acc = np.asarray(H, float), np.asarray(acc, float)
    if H.shape != acc.shape or len(H) < 2:
        raise ValueError(f"H and acc must be equal-length arrays of at least 2 points, got {H.shape}, {acc.shape}")
    stop = their_stop(acc, saturation)
    return float(np.polyfit(H[:stop], acc[:stop], 1)[0])


def power_rss(d: np.ndarray, y: np.ndarray, p: float) -> tuple[float, float, float]:
    """Least squares y = a d^p + b (their step 2): (a, b, residual sum of squares)."""
    X = np.c_[np.asarray(d, float) ** p, np.ones(len(d))]
    coef, *_ = np.linalg.lstsq(X, np.asarray(y, float), rcond=None)
    rss = float(np.sum((X @ coef - y) ** 2))
    return float(coef[0]), float(coef[1]), rss


def _best_power(d: np.ndarray, y: np.ndarray, powers: tuple[float, ...]) -> float:
    return min(powers, key=lambda p: power_rss(d, y, p)[2])


@dataclass(frozen=True)
class PowerRefit:
    """Their step 2 at every power: which p in slope = a d^p + b fits best (least squares)."""

    d: tuple[int, ...]
    slope: tuple[float, ...]  # step 1, per d
    rss_law: float  # p = 2, the RGR form h * d_k * d_model at d_k = d_model = d
    rss_claim: float  # p = 3, their stated "cubic"
    intercept_law: float  # b of the p = 2 fit (the law has none)
    best_p: float  # over POWERS
    best_p_low: float  # smallest / largest best p with one width left out
    best_p_high: float
    loglog_p: float  # slope of log(slope) on log(d), no intercept term in the power law
    # RSS at p = 1 and at p = 2 over RSS at best_p: near 1, the fit barely tells these powers from the best
    rss_p1_ratio: float = float("nan")
    rss_p2_ratio: float = float("nan")

    @property
    def rss_ratio(self) -> float:
        """RSS(cubic) / RSS(quadratic): above 1, their own rule prefers the law's power."""
        return self.rss_claim / self.rss_law


def power_refit(d: np.ndarray, slope: np.ndarray, powers: tuple[float, ...] = POWERS) -> PowerRefit:
    """Apply their step 2 at p = 2, p = 3 and every p of ``powers`` (chapter *the law beside other results*)."""
    d, slope = np.asarray(d, float), np.asarray(slope, float)
    if d.shape != slope.shape or len(d) < 4:
        raise ValueError(f"d and slope must be equal-length arrays of at least 4 widths, got {d.shape}, {slope.shape}")
    if np.any(slope <= 0):
        raise ValueError("slope must be positive at every width (a power law in d)")
    _, b2, rss2 = power_rss(d, slope, 2.0)
    rss3 = power_rss(d, slope, 3.0)[2]
    loo = [_best_power(np.delete(d, i), np.delete(slope, i), powers) for i in range(len(d))]
    best = _best_power(d, slope, powers)
    rss_best = power_rss(d, slope, best)[2]
    return PowerRefit(d=tuple(int(x) for x in d), slope=tuple(float(s) for s in slope), rss_law=rss2, rss_claim=rss3,
                      intercept_law=b2, best_p=best, best_p_low=min(loo),
                      best_p_high=max(loo), loglog_p=loglog_slope(d, slope),
                      rss_p1_ratio=power_rss(d, slope, 1.0)[2] / rss_best, rss_p2_ratio=rss2 / rss_best)


@dataclass(frozen=True)
class ExpThreeRefit:
    """Their experiment 3 (d_head = 10, H = 20, d swept): accuracy slopes in d below and above d_head."""

    d_head: int
    slope_below: float  # over d <= d_head (their first six points)
    slope_above: float  # over d >= d_head
    acc_at_d_head: float
    acc_max_above: float


def exp3_split(df: pd.DataFrame) -> tuple[int, pd.DataFrame, pd.DataFrame]:
    """Their experiment 3 split at d = d_head: (d_head, rows with d <= d_head, rows with d >= d_head), sorted by d."""
    if df["d_head"].nunique() != 1:
        raise ValueError("df must hold one d_head (their experiment 3)")
    d_head = int(df["d_head"].iloc[0])
    df = df.sort_values("d")
    lo, hi = df[df.d <= d_head], df[df.d >= d_head]
    if len(lo) < 2 or len(hi) < 2:
        raise ValueError(f"df must have at least two widths on each side of d_head = {d_head}")
    return d_head, lo, hi


def exp3_refit(df: pd.DataFrame) -> ExpThreeRefit:
    """Their two linear fits of experiment 3, split at d = d_head (``EXP_3.py`` splits at the sixth point)."""
    d_head, lo, hi = exp3_split(df)
    return ExpThreeRefit(d_head=d_head, slope_below=float(np.polyfit(lo.d, lo.acc, 1)[0]),
                         slope_above=float(np.polyfit(hi.d, hi.acc, 1)[0]),
                         acc_at_d_head=float(lo.acc.iloc[-1]), acc_max_above=float(hi.acc.iloc[1:].max()))


@dataclass(frozen=True)
class LogFactor:
    """Associations stored per head per unit of d^2 (slope * N^2 / d^2, their step-1 slope in accuracy per head)
    at two vocabularies, and what two laws predict for their ratio (large N over small N).

    The RGR law, capacity T with T ln T proportional to h d_k d_model and T = N^2 associations, predicts
    ``law_ratio`` = ln(N_small^2) / ln(N_large^2); a count law (T proportional to parameters) predicts 1.
    ``ratio_low`` / ``ratio_high``: the smallest and largest ratio over every pair of one width at each N (their
    files hold means over five repetitions, not seeds, so this spread over widths is the interval given);
    ``range_holds``: which of the two predictions that range holds, as words (:func:`_range_holds`).
    """

    N_small: int
    N_large: int
    d_small: str  # the widths used, e.g. "6-13"
    d_large: str
    per_d2_small: float  # mean over widths
    per_d2_large: float
    per_d2_small_min: float
    per_d2_small_max: float
    per_d2_large_min: float
    per_d2_large_max: float
    ratio: float  # per_d2_large / per_d2_small
    ratio_low: float
    ratio_high: float
    law_ratio: float
    fewer_pct: float  # 100 (1 - ratio)
    law_fewer_pct: float
    range_holds: str  # "holds a count law's 1 but not the law's ratio", ...

    @property
    def nearer(self) -> str:
        """Which prediction the ratio of means is nearer: "the law's" or "a count law's" (in log distance)."""
        law, count = abs(np.log(self.ratio / self.law_ratio)), abs(np.log(self.ratio))
        return "the law's" if law < count else "a count law's"


def _range_holds(low: float, high: float, law: float) -> str:
    """Which predictions the pair range [low, high] holds: the law's ratio ``law``, a count law's 1, both or
    neither, as words ("holds both predictions", "holds a count law's 1 but not the law's ratio", ...)."""
    law_in, count_in = low <= law <= high, low <= 1.0 <= high
    if law_in and count_in:
        return "holds both predictions"
    if count_in:
        return "holds a count law's 1 but not the law's ratio"
    if law_in:
        return "holds the law's ratio but not a count law's 1"
    return "holds neither prediction"


def _span(d: np.ndarray) -> str:
    return f"{int(d.min())}-{int(d.max())}" if len(d) > 2 else ", ".join(str(int(x)) for x in d)


def log_factor(N_small: int, d_small: np.ndarray, slope_small: np.ndarray, N_large: int, d_large: np.ndarray,
               slope_large: np.ndarray) -> LogFactor:
    """The log-factor test on their two vocabularies (chapter *the law beside other capacity results*)."""
    if not 2 <= N_small < N_large:
        raise ValueError(f"N_small and N_large must satisfy 2 <= N_small < N_large, got {N_small}, {N_large}")
    a = np.asarray(slope_small, float) * N_small**2 / np.asarray(d_small, float) ** 2
    b = np.asarray(slope_large, float) * N_large**2 / np.asarray(d_large, float) ** 2
    if len(a) < 2 or len(b) < 2 or np.any(a <= 0) or np.any(b <= 0):
        raise ValueError("slope_small and slope_large must hold at least two positive slopes each")
    pairs = b[:, None] / a[None, :]
    law = float(np.log(N_small**2) / np.log(N_large**2))
    ratio = float(b.mean() / a.mean())
    return LogFactor(N_small=N_small, N_large=N_large, d_small=_span(np.asarray(d_small)),
                     d_large=_span(np.asarray(d_large)), per_d2_small=float(a.mean()), per_d2_large=float(b.mean()),
                     per_d2_small_min=float(a.min()), per_d2_small_max=float(a.max()),
                     per_d2_large_min=float(b.min()), per_d2_large_max=float(b.max()), ratio=ratio,
                     ratio_low=float(pairs.min()), ratio_high=float(pairs.max()), law_ratio=law,
                     fewer_pct=100 * (1 - ratio), law_fewer_pct=100 * (1 - law),
                     range_holds=_range_holds(float(pairs.min()), float(pairs.max()), law))
