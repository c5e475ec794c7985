"""A design rule fitted on the measured thresholds: how many heads, how wide (chapter *choosing heads*).

Given m' relations (a permutation graph on m = m' items: the graphs the rule is
fitted on), a width d_model and either a key budget D_K or a target F1, the rule
returns the head count h, the per-head width d_k = D_K / h, and the predicted F1
(or the budget needed), each with an interval. It is built from two fits on the
base grid's cells (protocol E2), :func:`fit_rule`:

- **the law**, D_K*(F) = c_F * x with x = m' ln m' / d_model, fitted through the
  origin in log space (c_F = geometric mean of D_K / x over the cells; errors are
  multiplicative: D_K* spans two decades). For a target F = F1_TARGET this is
  the law of chapter *permutation sweeps*; for a lower F, the smallest tested
  budget whose best-over-h mean F1 reaches F. Its interval is the 95% prediction
  interval of a new cell, exp(+- t s sqrt(1 + 1/n)), s the sd of the log residuals.
- **the h* rule**, h* = a * (m' / d_model) + b (least squares, protocol E2), rounded
  to the nearest power of two (the grid's head counts) and clamped to [1, D_K];
  its interval is the line's 95% prediction interval, rounded outwards.

So d_k = D_K / h ~ (c_F / a) ln m' where both fits hold (b small): the per-head
width grows only like log m', and the heads carry the compression m' / d_model.

The predicted F1 at a budget D_K is a *collapse*: every fitted cell's best-over-h
F1 curve (made non-decreasing in D_K: a wider layer can leave dimensions unused)
is read at the same D_K / x, i.e. at D_K * x_cell / x; the median over the cells
that tested that point is the prediction and their range the interval.

**Domain** (:class:`_Domain`, from the fitted cells): d_model within the grid's
range, m' / d_model within the fitted range, and d_model / ln m' at least its
smallest fitted value (the precondition d_model >~ c0 log m of Theorem 4.1;
the cells that violate it, d_model = 16 with m > 64, are not fitted). Outside it
:func:`recommend` raises :class:`DomainError` naming the parameter and how far
outside, unless ``extrapolate=True``: then it answers with ``flags`` saying why
the answer is an extrapolation.

The rule's checks (the preregistered held-out cell, validation, real layer shapes) live in
:mod:`rgr.results.choosing_heads.checks`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

from ...protocol import F1_TARGET, reaches_target
from ...theory.bounds import scaling_x
from ..stats import fit_line
from ..thresholds import curves, meets_precondition

_F1_RANGE: tuple[float, float] = (0.5, F1_TARGET)  # targets the fitted curves support
_LEVEL = 0.95
_MIN_CELLS = 3  # fitted cells a predicted F1 must rest on


class DomainError(ValueError):
    """An input outside what the fitted cells support; the message names the parameter and how far outside."""


@dataclass(frozen=True)
class _Domain:
    """Where the rule is supported: the fitted cells' ranges of d_model, m'/d_model and d_model / ln m'."""

    d_model: tuple[float, float]
    lam: tuple[float, float]
    c0: float  # smallest d_model / ln m' among the fitted cells

    def violations(self, m_prime: int, d_model: int) -> tuple[str, ...]:
        """One message per violated bound (empty inside the domain)."""
        out = []
        lo, hi = self.d_model
        if not lo <= d_model <= hi:
            out.append(f"d_model = {d_model} is outside the fitted grid [{lo:g}, {hi:g}] ({_how_far(d_model, lo, hi)})")
        lam = m_prime / d_model
        lo, hi = self.lam
        if not lo <= lam <= hi:
            out.append(
                f"m_prime / d_model = {lam:.3g} is outside the fitted range [{lo:g}, {hi:g}] ({_how_far(lam, lo, hi)})"
            )
        ratio = d_model / math.log(m_prime)
        if ratio < self.c0 - 1e-12:
            out.append(f"d_model / ln(m_prime) = {ratio:.3g} is below {self.c0:.3g}, the smallest fitted value "
                       f"(precondition d_model >~ c0 log m; {self.c0 / ratio:.2g}x below)")
        return tuple(out)


def _how_far(v: float, lo: float, hi: float) -> str:
    return f"{lo / v:.2g}x below the smallest" if v < lo else f"{v / hi:.2g}x above the largest"


@dataclass(frozen=True)
class DesignRule:
    """The fitted rule. ``cells``: the fitted cells (m, d_model, x, lam, D_K*, h*); ``envelopes``: per cell,
    (tested D_K, best-over-h mean F1 made non-decreasing)."""

    preset: str
    cells: tuple[tuple[int, int, float, float, int, int], ...]
    envelopes: tuple[tuple[tuple[int, ...], tuple[float, ...]], ...]
    a: float  # h* = a * m'/d_model + b
    b: float
    h_sd: float  # residual sd of the h* line
    h_r2: float
    lam_mean: float
    lam_sxx: float
    heads: tuple[int, ...]  # the grid's head counts
    domain: _Domain

    @property
    def n(self) -> int:
        return len(self.cells)

    def c(self, target_f1: float = F1_TARGET) -> float:
        """Law constant for ``target_f1``: geometric mean of D_K(F) / x over the fitted cells."""
        return float(np.exp(np.mean(self._log_ratios(target_f1))))

    def factor(self, target_f1: float = F1_TARGET) -> float:
        """Multiplicative half-width of the 95% prediction interval of D_K(F) for a new cell."""
        r = self._log_ratios(target_f1)
        t = sps.t.ppf((1 + _LEVEL) / 2, len(r) - 1)
        return float(np.exp(t * np.std(r, ddof=1) * math.sqrt(1 + 1 / len(r))))

    def h_fit(self, lam: float) -> float:
        """The fitted h* line at m'/d_model = ``lam`` (a real number)."""
        return self.a * lam + self.b

    def h_interval(self, lam: float) -> tuple[float, float]:
        """95% prediction interval of h* at ``lam`` (real numbers, lower end at least 1)."""
        t = sps.t.ppf((1 + _LEVEL) / 2, self.n - 2)
        half = t * self.h_sd * math.sqrt(1 + 1 / self.n + (lam - self.lam_mean) ** 2 / self.lam_sxx)
        return max(1.0, self.h_fit(lam) - half), max(1.0, self.h_fit(lam) + half)

    def _log_ratios(self, target_f1: float) -> np.ndarray:
        out = []
        for (m, d, x, *_), (dks, f1) in zip(self.cells, self.envelopes):
            ok = [dk for dk, f in zip(dks, f1) if reaches_target(f, target_f1)]
            if ok:
                out.append(math.log(min(ok) / x))
        if len(out) < 3:
            raise DomainError(f"target_f1 = {target_f1}: only {len(out)} fitted cells reach it; need 3")
        return np.asarray(out)

    def f1_at(self, D_K: float, x: float) -> tuple[float, float, float, int]:
        """(median, min, max, cells) of the fitted cells' F1 read at the same D_K / x."""
        vals = []
        for (m, d, xc, *_), (dks, f1) in zip(self.cells, self.envelopes):
            q = D_K * xc / x
            if q < dks[0] - 1e-9:
                continue  # this cell never tested so small a budget
            vals.append(float(np.interp(math.log(q), np.log(dks), f1)))  # beyond the top: the top's value
        if not vals:
            return math.nan, math.nan, math.nan, 0
        return float(np.median(vals)), min(vals), max(vals), len(vals)


@dataclass(frozen=True)
class _Design:
    """The rule's answer for one (m', d_model) and budget or target.

    ``D_K``: the budget given, or the one needed for ``target_f1`` (central; ``D_K_lo``/``D_K_hi`` its 95%
    prediction interval). ``h``: recommended head count (a power of two), ``h_lo``/``h_hi`` the interval of
    the h* line; ``d_k = D_K / h``. ``f1``: predicted F1 at ``D_K`` (median over the fitted cells at the same
    D_K / x), ``f1_lo``/``f1_hi`` their range, ``n_f1`` how many cells informed it. ``flags``: why the answer
    is an extrapolation (empty inside the domain).
    """

    m_prime: int
    d_model: int
    x: float
    target_f1: float | None
    D_K: float
    D_K_lo: float
    D_K_hi: float
    h: int
    h_lo: int
    h_hi: int
    d_k: float
    f1: float
    f1_lo: float
    f1_hi: float
    n_f1: int
    flags: tuple[str, ...]

    @property
    def in_domain(self) -> bool:
        return not self.flags


def _pow2(v: float) -> int:
    return 2 ** int(round(math.log2(max(v, 1.0))))


def fit_rule(cells: pd.DataFrame, runs: pd.DataFrame, preset: str, heads: tuple[int, ...]) -> DesignRule:
    """Fit the rule on ``cells`` (rows of :func:`rgr.results.thresholds.thresholds`, r = 1) and their ``runs``.

    Uses the cells that reached D_K* and keep the precondition (d_model = 16 with m > 64 dropped, as in the
    law's fit); needs at least 3 of them.
    """
    if "r" in cells and (cells["r"] != 1).any():
        raise ValueError("cells: the rule is fitted on permutation graphs (r = 1) only")
    ok = cells[cells["D_K_star"].notna() & cells["h_star"].notna()]
    ok = ok[meets_precondition(ok)].sort_values(["m", "d_model"])
    if len(ok) < 3:
        raise ValueError(f"cells: {len(ok)} cells reached D_K* under the precondition; the rule needs 3")
    summary = curves(runs)
    env = []
    for m, d in zip(ok["m"], ok["d_model"]):
        s = summary[(summary.m == m) & (summary.d_model == d)].groupby("D_K")["mean"].max().sort_index()
        env.append((tuple(int(v) for v in s.index), tuple(float(v) for v in np.maximum.accumulate(s.to_numpy()))))
    lam, hs = ok["lam"].to_numpy(float), ok["h_star"].to_numpy(float)
    line = fit_line(lam, hs)
    a, b = line.slope, line.intercept
    res = hs - (a * lam + b)
    ratio = ok["d_model"].to_numpy(float) / np.log(ok["m"].to_numpy(float))
    return DesignRule(
        preset=preset,
        cells=tuple((int(m), int(d), float(x), float(lam), int(k), int(h)) for m, d, x, lam, k, h in
                    zip(ok.m, ok.d_model, ok.x_law, ok.lam, ok.D_K_star, ok.h_star)),
        envelopes=tuple(env), a=float(a), b=float(b), h_sd=float(np.sqrt(res @ res / (len(ok) - 2))), h_r2=line.r2,
        lam_mean=float(lam.mean()), lam_sxx=float(((lam - lam.mean()) ** 2).sum()), heads=tuple(sorted(heads)),
        domain=_Domain((float(ok.d_model.min()), float(ok.d_model.max())), (float(lam.min()), float(lam.max())),
                      float(ratio.min())),
    )


_MAX_SIZE = 2**40  # the largest m', d_model or D_K the rule is asked about (floats stay exact far beyond)


def _check_inputs(m_prime: object, d_model: object, D_K: object, target_f1: object) -> None:
    for name, v in (("m_prime", m_prime), ("d_model", d_model)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 2 <= v <= _MAX_SIZE:
            raise ValueError(f"{name} = {v!r}; expected an integer in [2, 2^{_MAX_SIZE.bit_length() - 1}]")
    if (D_K is None) == (target_f1 is None):
        raise ValueError("give exactly one of D_K (a key budget) and target_f1 (a target micro-F1)")
    if D_K is not None and (
        isinstance(D_K, bool) or not isinstance(D_K, (int, np.integer)) or not 1 <= D_K <= _MAX_SIZE
    ):
        raise ValueError(f"D_K = {D_K!r}; expected an integer in [1, 2^{_MAX_SIZE.bit_length() - 1}]")
    if target_f1 is not None:
        lo, hi = _F1_RANGE
        if isinstance(target_f1, bool) or not isinstance(target_f1, (int, float)) or not lo <= target_f1 <= hi:
            raise DomainError(f"target_f1 = {target_f1!r}; the fitted curves support targets in [{lo}, {hi}]")


def _check_rule(rule: object) -> None:
    if not isinstance(rule, DesignRule):
        why = (" (fit_from_runs returns None when fewer than 3 cells reached D_K*, as in a smoke table)"
               if rule is None else "")
        raise ValueError(f"rule = {rule!r}{why}; expected a DesignRule fitted on a preset with at least 3 such "
                         "cells")


def recommend(rule: DesignRule, m_prime: int, d_model: int, D_K: int | None = None,
              target_f1: float | None = None, extrapolate: bool = False) -> _Design:
    """(h, d_k) and the predicted F1 at ``D_K``, or the budget needed for ``target_f1`` (one of the two).

    Outside :attr:`DesignRule.domain`, or at a budget below or above those that :data:`_MIN_CELLS` fitted cells
    tested at this m' ln m' / d_model, raises :class:`DomainError` (naming the parameter and how far outside)
    unless ``extrapolate``: then the answer carries the reasons in ``flags``.
    """
    _check_rule(rule)
    _check_inputs(m_prime, d_model, D_K, target_f1)
    flags = rule.domain.violations(int(m_prime), int(d_model))
    if flags and not extrapolate:
        raise DomainError("; ".join(flags) + ". Pass extrapolate=True for a flagged answer.")
    x, lam = float(scaling_x(m_prime, d_model)), m_prime / d_model
    if target_f1 is not None:
        need, f = rule.c(target_f1) * x, rule.factor(target_f1)
        budget, lo, hi = need, need / f, need * f
    else:
        budget = lo = hi = float(D_K)
    lo_h, hi_h = rule.h_interval(lam)
    h = min(_pow2(rule.h_fit(lam)), max(1, 2 ** int(math.floor(math.log2(max(budget, 1.0))))))
    f1, f1_lo, f1_hi, n = rule.f1_at(budget, x)
    high = sorted((e[0][-1] * x / c[2] for c, e in zip(rule.cells, rule.envelopes)), reverse=True)[_MIN_CELLS - 1]
    if D_K is not None and (n < _MIN_CELLS or D_K > high * (1 + 1e-9)):
        if n < _MIN_CELLS:
            low = sorted(e[0][0] * x / c[2] for c, e in zip(rule.cells, rule.envelopes))[_MIN_CELLS - 1]
            msg = (f"D_K = {D_K} is below the budgets that {_MIN_CELLS} fitted cells tested at this m' ln m' / "
                   f"d_model (D_K >= {low:.3g}; {low / D_K:.2g}x below)")
        else:  # the curves are flat beyond their top: the F1 read there is the top's, the width unchecked
            msg = (f"D_K = {D_K} is above the budgets that {_MIN_CELLS} fitted cells tested at this m' ln m' / "
                   f"d_model (D_K <= {high:.3g}; {D_K / high:.2g}x above)")
        if not extrapolate:
            raise DomainError(msg)
        flags += (msg,)
    return _Design(m_prime=int(m_prime), d_model=int(d_model), x=x, target_f1=target_f1, D_K=budget, D_K_lo=lo,
                  D_K_hi=hi, h=h, h_lo=_pow2_floor(lo_h), h_hi=_pow2_ceil(hi_h),
                  d_k=budget / h, f1=f1, f1_lo=f1_lo, f1_hi=f1_hi, n_f1=n, flags=flags)


def _pow2_floor(v: float) -> int:
    return 2 ** int(math.floor(math.log2(max(v, 1.0)) + 1e-9))


def _pow2_ceil(v: float) -> int:
    return 2 ** int(math.ceil(math.log2(max(v, 1.0)) - 1e-9))


def lookup(rule: DesignRule, m_primes: list[int], d_models: list[int], target_f1: float = F1_TARGET) -> pd.DataFrame:
    """The rule over a grid, for readers without a kernel: one row per (m', d_model) inside the domain.

    Columns: m_prime, d_model, h, h_lo, h_hi, D_K (needed for ``target_f1``), D_K_lo, D_K_hi, d_k.
    """
    _check_rule(rule)
    for name, v in (("m_primes", m_primes), ("d_models", d_models)):
        if isinstance(v, (str, bytes)) or not hasattr(v, "__iter__"):
            raise ValueError(f"{name} = {v!r}; expected a list of integers (e.g. [{v!r}])")
    for m in m_primes:
        for d in d_models:
            _check_inputs(m, d, None, target_f1)
    rows = []
    for m in m_primes:
        for d in d_models:
            if rule.domain.violations(m, d):
                continue
            r = recommend(rule, m, d, target_f1=target_f1)
            rows.append(dict(m_prime=m, d_model=d, h=r.h, h_lo=r.h_lo, h_hi=r.h_hi, D_K=r.D_K, D_K_lo=r.D_K_lo,
                             D_K_hi=r.D_K_hi, d_k=r.d_k))
    return pd.DataFrame(rows, columns=["m_prime", "d_model", "h", "h_lo", "h_hi", "D_K", "D_K_lo", "D_K_hi", "d_k"])


def fit_from_runs(runs: pd.DataFrame, preset: str) -> DesignRule | None:
    """:func:`fit_rule` on one preset's base-grid runs; None when fewer than 3 cells reached D_K* (smoke)."""
    from ..thresholds import thresholds

    try:
        return fit_rule(thresholds(runs), runs, preset, tuple(int(h) for h in sorted(runs["h"].unique())))
    except ValueError:
        return None
