"""Numerical checks of the paper's results the first chapters did not illustrate (chapter *constructions*).

- :func:`algorithm1_onset`: where Algorithm 1's d_k -> infinity limit starts to separate, against
  d_model / ln m (Theorem 4.1's ``d_model >= c_0 ln m``), and :func:`onset_crossover`;
- :func:`prop84_table`: Proposition 8.4, softmax with one head against h = m/d_model heads at equal D_K;
- :func:`sparse_binary_table`: Corollary B.7 with sparse binary embeddings (feature rate
  ``p_B = c_p ln m / d_model`` well below 1/2) under compression m > d_model;
- :func:`bounded_skew_table`: Corollary B.10, r-regular graphs with ``h_0 = ceil(m'/d_model)`` heads;
- :func:`softmax_width_finding`: the reading of :func:`rgr.theory.softmax_width.width_sweep`.

Each table function returns a tidy DataFrame; each finding function a small frozen dataclass that the
chapter words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..experiments.construction_search import build, min_dk
from ..task.embeddings import gaussian_unit
from ..task.graphs import permutation_graph, regular_graph
from ..theory.checks import evaluate_contexts, limit_separation
from ..theory.constructions import (
    binary_family,
    construct_general_embedding,
    construct_general_graph,
    construct_softmax,
)
from ..theory.softmax_width import repaired_dk_window

__all__ = [
    "algorithm1_onset",
    "onset_crossover",
    "prop84_table",
    "sparse_binary_table",
    "bounded_skew_table",
    "SoftmaxWidthFinding",
    "softmax_width_finding",
    "all_context_budget",
    "SeedPaperFinding",
    "seed_paper_finding",
    "MarginFinding",
    "margin_finding",
]


def algorithm1_onset(ms: list[int], ratios: list[float], seeds: list[int]) -> pd.DataFrame:
    """Whether Algorithm 1's limit (blocks of d_model, tau = d_k/2) separates all pairs, per (m, d_model, seed).

    ``d_model = round(ratio * ln m)``; ``compressive`` says m > d_model (the regime the capacity
    argument is about; at d_model >= m Algorithm 1 has one head).
    """
    rows = []
    for m in ms:
        for ratio in ratios:
            d_model = max(1, round(ratio * math.log(m)))
            for s in seeds:
                c, _ = build("compressive", m, d_model, s, d_k=1)
                lim = limit_separation(c)
                rows.append(dict(m=m, d_model=d_model, ratio=d_model / math.log(m), seed=s, h=c.info.h,
                                 separated=bool(lim.slack > 0), slack=lim.slack / lim.tau, compressive=m > d_model))
    return pd.DataFrame(rows)


def onset_crossover(df: pd.DataFrame, level: float = 0.5) -> pd.DataFrame:
    """Per m: separation probability by d_model, and the smallest d_model / ln m at which it reaches ``level``.

    Columns m, ratio_cross (NaN if never), d_model_cross, compressive (m > d_model at the crossover),
    n_seeds.
    """
    rows = []
    for m, g in df.groupby("m"):
        p = g.groupby("d_model").agg(ratio=("ratio", "first"), prob=("separated", "mean"), n=("seed", "size"))
        hit = p[p.prob >= level]
        d = int(hit.index.min()) if len(hit) else None
        rows.append(dict(m=int(m), ratio_cross=float(p.ratio[d]) if d else math.nan,
                         d_model_cross=d if d else -1, compressive=bool(d is not None and m > d),
                         n_seeds=int(p.n.max())))
    return pd.DataFrame(rows)


def prop84_table(m: int, d_model: int, D_Ks: list[int], seed: int = 0, n: int = 200, ell: int = 16) -> pd.DataFrame:
    """Algorithm 2 with h = 1 and h = ceil(m/d_model) heads at equal D_K (Proposition 8.4's comparison).

    Gaussian unit-norm embeddings, one derangement; per (h, D_K): d_k = D_K / h, F1 and the failures
    on target-present rows (Prop. 8.4's event: contexts that contain the target), and the predicted
    single/multi ratio ``(m/d_model)/ln m`` (Eq. 22).
    """
    g, X = permutation_graph(m, seed), gaussian_unit(m, d_model, seed)
    rows = []
    for h in sorted({1, math.ceil(m / d_model)}):
        for D_K in D_Ks:
            if D_K % h:
                continue
            c = construct_softmax(g, X, d_k=D_K // h, h=h, seed=seed)
            chk = evaluate_contexts(c, g, seed=seed, n=n, ell=ell)
            p = chk.present
            rows.append(dict(m=m, d_model=d_model, h=h, B=c.info.B, d_k=D_K // h, D_K=D_K, f1=chk.f1,
                             present_failures=p.edge_failures + p.non_edge_failures,
                             present_rate=(p.edge_failures + p.non_edge_failures) / (p.n_edges + p.n_non_edges),
                             predicted_ratio=(m / d_model) / math.log(m)))
    return pd.DataFrame(rows)


def sparse_binary_table(m: int, d_model: int, c_ps: list[float], c_Bs: list[float], seeds: list[int],
                        d_k_max: int = 4096) -> pd.DataFrame:
    """Algorithm 4 on sparse binary rows (Corollary B.7): smallest d_k and D_K per feature rate and block size.

    ``p_B = c_p ln m / d_model``, ``B = round(c_B d_model / ln m)``; Bernoulli(1/20) signatures,
    ``X_inv = X^T / (d_model p_B)``. ``limit_separated``: the d_k -> infinity limit (first seed);
    ``formula``: ``m (ln m)^2 / d_model``, the corollary's D_K up to its constant.
    """
    if m <= d_model:
        raise ValueError(f"Corollary B.7 is about compression: need m > d_model, got m={m}, d_model={d_model}")
    rows = []
    for c_p in c_ps:
        for c_B in c_Bs:
            fam = binary_family(m, d_model, seeds[0], c_p=c_p, c_B=c_B)
            c = construct_general_embedding(permutation_graph(m, seeds[0]), fam, d_k=1, seed=seeds[0])
            lim = limit_separation(c)
            dk, note = min_dk("rbce", m, d_model, seeds, B=fam.B, c_p=c_p, c_B=c_B, d_k_max=d_k_max)
            rows.append(dict(m=m, d_model=d_model, c_p=c_p, p_B=fam.p_B, ones_per_row=d_model * fam.p_B, c_B=c_B,
                             B=fam.B, h=c.info.h, limit_separated=bool(lim.slack > 0), d_k=dk,
                             D_K=None if dk is None else c.info.h * dk, note=note,
                             formula=m * math.log(m) ** 2 / d_model))
    return pd.DataFrame(rows)


def bounded_skew_table(m: int, rs: list[int], d_model: int, seeds: list[int], d_k_max: int = 4096) -> pd.DataFrame:
    """Algorithm 5 on r-regular graphs (Corollary B.10): heads built against ``h_0 = ceil(m'/d_model)``.

    One row per r: Delta, whether the skew condition ``Delta <= m'/d_model`` (33) holds, the heads
    built (colour classes cut into blocks of d_model), h_0, the general bound ``h_0 + Delta``, the
    d_k -> infinity limit's slack (first seed), the smallest d_k separating every pair at
    tau = d_k/2 on every seed (None if none up to ``d_k_max`` or the limit fails), D_K, and
    ``C_eff = D_K d_model / (m' ln m')``, the constant of the corollary's ``Theta(m' log m' / d_model)``.
    """
    rows = []
    for r in rs:
        g = regular_graph(m, r, seeds[0])
        c = construct_general_graph(g, gaussian_unit(m, d_model, seeds[0]), d_k=1, block_size=d_model, seed=seeds[0])
        lim = limit_separation(c)
        dk, note = min_dk("general-graph", m, d_model, seeds, r=r, B=d_model, d_k_max=d_k_max)
        form = g.m_edges * math.log(g.m_edges) / d_model
        D_K = None if dk is None else c.info.h * dk
        rows.append(dict(m=m, r=r, m_edges=g.m_edges, d_model=d_model, delta=c.info.delta,
                         skew_ok=c.info.delta <= g.m_edges / d_model, h=c.info.h,
                         h0=math.ceil(g.m_edges / d_model), h_bound=c.info.h_bound,
                         limit_slack=lim.slack / lim.tau, d_k=dk, D_K=D_K, note=note,
                         C_eff=math.nan if D_K is None else D_K / form))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class SoftmaxWidthFinding:
    """The reading of Algorithm 2's width sweep (one cell, one ell, one seed: the theory cell).

    ``present_first``/``present_last``: target-present non-edge failures at the smallest and largest
    d_k; ``*_no_leak_max``: the most failures once the leakage mean is removed (over all widths);
    ``non_owner_share``: share of present failures whose largest mass comes from a non-owner head;
    ``sd_slope``: log-log slope of the measured leakage-logit sd in d_k (predicted 1/2);
    ``sd_rel_err``: largest |measured / predicted - 1| over all rows; ``repaired_excess_max``: the
    largest excess (failures minus no-leak failures, present rows) over rows with kappa <= ``kappa_max``,
    against ``unrepaired_excess_max`` over the other rows.
    """

    d_k_first: int
    d_k_last: int
    present_first: int
    present_last: int
    absent_first: int
    absent_last: int
    present_no_leak_max: int
    absent_no_leak_max: int
    non_owner_share: float
    sd_slope: float
    sd_rel_err: float
    kappa_max: float
    repaired_excess_max: int
    unrepaired_excess_max: int
    n_repaired: int
    window_lo: float  # the repaired theorem's d_k window at the cell (C = 2, c = 1/2)
    window_hi: float


def softmax_width_finding(df: pd.DataFrame, cell: tuple[int, int], ell: int, kappa_max: float = 1.0) -> SoftmaxWidthFinding:
    """Read :func:`rgr.theory.softmax_width.width_sweep` rows (see :class:`SoftmaxWidthFinding`)."""
    t = df[(df.m == cell[0]) & (df.d_model == cell[1]) & (df.ell == ell)].sort_values("d_k")
    if t.empty:
        raise ValueError(f"no rows for cell {cell} at ell={ell}")
    t = t.groupby("d_k", as_index=False).sum(numeric_only=True)
    g = df.groupby(["m", "d_model", "d_k"], as_index=False).leak_sd.mean()
    cg = g[(g.m == cell[0]) & (g.d_model == cell[1])]
    slope = float(np.polyfit(np.log(cg.d_k), np.log(cg.leak_sd), 1)[0]) if len(cg) > 1 else math.nan
    excess = df.present - df.present_no_leak
    rep = df.kappa <= kappa_max
    return SoftmaxWidthFinding(
        d_k_first=int(t.d_k.iloc[0]), d_k_last=int(t.d_k.iloc[-1]),
        present_first=int(t.present.iloc[0]), present_last=int(t.present.iloc[-1]),
        absent_first=int(t.absent.iloc[0]), absent_last=int(t.absent.iloc[-1]),
        present_no_leak_max=int(t.present_no_leak.max()), absent_no_leak_max=int(t.absent_no_leak.max()),
        non_owner_share=float(t.present_non_owner.sum() / max(t.present.sum(), 1)),
        sd_slope=slope, sd_rel_err=float((df.leak_sd / df.leak_sd_predicted - 1).abs().max()),
        kappa_max=kappa_max,
        repaired_excess_max=int(excess[rep].max()) if rep.any() else -1,
        unrepaired_excess_max=int(excess[~rep].max()) if (~rep).any() else -1,
        n_repaired=int(rep.sum()),
        window_lo=repaired_dk_window(*cell)[0], window_hi=repaired_dk_window(*cell)[1],
    )


def all_context_budget(runs: pd.DataFrame, d_model: int, b: float = 32.0) -> pd.DataFrame:
    """The D_K that serves every context, per m at one d_model: trained D_K* and the bit bound at ``b`` bits.

    ``runs``: a permutation-sweep table (``data/base.csv`` rows). Columns m, d_model, D_K, source.
    """
    from ..results.thresholds import thresholds
    from ..theory.bounds import bit_budget_DK

    t = thresholds(runs[runs.d_model == d_model]) if (runs.d_model == d_model).any() else pd.DataFrame()
    rows = []
    for _, r in t.iterrows():
        if pd.notna(r.D_K_star):
            rows.append(dict(m=int(r.m), d_model=d_model, D_K=float(r.D_K_star), source="trained D_K* (F1 >= 0.99)"))
        rows.append(dict(m=int(r.m), d_model=d_model, D_K=bit_budget_DK(int(r.m), int(r.m), d_model, b),
                         source=f"bit bound, b = {b:g}"))
    return pd.DataFrame(rows, columns=["m", "d_model", "D_K", "source"])


@dataclass(frozen=True)
class SeedPaperFinding:
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


def seed_paper_finding(per_context: pd.DataFrame, budget: pd.DataFrame, ell_ref: int = 16) -> SeedPaperFinding:
    """Read :func:`rgr.theory.per_context.per_context_table` and :func:`all_context_budget`."""
    med = per_context.groupby(["ell", "m"]).d_median.median().unstack("m")
    by_ell = per_context.groupby("ell").d_median.median()
    slope = float(np.polyfit(np.log(by_ell.index.values), by_ell.values, 1)[0]) if len(by_ell) > 1 else math.nan
    tr = budget[budget.source.str.startswith("trained")].sort_values("m")
    ref = by_ell.get(ell_ref, math.nan)
    return SeedPaperFinding(
        ell_lo=int(by_ell.index.min()), ell_hi=int(by_ell.index.max()),
        d_lo=float(by_ell.iloc[0]), d_hi=float(by_ell.iloc[-1]),
        m_spread=float((med.max(axis=1) - med.min(axis=1)).max()), slope_ln_ell=slope,
        m_lo=int(tr.m.iloc[0]) if len(tr) else -1, m_hi=int(tr.m.iloc[-1]) if len(tr) else -1,
        budget_lo=float(tr.D_K.iloc[0]) if len(tr) else math.nan,
        budget_hi=float(tr.D_K.iloc[-1]) if len(tr) else math.nan,
        ell_ref=ell_ref, d_ref=float(ref),
    )


@dataclass(frozen=True)
class MarginFinding:
    """Theorem 9.2 on trained models: margins, the bits they cost, and how far the bound is from D_K."""

    n: int
    all_recovered: bool  # every model has gamma > 0 (all ordered pairs on the right side)
    gamma_min: float
    gamma_max: float
    bits_min: float
    bits_max: float
    bound_over_DK_max: float  # largest (bound at gamma) / trained D_K: > 1 would contradict the theorem
    bound_over_DK_min: float
    # the largest (bound at gamma = 1, the end of the theorem's range) / trained D_K, permutation graphs (m' = m): below 1,
    # no margin could have put the bound above the trained D_K, so the comparison cannot fail (a sanity check)
    best_case_over_DK_max: float = math.nan


def margin_finding(df: pd.DataFrame) -> MarginFinding:
    """Read :func:`rgr.results.margins.trained_margins` rows (``best_case_over_DK_max`` needs columns m, d_model)."""
    from .margins import margin_bound_DK

    ok = df[df.gamma > 0]
    ratio = ok.bound_DK / ok.D_K
    nan = math.nan
    return MarginFinding(
        n=len(df), all_recovered=bool(len(ok) == len(df)),
        gamma_min=float(ok.gamma.min()) if len(ok) else nan, gamma_max=float(ok.gamma.max()) if len(ok) else nan,
        bits_min=float(ok.bits.min()) if len(ok) else nan, bits_max=float(ok.bits.max()) if len(ok) else nan,
        bound_over_DK_max=float(ratio.max()) if len(ok) else nan,
        bound_over_DK_min=float(ratio.min()) if len(ok) else nan,
        best_case_over_DK_max=max((margin_bound_DK(int(r.m), int(r.m), int(r.d_model), 1.0) / r.D_K
                                   for r in df.itertuples()), default=nan) if {"m", "d_model"} <= set(df) else nan,
    )
