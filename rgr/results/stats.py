"""Statistics of the sweeps (protocol E2, E3; chapters *permutation sweeps* and *denser graphs*).

- :func:`t_interval` — mean and 95% t-interval across seeds (:func:`paired_t`: of a per-seed difference);
- :func:`summarize` — one row per (cell, h, D_K) with mean, interval and n;
- :func:`dk_star` — D_K* of one (m, d_model) cell as central, optimistic and
  conservative values, and h*, the head count attaining the central value;
- :func:`h_star_interval` — the head counts statistically tied with h*
  (paired t-test over seeds, E3); :func:`h_star_compared` — which head counts it compares (the others had no
  run near D_K*), with their p-values; :func:`h_star_split` — a cell's head counts tied (the interval's ends),
  rejected, not compared;
- :func:`paired_difference` (of :func:`by_seed`'s values) — "X beats Y" judged on paired seeds: the 95%
  t-interval of the mean per-seed difference (the rule: chapter *Does it replicate?*, "Comparisons are paired");
- :func:`fit_line` — least squares through the origin or with intercept, with R^2 (:func:`loglog_slope`: the
  exponent of a power law);
- :func:`within` and :func:`tie_margin` — a number against an interval's ends or a level, up to float round-off
  (:data:`_TIE_REL`): every reading that sets a law's value against the book's interval uses them;

R^2 is always 1 - SS_res / SS_tot with the *centred* total sum of squares, so
fits with and without intercept are compared on the same scale (through the
origin it can be negative when the line is a poor description).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..protocol import F1_TARGET, reaches_target

# Ends and levels are compared with this relative margin: a law's ratio such as ln 4096 / ln 512 = 4/3 can equal a
# ratio of ladder budgets (512 / 384) exactly, and which side of the tie one ulp of a machine's log lands on must not
# decide a reading. A value within the margin of an end counts as on it (inside a closed interval; reaching a level).
_TIE_REL = 1e-9


def tie_margin(*xs: float) -> float:
    """The absolute round-off margin for comparing ``xs`` with each other: :data:`_TIE_REL` times the largest finite
    magnitude among them (at least 1)."""
    return _TIE_REL * max([1.0, *(abs(float(x)) for x in xs if math.isfinite(float(x)))])


def within(x: float, lo: float, hi: float) -> bool:
    """lo <= x <= hi, an end within :func:`tie_margin` of ``x`` counting as equal to it (a closed interval)."""
    tol = tie_margin(x, lo, hi)
    return bool(lo - tol <= x <= hi + tol)



def t_interval(values: np.ndarray | list[float]) -> tuple[float, float, float]:
    """(mean, low, high): mean +- t_{0.975, n-1} s / sqrt(n). NaN bounds when n < 2."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("values must be non-empty")
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    half = float(sps.t.ppf(0.975, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, mean - half, mean + half


def paired_t(x: pd.Series, y: pd.Series, what: str) -> tuple[list, float, float, float]:
    """``x`` and ``y``: a metric indexed by seed. The seeds both have (sorted) and :func:`t_interval` of ``x - y``
    over them (one seed: NaN ends, unlike :func:`paired_difference`); a ValueError naming ``what`` without any."""
    seeds = sorted(set(x.index) & set(y.index))
    if not seeds:
        raise ValueError(f"runs: no seed has both {what}")
    return (seeds, *t_interval((x.loc[seeds] - y.loc[seeds]).to_numpy()))


def seeds_per_cell(runs: pd.DataFrame) -> pd.Series:
    """How many seeds each (m, d_model) cell of ``runs`` trained (grouped by whichever of the two columns it has;
    one count when it has neither)."""
    cells = [c for c in ("m", "d_model") if c in runs]
    return runs.groupby(cells)["seed"].nunique() if cells else pd.Series([runs["seed"].nunique()])


def summarize(df: pd.DataFrame, by: list[str], metric: str = "test_f1") -> pd.DataFrame:
    """Mean, 95% interval (lo, hi) and count of ``metric`` per group ``by``."""
    missing = [c for c in [*by, metric] if c not in df.columns]
    if missing:
        raise ValueError(f"columns missing from the table: {missing}")
    rows = []
    for key, g in df.groupby(by, sort=True):
        mean, lo, hi = t_interval(g[metric].to_numpy())
        rows.append((*np.atleast_1d(key), mean, lo, hi, len(g)))
    return pd.DataFrame(rows, columns=[*by, "mean", "lo", "hi", "n"])


@dataclass(frozen=True)
class _DKStar:
    """D_K* of one cell: central (mean >= target), optimistic (CI high >= target),
    conservative (CI low >= target), the head count h* attaining the central value,
    and d_k* = D_K*/h*. None where no tested D_K qualifies."""

    central: int | None
    optimistic: int | None
    conservative: int | None
    h_star: int | None

    @property
    def d_k_star(self) -> float | None:
        return None if self.central is None or self.h_star is None else self.central / self.h_star


def _min_dk(summary: pd.DataFrame, column: str, target: float) -> int | None:
    ok = summary[reaches_target(summary[column], target)]
    return None if ok.empty else int(ok["D_K"].min())


def dk_star(summary: pd.DataFrame, target: float = F1_TARGET) -> _DKStar:
    """D_K* from the summary of ONE cell (columns h, D_K, mean, lo, hi).

    Ties at the central D_K are broken by the larger mean F1 (then the smaller h).
    """
    for c in ("h", "D_K", "mean", "lo", "hi"):
        if c not in summary.columns:
            raise ValueError(f"summary must have column {c!r}")
    central = _min_dk(summary, "mean", target)
    h_star = None
    if central is not None:
        at = summary[(summary["D_K"] == central) & reaches_target(summary["mean"], target)]
        h_star = int(at.sort_values(["mean", "h"], ascending=[False, True]).iloc[0]["h"])
    return _DKStar(central, _min_dk(summary, "hi", target), _min_dk(summary, "lo", target), h_star)


TIE_ALPHA = 0.05  # h_star_interval's level: a head count with paired p above it is tied with h*


def h_star_interval(
    runs: pd.DataFrame, star: _DKStar, metric: str = "test_f1", tol: float = 0.10, alpha: float = TIE_ALPHA
) -> tuple[int, int] | None:
    """(min, max) of the head counts tied with h* (E3).

    Candidates: head counts with a tested D_K within ``tol`` of D_K* (the closest
    one is used). Each is compared with h* at D_K* by a two-sided paired t-test on
    per-seed ``metric`` (seeds paired); those with p > ``alpha`` are kept. Runs are
    the rows of ONE cell with columns h, D_K, seed and ``metric``. Identical
    per-seed values count as a tie (p = 1).
    """
    if star.central is None or star.h_star is None:
        return None
    tied = h_star_split(runs, star.central, star.h_star, metric, tol, alpha)[0]
    return min(tied), max(tied)


def h_star_compared(runs: pd.DataFrame, d_k_star: int, h_star: int, metric: str = "test_f1",
                    tol: float = 0.10) -> dict[int, float]:
    """The head counts :func:`h_star_interval` compares with h* at D_K* = ``d_k_star``, each with its paired p-value.

    A head count of ``runs`` (one cell's rows) that is missing here was not compared: it has no tested D_K within
    ``tol`` of D_K*, or fewer than 2 seeds paired with h*'s there; the tied range says nothing about it.
    """
    ref = runs[(runs["h"] == h_star) & (runs["D_K"] == d_k_star)].set_index("seed")[metric]
    out: dict[int, float] = {}
    for h, g in runs.groupby("h"):
        if h == h_star:
            continue
        dks = np.unique(g["D_K"].to_numpy())
        near = dks[np.abs(dks - d_k_star) <= tol * d_k_star]
        if near.size == 0:
            continue
        dk = near[np.argmin(np.abs(near - d_k_star))]
        other = g[g["D_K"] == dk].set_index("seed")[metric]
        seeds = ref.index.intersection(other.index)
        if len(seeds) < 2:
            continue
        a, b = ref.loc[seeds].to_numpy(float), other.loc[seeds].to_numpy(float)
        out[int(h)] = _p_paired(a, b)
    return out


def h_star_split(runs: pd.DataFrame, d_k_star: int, h_star: int, metric: str = "test_f1", tol: float = 0.10,
                 alpha: float = TIE_ALPHA) -> tuple[tuple[int, ...], ...]:
    """One cell's head counts as :func:`h_star_compared` reads them at D_K* = ``d_k_star``: (tied with h*, h*
    included; compared and rejected; run but not compared, for want of a run near D_K*), each sorted."""
    p = h_star_compared(runs, d_k_star, h_star, metric, tol)
    tied = {h_star, *(h for h, v in p.items() if v > alpha)}
    untested = {int(h) for h in runs["h"].unique()} - set(p) - {h_star}
    return tuple(sorted(tied)), tuple(sorted(h for h, v in p.items() if v <= alpha)), tuple(sorted(untested))


def _p_paired(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided paired t-test p-value; a constant difference gives 1 if zero, else 0."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if np.allclose(d, d[0]):
        return 1.0 if np.allclose(d, 0.0) else 0.0
    return float(sps.ttest_rel(a, b).pvalue)


@dataclass(frozen=True)
class Fit:
    """y = slope * x + intercept (intercept 0 when fitted through the origin)."""

    slope: float
    intercept: float
    r2: float
    n: int
    through_origin: bool

    def __call__(self, x: np.ndarray | float) -> np.ndarray | float:
        return self.slope * np.asarray(x) + self.intercept


def fit_line(x: np.ndarray | list[float], y: np.ndarray | list[float], intercept: bool = True) -> Fit:
    """Least-squares line of y on x, with or without intercept; R^2 with centred SS_tot."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and y must be 1-D of the same length, got {x.shape} and {y.shape}")
    if x.size < (2 if intercept else 1):
        raise ValueError(f"need at least {2 if intercept else 1} points, got {x.size}")
    if intercept:
        slope, icpt = np.polyfit(x, y, 1)
    else:
        slope, icpt = float(x @ y / (x @ x)), 0.0
    res = y - (slope * x + icpt)
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(res @ res) / ss_tot if ss_tot > 0 else math.nan
    return Fit(float(slope), float(icpt), r2, int(x.size), not intercept)


def loglog_slope(x: np.ndarray | pd.Series | pd.Index, y: np.ndarray | pd.Series) -> float:
    """Least-squares slope of log y on log x: the exponent k of y ∝ x^k (NaN with fewer than two points)."""
    if len(x) < 2:
        return math.nan
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


def wilson_interval(k: np.ndarray, n: np.ndarray, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """95% Wilson score interval of a success rate k / n (elementwise)."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return np.clip(mid - half, 0.0, 1.0), np.clip(mid + half, 0.0, 1.0)


@dataclass(frozen=True)
class _PairedDifference:
    """Mean of ``a - b`` over ``n`` paired seeds, its 95% t-interval [lo, hi], the two-sided paired t-test's
    p-value, and ``a_lower``: the seeds where a's value is below b's."""

    n: int
    mean: float
    lo: float
    hi: float
    p: float
    a_lower: int

    def side(self) -> str:
        """"a lower", "b lower" (the interval excludes zero on that side) or "tied"."""
        if self.hi < 0:
            return "a lower"
        if self.lo > 0:
            return "b lower"
        return "tied"

    def words(self, a: str, b: str, unit: str = "") -> str:
        """E.g. "paired over 3 seeds, h = 8 - h = 16 = +0.00048 [+0.00046, +0.00050] (p = 0.0008); h = 16 lower at
        3 of 3"."""
        if self.n < 2:
            return f"one paired seed only ({a} - {b} = {self.mean:+.4g}{unit}): no interval"
        return (f"paired over {self.n} seeds, {a} − {b} = {self.mean:+.3g}{unit} [{self.lo:+.3g}, {self.hi:+.3g}] "
                f"(p = {self.p:.2g}); {a} lower at {self.a_lower} of {self.n}")


def paired_difference(a: pd.Series, b: pd.Series) -> _PairedDifference:
    """``a`` and ``b``: a metric indexed by seed. The seeds both have are paired; fewer than two give a point with an
    infinite interval and p = 1."""
    both = sorted(set(a.index) & set(b.index))
    d = np.array([float(a[s]) - float(b[s]) for s in both])
    n = len(d)
    if n == 0:
        return _PairedDifference(0, math.nan, -math.inf, math.inf, 1.0, 0)
    mean = float(d.mean())
    lower = int((d < 0).sum())
    if n < 2:
        return _PairedDifference(n, mean, -math.inf, math.inf, 1.0, lower)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        return _PairedDifference(n, mean, mean, mean, p, lower)
    half = float(sps.t.ppf(0.975, n - 1)) * se
    p = float(2 * sps.t.sf(abs(mean) / se, n - 1))
    return _PairedDifference(n, mean, mean - half, mean + half, p, lower)


def by_seed(runs: pd.DataFrame, metric: str, h: int, D_K: int, **where) -> pd.Series:
    """The metric per seed at (h, D_K) (rows matching ``where``)."""
    sel = runs[(runs.h == h) & (runs.D_K == D_K)]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel.groupby("seed")[metric].mean()
