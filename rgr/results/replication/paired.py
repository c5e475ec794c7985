"""The verdict rule for claims that one configuration beats another, or that the best lies at some h (chapter
*Does it replicate?*, "Comparisons are paired", where the rule is declared and these rows named).

**The rule.** A claim of the form "X beats Y" or "the lowest error is at h in H" is judged on paired seeds: the
two configurations trained with the same seed share their graph, embeddings, initialisation stream and contexts, so
the per-seed difference X - Y removes what the seeds share. The comparison is the 95% t-interval of the mean
paired difference over the seeds both have (:func:`paired_difference`): X beats Y when that interval lies wholly on
X's side of zero; they are tied when it holds zero. Two overlapping unpaired intervals decide nothing by this rule.

:data:`PAIRED_CLAIMS` names the verdict rows that are of this form; each is judged here
(tests/results/replication/test_paired.py checks that every one of them reports a paired comparison).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats as sps

__all__ = ["PAIRED_CLAIMS", "PairedDifference", "paired_difference", "by_seed"]

PAIRED_CLAIMS: tuple[str, ...] = ("fig1_one_head_worse", "value_d16", "value_d32_small", "value_d32_best", "gpt2_best")


@dataclass(frozen=True)
class PairedDifference:
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


def paired_difference(a: pd.Series, b: pd.Series) -> PairedDifference:
    """``a`` and ``b``: a metric indexed by seed. The seeds both have are paired; fewer than two give a point with an
    infinite interval and p = 1."""
    both = sorted(set(a.index) & set(b.index))
    d = np.array([float(a[s]) - float(b[s]) for s in both])
    n = len(d)
    if n == 0:
        return PairedDifference(0, math.nan, -math.inf, math.inf, 1.0, 0)
    mean = float(d.mean())
    lower = int((d < 0).sum())
    if n < 2:
        return PairedDifference(n, mean, -math.inf, math.inf, 1.0, lower)
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0.0:
        p = 1.0 if mean == 0.0 else 0.0
        return PairedDifference(n, mean, mean, mean, p, lower)
    half = float(sps.t.ppf(0.975, n - 1)) * se
    p = float(2 * sps.t.sf(abs(mean) / se, n - 1))
    return PairedDifference(n, mean, mean - half, mean + half, p, lower)


def by_seed(runs: pd.DataFrame, metric: str, h: int, D_K: int, **where) -> pd.Series:
    """The metric per seed at (h, D_K) (rows matching ``where``)."""
    sel = runs[(runs.h == h) & (runs.D_K == D_K)]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel.groupby("seed")[metric].mean()
