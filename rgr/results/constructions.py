"""Chapter *constructions* (book/constructions.ipynb): what it reads off its live tables (:mod:`rgr.studies`), as one
frozen :class:`ConstructionsFinding`, glued by field name ``<part>_<field>`` (:func:`rgr.results.findings.flatten`);
figures: :mod:`rgr.chapters.figures.constructions`. :func:`sweeps_finding` reads the sweeps
(:mod:`rgr.studies.construction_sweeps`; the explicit table), :func:`finding_rows` lays them out as measured against
predicted; :func:`coloring_summary`, :func:`softmax_width_finding` and :func:`checks_finding` read the other checks.

**The book's own findings about the paper's theory** (:class:`_PaperTheoryFinding`; the intro and *Does it
replicate?* paste its glued ``paper_*`` numbers): a gap in Theorem 8.1's proof (inside every bound the proof makes
explicit, Algorithm 2's target-present false positives *grow* with the head width; removing the leakage mean leaves a
count that does not; bounds and repair: :mod:`rgr.theory.theorem81`), and where Algorithm 1's ``d_k -> infinity``
limit starts to separate (a lower bound on Theorem 4.1's ``c_0``). :func:`rgr.studies.theory_checks.theorem81_tables`
and :func:`~rgr.studies.theory_checks.algorithm1_onset` compute the tables, :func:`paper_theory_finding` reads them
(the onset through :func:`onset_crossover`, which the chapter also shows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..task.graphs import Graph
from ..theory.bounds import theorem_B1_C
from ..theory.theorem81 import (
    PROOF_C,
    REPAIR_C,
    inside_theorem81,
    repair_smallest_m,
    repaired_dk_window,
    theorem81_bounds,
)
from .stats import loglog_slope, wilson_interval


@dataclass(frozen=True)
class _SweepsFinding:
    """What the chapter's sweeps measured; NaN / -1 where the tables hold nothing to read."""

    smallest_C: dict[str, float]  # per success-rate curve: smallest C at which every seed separated
    proof_C: float  # Theorem B.1's sufficient C at p = 1/4
    theory_d_k: int  # the theory cell's smallest d_k under the prescribed split (-1: none)
    theory_C_eff: float
    theory_D_K: int
    theory_ratio: float  # d_model / ln m at the theory cell
    grid_found: int  # book-grid cells (d_model <= 64) where the prescribed split separates
    grid_cells: int
    grid_ratio_lo: float  # d_model / ln m over the book grid's cells
    grid_ratio_hi: float
    limit_m: int  # the m of the limit phase
    limit_first_ratio: float  # smallest d_model / ln m with positive mean limit slack at B = d_model (phase m)
    limit_last_negative: float  # the largest grid ratio below it whose mean slack is <= 0 (NaN if none)
    n3_slope: float  # log-log slope in B of the N3 fluctuation's RMS over pairs (its typical size; predicted 1)
    n3_ratio_lo: float  # max N3 fluctuation / predicted scale, range over B
    n3_ratio_hi: float
    n3_mean_slope: float  # slope of the conditional mean's largest |value| over pairs (Lemma B.3(3): 0.5)
    n3_max_slope: float  # slope of the fluctuation's largest |value| over pairs, the statistic Sec. 5's (1) bounds
    n3_seeds: int  # seeds (embedding and signature draws) behind the N3 slopes
    n3_by_seed: tuple[str, str, str]  # the RMS, max and mean slopes fitted per seed, each as text ("1.03, 1.06")
    table_seeds: int  # seeds each data/constructions.csv row separated on (its smallest n_seeds)
    first_D_K_by_h: dict[int, int]  # smallest D_K with every pair separated, per head count
    background_dev: float  # largest |max non-edge - (h-1)/ell| on one-hot inputs
    absent_fp_inside: int  # target-absent false positives, one head on one-hot inputs, inside Theorem 8.1's bounds
    absent_inside_ells: str  # the context lengths of those rows, as text ("-1": no rows given)
    absent_inside_d_k: int
    absent_ell_min: int  # Theorem 8.1's shortest context at the background's m (one-hot: d_model = m)


def sweeps_finding(success: pd.DataFrame, table: pd.DataFrame, phase: pd.DataFrame, leak: pd.DataFrame,
                   split: pd.DataFrame, bg: pd.DataFrame, theory_cell: tuple[int, int],
                   bg_inside: pd.DataFrame | None = None) -> _SweepsFinding:
    """Read the chapter's tables (see :class:`_SweepsFinding`).

    ``bg_inside``: :func:`rgr.studies.construction_sweeps.softmax_background` rows with one head at a width
    and context lengths inside Theorem 8.1's explicit bounds (:mod:`rgr.theory.theorem81`); rows outside them
    are refused, since the theorem says nothing there.
    """
    need = success.groupby(["label", "C"]).success.all().reset_index()
    smallest = need[need.success].groupby("label").C.min().to_dict()
    m_t, d_t = theory_cell
    cell = table[(table.m == m_t) & (table.d_model == d_t) & (table.rule == "prescribed") & (table.criterion == "tau")]
    found = len(cell) and bool(cell.found.iloc[0])
    grid = table[(table.construction == "compressive") & (table.d_model <= 64)]
    pres = grid[(grid.rule == "prescribed") & (grid.criterion == "tau")]
    comp = phase[(phase.construction == "compressive") & (phase.B == phase.d_model)]
    lim = comp.groupby("d_model").slack.mean()
    ok = lim[lim > 0]
    below = lim[(lim <= 0) & (lim.index < ok.index.min())] if len(ok) else lim.iloc[:0]
    m_p = int(comp.m.iloc[0]) if len(comp) else 2
    inside = bg_inside if bg_inside is not None else bg.iloc[:0]
    for _, r in inside.iterrows():
        if r.h != 1 or not inside_theorem81(int(r.m), int(r.m), int(r.d_k), int(r.ell)):
            raise ValueError(f"bg_inside row outside Theorem 8.1's bounds (one head, one-hot): {r.to_dict()}")
    g = leak[leak.B >= 4].groupby("B").mean(numeric_only=True)
    by_seed = [d for _, d in leak[leak.B >= 4].groupby("seed")]
    ratio = g.n3_fluct_max / g.predicted
    first = split[split.separated].groupby("h").D_K.min()
    m_soft = int(bg.m.iloc[0]) if len(bg) else 2
    return _SweepsFinding(
        smallest_C={str(k): float(v) for k, v in smallest.items()}, proof_C=theorem_B1_C(0.25),
        theory_d_k=int(cell.d_k.iloc[0]) if found else -1,
        theory_C_eff=float(cell.C_eff.iloc[0]) if found else math.nan,
        theory_D_K=int(cell.D_K.iloc[0]) if found else -1, theory_ratio=d_t / math.log(m_t),
        grid_found=int(pres.found.sum()), grid_cells=len(pres),
        grid_ratio_lo=float((pres.d_model / np.log(pres.m)).min()) if len(pres) else math.nan,
        grid_ratio_hi=float((pres.d_model / np.log(pres.m)).max()) if len(pres) else math.nan,
        limit_m=m_p, limit_first_ratio=float(ok.index.min() / math.log(m_p)) if len(ok) else math.nan,
        limit_last_negative=float(below.index.max() / math.log(m_p)) if len(below) else math.nan,
        n3_slope=loglog_slope(g.index, g.n3_fluct_rms), n3_ratio_lo=float(ratio.min()) if len(g) else math.nan,
        n3_ratio_hi=float(ratio.max()) if len(g) else math.nan, n3_mean_slope=loglog_slope(g.index, g.n3_mean_max),
        n3_max_slope=loglog_slope(g.index, g.n3_fluct_max), n3_seeds=len(by_seed),
        n3_by_seed=tuple(", ".join(f"{loglog_slope(d.B, d[c]):.2f}" for d in by_seed)
                         for c in ("n3_fluct_rms", "n3_fluct_max", "n3_mean_max")),
        table_seeds=int(table.n_seeds.min()) if "n_seeds" in table and len(table) else -1,
        first_D_K_by_h={int(k): int(v) for k, v in first.items()},
        background_dev=float((bg.max_non_edge - bg.predicted).abs().max()),
        absent_fp_inside=int(inside.absent_false_positives.sum()) if len(inside) else -1,
        absent_inside_ells=", ".join(str(int(e)) for e in inside.ell) if len(inside) else "-1",
        absent_inside_d_k=int(inside.d_k.iloc[0]) if len(inside) else -1,
        absent_ell_min=theorem81_bounds(m_soft, m_soft).ell_min,
    )


def finding_rows(f: _SweepsFinding) -> pd.DataFrame:
    """Measured against predicted, one row per quantity (strings, ready for a table).

    ``kind``: "evidence" where the measurement could have come out against the prediction, "sanity check" where
    it holds by construction (a check of the code, not of the paper).
    """
    ev, sc = "evidence", "sanity check"
    rows = [(f"smallest C, {k}", f"{v:g}", f"proof: {f.proof_C:.0f} (Bernoulli)", ev) for k, v in f.smallest_C.items()]
    ells = f.absent_inside_ells
    rows += [
        ("theory cell: smallest d_k (prescribed split)", "none" if f.theory_d_k < 0 else
         f"{f.theory_d_k} (C = {f.theory_C_eff:.0f}, D_K = {f.theory_D_K})",
         f"C ln m, d_model / ln m = {f.theory_ratio:.0f}", ev),
        ("book grid: prescribed split separates", f"{f.grid_found} of {f.grid_cells} cells",
         "all, if c_0 ln m <= d_model", ev),
        ("d_model / ln m where the limit's mean slack turns positive (d_model doubling)",
         f"above {f.limit_last_negative:.0f}, by {f.limit_first_ratio:.0f}", "c_0 (not given)", ev),
        (f"N3 fluctuation, largest over pairs: log-log slope in B (mean of {f.n3_seeds} seeds; per seed)",
         f"{f.n3_max_slope:.2f} ({f.n3_by_seed[1]})", "1 (Sec. 5's (1), a bound over all pairs)", ev),
        (f"N3 fluctuation, RMS over pairs: log-log slope in B (mean of {f.n3_seeds} seeds; per seed)",
         f"{f.n3_slope:.2f} ({f.n3_by_seed[0]})", "1 (the proof's scale without the union bound's sqrt(ln m))", ev),
        ("N3 max / ((B/d_model) sqrt(d_k ln m))", f"{f.n3_ratio_lo:.1f} to {f.n3_ratio_hi:.1f}", "O(1)", ev),
        (f"N3 conditional mean, largest over pairs: slope in B (mean of {f.n3_seeds} seeds; per seed)",
         f"{f.n3_mean_slope:.2f} ({f.n3_by_seed[2]})", "0.5 (Lemma B.3(3), a bound over all pairs)", ev),
        ("smallest separating D_K by h (theory cell)",
         ", ".join(f"h={h}: {d}" for h, d in f.first_D_K_by_h.items()) or "none", "fewer for more heads", ev),
        ("softmax, one-hot: largest |max non-edge - (h-1)/ell|", f"{f.background_dev:.3f}",
         "0 (a non-owner head's softmax is uniform by construction)", sc),
        (f"softmax, one-hot, h = 1, d_k = {f.absent_inside_d_k}, ell = {ells} (inside Theorem 8.1's bounds): "
         "target-absent false positives", f"{f.absent_fp_inside}", "0 (Theorem 8.1)", ev),
    ]
    return pd.DataFrame(rows, columns=["quantity", "measured", "predicted", "kind"])


@dataclass(frozen=True)
class _ColoringSummary:
    """Algorithm 5's packing of one graph: colours used, blocks, and the paper's bound on the heads."""

    m: int
    m_edges: int
    delta: int
    colours: int
    blocks: int
    bound: int  # ceil(m'/block_size) + Delta


def coloring_summary(graph: Graph, col: pd.DataFrame, block_size: int) -> _ColoringSummary:
    """Summarise :func:`rgr.studies.construction_sweeps.coloring_table` rows of ``graph``."""
    st = graph.stats()
    return _ColoringSummary(m=st.m, m_edges=st.m_edges, delta=st.delta, colours=len(col), blocks=int(col.blocks.sum()),
                           bound=math.ceil(st.m_edges / block_size) + st.delta)


@dataclass(frozen=True)
class _SoftmaxWidthFinding:
    """The reading of Algorithm 2's width sweep (one cell, one ell, one seed: the theory cell).

    ``non_owner_percent``: percent of target-present failures whose largest mass comes from a non-owner head, at
    ``cell`` and ``ell``; ``non_owner_percent_all``: the same over the whole sweep; ``sd_slope``: log-log slope of
    the leakage-logit sd in d_k (predicted 1/2); ``sd_rel_err_percent``: largest |measured / predicted - 1|, in %.
    """

    non_owner_percent: float
    non_owner_percent_all: float
    cell: tuple[int, int]  # the slice non_owner_percent reads
    ell: int
    sd_slope: float
    sd_rel_err_percent: float
    window_lo: float  # the repaired theorem's d_k window at the cell (C = 2, c = 1/2)
    window_hi: float


def softmax_width_finding(df: pd.DataFrame, cell: tuple[int, int], ell: int) -> _SoftmaxWidthFinding:
    """Read :func:`rgr.studies.theory_checks.theorem81_tables` rows (see :class:`_SoftmaxWidthFinding`)."""
    t = df[(df.m == cell[0]) & (df.d_model == cell[1]) & (df.ell == ell)].sort_values("d_k")
    if t.empty:
        raise ValueError(f"no rows for cell {cell} at ell={ell}")
    t = t.groupby("d_k", as_index=False).sum(numeric_only=True)
    g = df.groupby(["m", "d_model", "d_k"], as_index=False).leak_sd.mean()
    cg = g[(g.m == cell[0]) & (g.d_model == cell[1])]
    return _SoftmaxWidthFinding(
        non_owner_percent=100 * float(t.present_non_owner.sum() / max(t.present.sum(), 1)),
        non_owner_percent_all=100 * float(df.present_non_owner.sum() / max(df.present.sum(), 1)),
        cell=(int(cell[0]), int(cell[1])), ell=int(ell),
        sd_slope=loglog_slope(cg.d_k, cg.leak_sd),
        sd_rel_err_percent=100 * float((df.leak_sd / df.leak_sd_predicted - 1).abs().max()),
        window_lo=repaired_dk_window(*cell)[0], window_hi=repaired_dk_window(*cell)[1],
    )


@dataclass(frozen=True)
class _ChecksFinding:
    """The reading of :mod:`rgr.studies.theory_checks`' tables: Proposition 8.4, Corollaries B.7 and B.10.

    ``p84_by_budget``: per budget D_K (one draw), both designs' failures and F1 and which is ahead, in words;
    ``rbce_verdict``: whether the limit separates for some or no sparse binary family; ``skew_*``: graphs with a
    separating width, the widths (-1: none), their ``C_eff`` and the seeds searched (-1: not recorded).
    """

    p84_by_budget: str
    rbce_verdict: str
    skew_found: int
    skew_n: int
    skew_C_lo: float
    skew_C_hi: float
    skew_d_k_lo: int
    skew_d_k_hi: int
    skew_seeds: int


def _p84_by_budget(p84: pd.DataFrame) -> str:
    """Per D_K where both designs ran: failures and F1 with h > 1 heads and with one, and which is ahead on each."""
    parts = []
    for D_K, g in p84.groupby("D_K"):
        one, many = g[g.h == 1], g[g.h > 1]
        if one.empty or many.empty:
            continue
        h = int(many.h.iloc[0])
        fo, fm = int(one.present_failures.iloc[0]), int(many.present_failures.iloc[0])
        f1o, f1m = float(one.f1.iloc[0]), float(many.f1.iloc[0])
        names = {1: "one head", h: f"{h} heads"}
        fewer = None if fo == fm else names[1 if fo < fm else h]
        higher = None if round(f1o, 3) == round(f1m, 3) else names[1 if f1o > f1m else h]
        if fewer is not None and fewer == higher:
            who = f"{fewer} ahead on both"
        else:
            who = ", ".join(x for x in (f"fewer failures with {fewer}" if fewer else "equal failures",
                                       f"higher F1 with {higher}" if higher else "equal F1"))
        parts.append(f"at D_K = {int(D_K)}, {fm} failures (F1 {f1m:.3f}) with {h} heads against {fo} (F1 {f1o:.3f}) "
                     f"with one: {who}")
    return "; ".join(parts) or "no budget with both designs"


def checks_finding(p84: pd.DataFrame, rbce: pd.DataFrame, skew: pd.DataFrame) -> _ChecksFinding:
    """Read :func:`~rgr.studies.theory_checks.prop84_table`, :func:`~rgr.studies.theory_checks.sparse_binary_table`
    and :func:`~rgr.studies.theory_checks.bounded_skew_table` rows (see :class:`_ChecksFinding`)."""
    found = skew.d_k.dropna()
    return _ChecksFinding(
        p84_by_budget=_p84_by_budget(p84),
        rbce_verdict=f"separates every pair for {'some' if rbce.limit_separated.any() else 'no'}",
        skew_found=int(skew.d_k.notna().sum()), skew_n=len(skew),
        skew_C_lo=float(skew.C_eff.min()), skew_C_hi=float(skew.C_eff.max()),
        skew_d_k_lo=int(found.min()) if len(found) else -1, skew_d_k_hi=int(found.max()) if len(found) else -1,
        skew_seeds=int(skew.n_seeds.max()) if "n_seeds" in skew and len(skew) else -1,
    )


# ---------------------------------------------------------------------------------------
# the book's findings about the paper's theory


@dataclass(frozen=True)
class _PaperTheoryFinding:
    """The book's findings about the paper's theory (see the module docstring).

    Theorem 8.1 (``gap_*``): the cell, the two context lengths and the widths used (all inside the proof's explicit
    bounds, ``gap_inside``), the target-present non-edge false positives at the smallest and largest width (and per
    1,000) at each length, the most left without the leakage mean, and whether the count rises (``gap_trend``). The
    repair (``repair_*``): its condition, how many rows checked it numerically and on which cell, the most failures
    the leakage added there, and the smallest ``m = 2^k`` with a non-empty window (C = 64, c = 1/2, h = 2).
    Algorithm 1 (``onset_*``): the range over the tested m of the smallest ``d_model / ln m`` at which at least
    half the seeds separate, the m tried (as text) and the seeds per point; the m whose half-seed crossover lies at
    ``d_model >= m`` (no compression, outside Theorem 4.1); over the compressive points only (``d_model < m``): the
    range of the smallest ratio at which every seed first separates (``onset_all_*``, for the m in
    ``onset_all_ms``) and the largest ratio at which some seed still fails (``onset_fail_max``; separation is not
    monotone in ``d_model``). Resolution: the grid step (``onset_step``), the m with exactly half the seeds at the
    crossover (``onset_half_ms``) and the ratios whose count's 95% Wilson interval holds 1/2 (``onset_unsure_*``).
    """

    gap_cell: tuple[int, int]
    gap_ell: int  # the longer context (m / 4): far inside the bound; the quoted counts are at this length
    gap_ell_short: int  # the shortest context the bound allows
    gap_ell_min: int  # the theorem's explicit bound: ell > 8 max(h, ln m)
    gap_d_k_min: int  # the theorem's explicit bound: d_k >= 64 (ln m)^2
    gap_d_k_lo: int
    gap_d_k_hi: int
    gap_present_lo: int
    gap_present_hi: int
    gap_rate_lo: float  # per 1,000 target-present non-edges
    gap_rate_hi: float
    gap_short_present_lo: int  # the same counts at the shortest context
    gap_short_present_hi: int
    gap_no_leak_max: int
    gap_trend: str  # "rise" | "do not rise steadily"
    gap_inside: bool
    gap_contexts: int  # sampled contexts per width
    repair_condition: str
    repair_cell: tuple[int, int]
    repair_rows: int
    repair_d_k_max: int
    repair_excess_max: int  # present failures the leakage adds, rows with kappa <= 1
    repair_rows_inside: int  # checked rows that also meet Theorem 8.1's explicit bounds on d_k and ell
    repair_smallest_m: int
    onset_lo: float
    onset_hi: float
    onset_all_lo: float  # compressive points only: every seed first separates
    onset_all_hi: float
    onset_all_ms: str  # the m with a compressive point where every seed separates
    onset_fail_max: float  # compressive points only: the largest ratio at which some seed fails
    onset_ms: str  # "64, 128, ..."
    onset_noncompressive_ms: str  # m whose half-seed crossover lies at d_model >= m ("" if none)
    onset_seeds: int
    onset_step: float
    onset_half_ms: str
    onset_unsure_lo: float
    onset_unsure_hi: float


def onset_crossover(df: pd.DataFrame, level: float = 0.5) -> pd.DataFrame:
    """Per m: separation probability by d_model, and the smallest d_model / ln m at which it reaches ``level``.

    Columns m, ratio_cross (NaN if never), d_model_cross, compressive (m > d_model at the crossover), seeds_separating
    (there; -1 if none), n_seeds.
    """
    rows = []
    for m, g in df.groupby("m"):
        p = g.groupby("d_model").agg(ratio=("ratio", "first"), k=("separated", "sum"), n=("seed", "size"))
        hit = p[p.k >= level * p.n]
        d = int(hit.index.min()) if len(hit) else None
        rows.append(dict(m=int(m), ratio_cross=float(p.ratio[d]) if d else math.nan,
                         d_model_cross=d if d else -1, compressive=bool(d is not None and m > d),
                         seeds_separating=int(p.k[d]) if d else -1, n_seeds=int(p.n.max())))
    return pd.DataFrame(rows)


def paper_theory_finding(gap: pd.DataFrame, repair: pd.DataFrame, onset: pd.DataFrame) -> _PaperTheoryFinding:
    """Read the gap and repair tables of :func:`rgr.studies.theory_checks.theorem81_tables` and the onset table of
    :func:`rgr.studies.theory_checks.algorithm1_onset` (see :class:`_PaperTheoryFinding`)."""
    if gap.empty or repair.empty or onset.empty:
        raise ValueError("paper_theory_finding needs non-empty gap, repair and onset tables")
    if gap[["m", "d_model"]].drop_duplicates().shape[0] != 1:
        raise ValueError("the gap table must hold one cell (m, d_model); widths and context lengths vary")
    m, d_model = int(gap.m.iloc[0]), int(gap.d_model.iloc[0])
    b = theorem81_bounds(m, d_model)
    by_ell = {int(e): g.sort_values("d_k") for e, g in gap.groupby("ell")}
    short, long = by_ell[min(by_ell)], by_ell[max(by_ell)]
    rate = 1000 * long.present / long.n_present.clip(lower=1)
    r = repair
    rep = r[r.kappa <= 1.0]
    rm, rd = int(r.m.iloc[0]), int(r.d_model.iloc[0])
    compressive = onset[onset.d_model < onset.m]
    cross = onset_crossover(onset)
    every = onset_crossover(compressive, level=1.0)
    every_ms = every.m[every.ratio_cross.notna()] if len(every) else []
    failed = compressive.loc[~compressive.separated.astype(bool), "ratio"]
    pts = onset.groupby(["m", "d_model"]).agg(ratio=("ratio", "first"), k=("separated", "sum"), n=("seed", "size"))
    lo95, hi95 = wilson_interval(pts.k.to_numpy(), pts.n.to_numpy())
    unsure = pts.ratio[(lo95 <= 0.5) & (0.5 <= hi95)]
    steps = [np.median(np.diff(np.sort(g.ratio.unique()))) for _, g in onset.groupby("m") if g.ratio.nunique() > 1]
    grows = all(len(g) > 1 and bool(np.all(np.diff(g.present.to_numpy()) > 0)) for g in by_ell.values())

    def span(c: pd.DataFrame, f) -> float:
        return float(f(c.ratio_cross)) if len(c) and c.ratio_cross.notna().any() else math.nan

    return _PaperTheoryFinding(
        gap_cell=(m, d_model), gap_ell=max(by_ell), gap_ell_short=min(by_ell),
        gap_ell_min=b.ell_min, gap_d_k_min=b.d_k_min,
        gap_d_k_lo=int(long.d_k.iloc[0]), gap_d_k_hi=int(long.d_k.iloc[-1]),
        gap_present_lo=int(long.present.iloc[0]), gap_present_hi=int(long.present.iloc[-1]),
        gap_rate_lo=float(rate.iloc[0]), gap_rate_hi=float(rate.iloc[-1]),
        gap_short_present_lo=int(short.present.iloc[0]), gap_short_present_hi=int(short.present.iloc[-1]),
        gap_no_leak_max=int(gap.present_no_leak.max()),
        gap_trend="rise" if grows else "do not rise steadily",
        gap_inside=all(inside_theorem81(m, d_model, int(k), int(e)) for k, e in zip(gap.d_k, gap.ell)),
        gap_contexts=int(long.n.iloc[0]),
        repair_condition=f"d_k ln m / d_model <= c, so d_model >= (C/c)(ln m)^3 (the proof's C = {PROOF_C:g}, the "
                         f"book's choice c = {REPAIR_C:g}; the paper gives no c)",
        repair_cell=(rm, rd), repair_rows=len(rep),
        repair_d_k_max=int(rep.d_k.max()) if len(rep) else -1,
        repair_excess_max=max(0, int((rep.present - rep.present_no_leak).max())) if len(rep) else -1,
        repair_rows_inside=sum(inside_theorem81(rm, rd, int(k), int(e)) for k, e in zip(rep.d_k, rep.ell)),
        repair_smallest_m=repair_smallest_m(),
        onset_lo=span(cross, pd.Series.min), onset_hi=span(cross, pd.Series.max),
        onset_all_lo=span(every, pd.Series.min), onset_all_hi=span(every, pd.Series.max),
        onset_all_ms=", ".join(str(int(v)) for v in every_ms),
        onset_fail_max=float(failed.max()) if len(failed) else math.nan,
        onset_ms=", ".join(str(int(v)) for v in cross.m),
        onset_noncompressive_ms=", ".join(str(int(v)) for v in cross.m[cross.ratio_cross.notna() & ~cross.compressive]),
        onset_seeds=int(cross.n_seeds.max()),
        onset_step=float(np.median(steps)) if steps else math.nan,
        onset_half_ms=", ".join(str(int(v)) for v in cross.m[2 * cross.seeds_separating == cross.n_seeds]),
        onset_unsure_lo=float(unsure.min()) if len(unsure) else math.nan,
        onset_unsure_hi=float(unsure.max()) if len(unsure) else math.nan,
    )


@dataclass(frozen=True)
class ConstructionsFinding:
    """Everything the chapter's prose quotes, by part: ``sweeps``, ``coloring``, ``width`` (Algorithm 2 against d_k),
    ``paper`` (the findings about the paper's theory) and ``checks`` (Proposition 8.4, Corollaries B.7, B.10)."""

    sweeps: _SweepsFinding
    coloring: _ColoringSummary
    width: _SoftmaxWidthFinding
    paper: _PaperTheoryFinding
    checks: _ChecksFinding
