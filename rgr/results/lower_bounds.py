"""What the chapter *lower bounds* (book/lower_bounds.ipynb) reads off its tables, as one frozen finding.

:func:`bounds_finding` reads the closed-form bound tables (:mod:`rgr.theory.bounds`) against
``data/constructions.csv``; :func:`margin_finding` the trained margins and :func:`seed_paper_finding` the
per-context widths (both of :mod:`rgr.studies.lower_bounds`), these against the all-contexts budget
(:func:`all_context_budget`, from ``data/base.csv``). :class:`LowerBoundsFinding` holds the three; the chapter glues
:func:`rgr.results.findings.flatten` of it, so its prose names every number ``<part>_<field>``. The figures are
:mod:`rgr.chapters.figures.lower_bounds`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..theory.bounds import bit_budget_DK, margin_bound_DK
from .thresholds import thresholds


@dataclass(frozen=True)
class _BoundsFinding:
    """The regime table's fit to the exact count, and the constructions' distance from the bit bound.

    ``form_ratio``: per regime, (min, max) over m of bound / regime form (flat: the form has the
    bound's growth); ``entropy_bracket``: whether the exact count lies in its entropy bracket on every row;
    ``gap_lo``/``gap_hi``: explicit D_K / bit bound over the cells with a construction; ``largest_bound``:
    per b, the largest bit bound over the table's cells; ``rank_one_percent``: percent of cells whose
    cheapest construction is one rank-one head per edge (D_K = m'); ``bits``: the b of the gap table;
    ``table_seeds``: the seeds on which each construction of ``data/constructions.csv`` separated (its smallest
    ``n_seeds``; -1 without the table).
    """

    form_ratio: dict[str, tuple[float, float]]
    entropy_bracket: str  # "holds" | "fails"
    bits: float
    gap_lo: float
    gap_hi: float
    largest_bound: dict[float, float]
    rank_one_percent: float
    table_seeds: int


def bounds_finding(reg: pd.DataFrame, gap: pd.DataFrame, bnd: pd.DataFrame, bits: float,
                   table: pd.DataFrame | None = None) -> _BoundsFinding:
    """Read :func:`rgr.theory.bounds.regime_table`, :func:`~rgr.theory.bounds.gap_table` (at ``bits`` bits per
    parameter) and :func:`~rgr.theory.bounds.bound_rows` (see :class:`_BoundsFinding`); ``table``: the
    ``data/constructions.csv`` rows the gap table was built from (for their seed count)."""
    ratio = reg.groupby("regime").form_ratio.agg(["min", "max"])
    g = gap.dropna(subset=["best_D_K"])
    inside = bool(((reg.entropy_lo <= reg.log2_count) & (reg.log2_count <= reg.entropy_hi)).all())
    return _BoundsFinding(
        form_ratio={str(k): (float(r["min"]), float(r["max"])) for k, r in ratio.iterrows()},
        entropy_bracket="holds" if inside else "fails", bits=float(bits),
        gap_lo=float(g.best_over_bound.min()) if len(g) else math.nan,
        gap_hi=float(g.best_over_bound.max()) if len(g) else math.nan,
        largest_bound={float(b): float(s.bound_DK.max()) for b, s in bnd.groupby("b")},
        rank_one_percent=100 * float((g.best_D_K == g.m_edges).mean()) if len(g) else math.nan,
        table_seeds=int(table.n_seeds.min()) if table is not None and len(table) else -1,
    )


# decimals the chapter shows of the trained models' margins: training takes a different float path on each
# CPU (its matmul kernels), which moves gamma by about 1e-6 of itself, so nothing finer is glued
_MARGIN_DIGITS = {"gamma": 5, "bits": 1, "ratio": 2}


def all_context_budget(runs: pd.DataFrame, d_model: int, b: float = 32.0) -> pd.DataFrame:
    """The D_K that serves every context, per m at one d_model: trained D_K* and the bit bound at ``b`` bits.

    ``runs``: a permutation-sweep table (``data/base.csv`` rows). Columns m, d_model, D_K, source.
    """
    t = thresholds(runs[runs.d_model == d_model]) if (runs.d_model == d_model).any() else pd.DataFrame()
    rows = []
    for _, r in t.iterrows():
        if pd.notna(r.D_K_star):
            rows.append(dict(m=int(r.m), d_model=d_model, D_K=float(r.D_K_star),
                             source="trained D_K* (F1 >= 0.99)"))
        rows.append(dict(m=int(r.m), d_model=d_model, D_K=bit_budget_DK(int(r.m), int(r.m), d_model, b),
                         source=f"bit bound, b = {b:g}"))
    return pd.DataFrame(rows, columns=["m", "d_model", "D_K", "source"])


@dataclass(frozen=True)
class _SeedPaperFinding:
    """Per-context width against the all-contexts budget (chapter *lower bounds*).

    ``d_at``: median per-context width at the smallest and largest ell (over m and seeds);
    ``m_spread``: the largest difference between the m's medians at one ell (0: no dependence on m);
    ``slope_ln_ell``: least-squares slope of the median width in ln(ell); ``budget_lo``/``budget_hi``:
    trained D_K* at the smallest and largest m with one (NaN without data); ``d_ref``: the median
    per-context width at ``ell_ref`` (the training contexts' length).
    """

    ell_lo: int
    ell_hi: int
    d_lo: float
    d_hi: float
    m_spread: float
    slope_ln_ell: float
    m_lo: int
    m_hi: int
    budget_lo: float
    budget_hi: float
    ell_ref: int
    d_ref: float
    budget_d_model: int  # the d_model of the budget's rows


def seed_paper_finding(per_context: pd.DataFrame, budget: pd.DataFrame, budget_d_model: int,
                       ell_ref: int = 16) -> _SeedPaperFinding:
    """Read :func:`rgr.studies.lower_bounds.per_context_table` and :func:`all_context_budget` (at
    ``budget_d_model``)."""
    med = per_context.groupby(["ell", "m"]).d_median.median().unstack("m")
    by_ell = per_context.groupby("ell").d_median.median()
    slope = float(np.polyfit(np.log(by_ell.index.values), by_ell.values, 1)[0]) if len(by_ell) > 1 else math.nan
    tr = budget[budget.source.str.startswith("trained")].sort_values("m")
    ref = by_ell.get(ell_ref, math.nan)
    return _SeedPaperFinding(
        ell_lo=int(by_ell.index.min()), ell_hi=int(by_ell.index.max()),
        d_lo=float(by_ell.iloc[0]), d_hi=float(by_ell.iloc[-1]),
        m_spread=float((med.max(axis=1) - med.min(axis=1)).max()), slope_ln_ell=slope,
        m_lo=int(tr.m.iloc[0]) if len(tr) else -1, m_hi=int(tr.m.iloc[-1]) if len(tr) else -1,
        budget_lo=float(tr.D_K.iloc[0]) if len(tr) else math.nan,
        budget_hi=float(tr.D_K.iloc[-1]) if len(tr) else math.nan,
        ell_ref=ell_ref, d_ref=float(ref), budget_d_model=budget_d_model,
    )


@dataclass(frozen=True)
class _MarginFinding:
    """Theorem 9.2 on trained models: margins, the bits they cost, and how far the bound is from D_K.

    Floats are rounded to :data:`_MARGIN_DIGITS` (the decimals the chapter shows): training takes a different float
    path on each CPU (its matmul kernels), which moves gamma by about 1e-6 of itself.
    """

    n: int
    recovered: str  # whether every model has gamma > 0 (all ordered pairs on the right side): "every" | "not every"
    gamma_min: float
    gamma_max: float
    bits_min: float
    bits_max: float
    bound_over_DK_max: float  # largest (bound at gamma) / trained D_K: > 1 would contradict the theorem
    bound_over_DK_min: float
    # the largest (bound at gamma = 1, the end of the theorem's range) / trained D_K, permutation graphs (m' = m):
    # below 1, no margin could have put the bound above the trained D_K, so the comparison cannot fail (a sanity check)
    best_case_over_DK_max: float = math.nan


def margin_finding(df: pd.DataFrame) -> _MarginFinding:
    """Read :func:`rgr.studies.lower_bounds.trained_margins` rows (``best_case_over_DK_max`` needs columns m,
    d_model)."""
    ok = df[df.gamma > 0]
    ratio = ok.bound_DK / ok.D_K
    nan = math.nan
    g, b, r = (_MARGIN_DIGITS[k] for k in ("gamma", "bits", "ratio"))
    best = max((margin_bound_DK(int(x.m), int(x.m), int(x.d_model), 1.0) / x.D_K for x in df.itertuples()),
               default=nan) if {"m", "d_model"} <= set(df) else nan
    return _MarginFinding(
        n=len(df), recovered="every" if len(ok) == len(df) else "not every",
        gamma_min=round(float(ok.gamma.min()), g) if len(ok) else nan,
        gamma_max=round(float(ok.gamma.max()), g) if len(ok) else nan,
        bits_min=round(float(ok.bits.min()), b) if len(ok) else nan,
        bits_max=round(float(ok.bits.max()), b) if len(ok) else nan,
        bound_over_DK_max=round(float(ratio.max()), r) if len(ok) else nan,
        bound_over_DK_min=round(float(ratio.min()), r) if len(ok) else nan,
        best_case_over_DK_max=round(best, r) if math.isfinite(best) else best,
    )


@dataclass(frozen=True)
class LowerBoundsFinding:
    """Everything the chapter's prose quotes, by part: ``bounds`` (the bit bound against the constructions),
    ``margins`` (Theorem 9.2 on trained models) and ``contexts`` (the per-context width against the budget)."""

    bounds: _BoundsFinding
    margins: _MarginFinding
    contexts: _SeedPaperFinding
