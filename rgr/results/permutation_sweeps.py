"""The findings of chapter *permutation sweeps* (protocol E1-E3), each a small frozen result.

:func:`permutation_findings` reads the three tables of the chapter (the base grid, the diagonal
m / d_model = 8 and the extreme compression m / d_model = 32) and the constructions table, and returns
every number the chapter's readings state: transition widths, the law fits, head counts and the single-head
penalty, the rank ceiling, the bracket, the diagonal trend. Where the data are too thin for a quantity it
is NaN and ``notes`` says why, so a chapter run on the smoke preset words that instead of failing.
The tables the chapter shows come from :func:`penalty_table`, :func:`dk_table`, :func:`step_cutoffs` and,
for the diagonals, :mod:`rgr.results.diagonals`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from .. import catalog
from ..experiments.futility import futile_stops
from ..protocol import F1_TARGET
from ..store import load_table
from .diagonals import STOP_COLUMNS, DiagonalTrend, at_threshold, diagonal_trend, on_diagonal, with_cells_of
from .findings import listed
from .stats import h_star_split
from .thresholds import LawFits, bracket, law_fits, meets_precondition, single_head_penalty, thresholds, transitions


@dataclass(frozen=True)
class _TransitionWidths:
    """How sharp the F1-vs-D_K curves are (:func:`rgr.results.thresholds.transitions`)."""

    n_curves: int  # (cell, h) curves in the table
    n_reach: int  # curves whose mean F1 reaches the target
    n_sharp: int  # of those, the ones with a budget below mean F1 0.5 before the first passing one
    median_width: float  # D_pass / D_below over the sharp ones (NaN if none)
    min_width: float
    max_width: float
    median_range: float  # median of (largest / smallest tested D_K) per curve


@dataclass(frozen=True)
class _LawReading:
    """The E2 fits, as numbers (NaN when not computable; ``note`` then says why)."""

    n_cells: int
    n_reached: int
    c_all: float
    r2_all: float
    slope_icpt: float
    intercept: float
    r2_icpt: float
    c_pre: float
    r2_pre: float
    n_pre: int
    n_excluded: int
    n_excluded_above: int  # excluded cells whose D_K* lies above the precondition line
    r2_gap: float  # R^2 without the excluded cells minus R^2 with them, at the cells' D_K*; then at every cell's
    r2_gap_opt: float  # optimistic and conservative D_K* (E3; NaN if a cell lacks one)
    r2_gap_cons: float
    tightens: str  # in words, from the three gaps (:func:`_tightening`)
    paper_tightening: str  # this fit's tightening beside the paper's R^2, in words (:func:`_paper_tightening`)
    heads_slope: float
    heads_intercept: float
    heads_r2: float
    note: str  # "" or why the law could not be fitted


@dataclass(frozen=True)
class _DiagonalHeads:
    """h* at the first and last cell of the diagonal m / d_model = 8 with an h*, with the head counts tied with it
    (h_lo-h_hi); the head-count law h* ~ m / d_model predicts one h* along a fixed compression."""

    m_first: int
    h_first: int
    h_first_lo: int
    h_first_hi: int
    m_last: int
    h_last: int
    h_last_lo: int
    h_last_hi: int
    constant: str  # "holds ..." (the tied ranges at the two ends overlap), "fails ..." (they do not), "—" (too few)


@dataclass(frozen=True)
class _FutilityStops:
    """Runs the futility rule (not in the paper's protocol) stopped, on the diagonal m / d_model = 8 and the extreme
    compression m / d_model = 32, per cell in words (:func:`_stop_words`)."""

    diagonal: str  # "132 of the 560 runs at (1024, 128)"; "none of its runs"
    extreme: str


@dataclass(frozen=True)
class _HeadCounts:
    n_multi: int  # base cells with h* > 1
    n_with_h: int  # base cells with an h*
    n_top: int  # base cells whose h* is the largest head count tried
    h_max: int  # the largest head count tried on the base grid (0 if none)
    n_cells: int  # cells of the whole chapter (base, diagonal, extreme)
    n_single_never: int  # of those, cells where one head never reaches the target
    penalty_min: float  # D_K*(h=1) / D_K* where one head does reach it (NaN if nowhere)
    penalty_max: float


@dataclass(frozen=True)
class _RankCeiling:
    """One head, widened past D_K = d_model: the change in its best mean F1 (cells not yet at the target)."""

    n_cells: int
    median_abs: float  # median |change|
    max_abs: float  # largest |change|


@dataclass(frozen=True)
class _Bracketing:
    n_cells: int  # base cells with a D_K*
    n_above_lower: int  # D_K* >= the derangement (sampled-family) bound
    lower_gap_min: float  # smallest D_K* / that bound over the cells (how far above the bound the thresholds sit)
    lower_ratio_min: float  # all-m'-edge-graph bound / derangement bound
    lower_ratio_max: float
    n_rank_one: int  # cells where the best-split construction separated with a margin
    n_rank_one_is_m: int  # ... at D_K = m' (one rank-one head per edge)
    n_below_rank_one: int  # D_K* <= the best-split construction
    n_alg1_tested: int  # cells where the table tried the paper's split (Algorithm 1)
    n_alg1_separated: int  # ... and it separated every pair with a margin
    n_alg1_limit_fails: int  # ... and did not, because its d_k -> infinity limit already fails (note "limit fails")


@dataclass(frozen=True)
class _CutoffShare:
    """The share of a cell's runs that stopped at the step cutoff (stop_reason "cutoff"), lowest and highest cell."""

    low: float
    low_m: int
    low_d_model: int
    high: float
    high_m: int
    high_d_model: int


def _cutoff_share(runs: pd.DataFrame) -> _CutoffShare:
    if not len(runs) or "stop_reason" not in runs:
        return _CutoffShare(math.nan, 0, 0, math.nan, 0, 0)
    share = runs.assign(cut=runs["stop_reason"].eq("cutoff")).groupby(["m", "d_model"])["cut"].mean()
    lo, hi = share.idxmin(), share.idxmax()
    return _CutoffShare(float(share[lo]), int(lo[0]), int(lo[1]), float(share[hi]), int(hi[0]), int(hi[1]))


@dataclass(frozen=True)
class _PermutationFindings:
    transitions: _TransitionWidths
    law: _LawReading
    heads: _HeadCounts
    rank: _RankCeiling
    bracket: _Bracketing
    diagonal: DiagonalTrend
    cutoffs: _CutoffShare  # on the base grid
    diagonal_heads: _DiagonalHeads
    stops: _FutilityStops
    seeds_base: int  # most seeds behind one (cell, h, D_K) point of the base grid
    seeds_diagonal: int  # fewest on the diagonal's cells beyond the base grid
    notes: str  # "none" or what could not be computed from these tables, and why (the chapter pastes it)


def _median(s: pd.Series) -> float:
    return float(s.median()) if len(s) else math.nan


def _transition_widths(runs: pd.DataFrame) -> _TransitionWidths:
    tr = transitions(runs)
    span = runs.groupby(["m", "d_model", "r", "h"])["D_K"].agg(lambda s: s.max() / s.min())
    w = tr["width"].dropna()
    return _TransitionWidths(len(span), len(tr), len(w), _median(w), float(w.min()) if len(w) else math.nan,
                            float(w.max()) if len(w) else math.nan, _median(span))


def _r2_gap(cells: pd.DataFrame, column: str) -> float:
    """R² (through the origin) without the excluded cells minus with them, thresholds from ``column`` (or NaN)."""
    ok = cells[cells["D_K_star"].notna()]
    if column not in ok or ok[column].isna().any():
        return math.nan
    f = law_fits(ok.assign(D_K_star=ok[column]))
    return f.origin_pre.r2 - f.origin_all.r2 if f.origin_pre is not None and f.n_excluded else math.nan


def _tightening(gaps: tuple[float, float, float]) -> str:
    """The R² gaps at D_K* and both E3 ends in words: tighter (looser) only where all three are above (below) 0."""
    if all(math.isfinite(g) for g in gaps) and (min(gaps) > 0 or max(gaps) < 0):
        return (f"is {'tighter' if min(gaps) > 0 else 'looser'} without them at D_K* and at both threshold ends "
                "(the seeds' own noise is not measured here)")
    return "is about as tight without them as with them: the data cannot say whether dropping them tightens it"


def _paper_tightening(tight: str) -> str:
    """``tight`` beside the paper's fit, which tightens (*Does it replicate?*, rows law_r2_all and law_r2_pre)."""
    if tight.startswith("is tighter"):
        return "as the paper's is"
    if tight.startswith("is looser"):
        return "where the paper's tightens: that tightening is not reproduced here, for a reason unexplained"
    return "so the paper's tightening is neither reproduced nor contradicted here"


def law_reading(cells: pd.DataFrame) -> tuple[_LawReading, LawFits | None]:
    """The fits of :func:`rgr.results.thresholds.law_fits` as numbers, and the fits (None with too few cells)."""
    n_reached = int(cells["D_K_star"].notna().sum())
    nan = math.nan
    try:
        f = law_fits(cells)
    except ValueError as e:
        return _LawReading(n_cells=len(cells), n_reached=n_reached, c_all=nan, r2_all=nan, slope_icpt=nan,
                           intercept=nan,
                          r2_icpt=nan, c_pre=nan, r2_pre=nan, n_pre=0, n_excluded=0, n_excluded_above=0, r2_gap=nan,
                          r2_gap_opt=nan, r2_gap_cons=nan, tightens="",
                          paper_tightening="",
                          heads_slope=nan, heads_intercept=nan, heads_r2=nan, note=str(e)), None
    pre, icpt, heads = f.origin_pre, f.intercept_all, f.heads
    ok = cells[cells["D_K_star"].notna()]
    excluded = ok[~meets_precondition(ok)]
    above = int((excluded["D_K_star"].astype(float) > pre(excluded["x_law"].astype(float))).sum()) if pre else 0
    gaps = tuple(_r2_gap(cells, col) for col in ("D_K_star", "D_K_opt", "D_K_cons"))
    tight = _tightening(gaps)
    note = "" if heads else f"need h* in at least 2 cells to fit the head count, got {int(ok['h_star'].notna().sum())}"
    return _LawReading(n_cells=len(cells), n_reached=n_reached, c_all=f.origin_all.slope, r2_all=f.origin_all.r2,
                      slope_icpt=icpt.slope, intercept=icpt.intercept, r2_icpt=icpt.r2,
                      c_pre=pre.slope if pre else nan, r2_pre=pre.r2 if pre else nan, n_pre=pre.n if pre else 0,
                      n_excluded=f.n_excluded, n_excluded_above=above, r2_gap=gaps[0], r2_gap_opt=gaps[1],
                      r2_gap_cons=gaps[2], tightens=tight,
                      paper_tightening=_paper_tightening(tight),
                      heads_slope=heads.slope if heads else nan, heads_intercept=heads.intercept if heads else nan,
                      heads_r2=heads.r2 if heads else nan, note=note), f


def _head_counts(base_cells: pd.DataFrame, all_cells: pd.DataFrame, h_max: int) -> _HeadCounts:
    """``all_cells``: every cell of the chapter (one row per (m, d_model)); ``h_max``: largest h tried on the base
    grid."""
    pen = single_head_penalty(all_cells).astype(float)
    has = pen.dropna()
    return _HeadCounts(n_multi=int((base_cells["h_star"] > 1).sum()), n_with_h=int(base_cells["h_star"].notna().sum()),
                      n_top=int((base_cells["h_star"] == h_max).sum()), h_max=int(h_max), n_cells=len(all_cells),
                      n_single_never=int(pen.isna().sum()), penalty_min=float(has.min()) if len(has) else math.nan,
                      penalty_max=float(has.max()) if len(has) else math.nan)


def _rank_ceiling(runs: pd.DataFrame, target: float = F1_TARGET) -> _RankCeiling:
    """Per cell, best mean F1 of one head at D_K > d_model minus that at D_K <= d_model, where the latter < target."""
    one = runs[runs["h"] == 1].groupby(["m", "d_model", "D_K"])["test_f1"].mean().reset_index()
    gains = []
    for (_, d), g in one.groupby(["m", "d_model"]):
        lo, hi = g[g["D_K"] <= d]["test_f1"].max(), g[g["D_K"] > d]["test_f1"].max()
        if pd.notna(lo) and pd.notna(hi) and lo < target:
            gains.append(float(hi - lo))
    s = pd.Series(gains, dtype=float)
    top = (lambda v: float(v.max()) if len(v) else math.nan)
    return _RankCeiling(len(s), _median(s.abs()), top(s.abs()))


def _bracketing(cells: pd.DataFrame, constructions: pd.DataFrame | None) -> _Bracketing:
    b = bracket(cells, constructions)
    ok = cells["D_K_star"].notna().to_numpy()
    dk = cells["D_K_star"].astype(float).to_numpy()
    m_edges = (b["m"] * b["r"]).to_numpy(float)
    rank_one = b["construction"].to_numpy(float) if "construction" in b else np.full(len(b), np.nan)
    alg1 = b["algorithm1"].to_numpy(float) if "algorithm1" in b else np.full(len(b), np.nan)
    tested = b["algorithm1_tested"].to_numpy(bool) if "algorithm1_tested" in b else np.zeros(len(b), bool)
    gap = dk[ok] / b["lower_sampled"].to_numpy(float)[ok]
    gap = gap[np.isfinite(gap)]
    ratio = (b["lower"] / b["lower_sampled"]).to_numpy(float)
    ratio = ratio[np.isfinite(ratio)]
    return _Bracketing(n_cells=int(ok.sum()),
                       n_above_lower=int((ok & (dk >= b["lower_sampled"].to_numpy(float))).sum()),
                      lower_gap_min=float(gap.min()) if gap.size else math.nan,
                      lower_ratio_min=float(ratio.min()) if ratio.size else math.nan,
                      lower_ratio_max=float(ratio.max()) if ratio.size else math.nan,
                      n_rank_one=int(np.isfinite(rank_one).sum()), n_rank_one_is_m=int((rank_one == m_edges).sum()),
                      n_below_rank_one=int((ok & (dk <= rank_one)).sum()), n_alg1_tested=int(tested.sum()),
                      n_alg1_separated=int((tested & np.isfinite(alg1)).sum()),
                      n_alg1_limit_fails=_limit_fails(cells, constructions))


def _limit_fails(cells: pd.DataFrame, constructions: pd.DataFrame | None) -> int:
    """Cells of ``cells`` where the prescribed split was tried, found nothing and its limit already fails."""
    if constructions is None or not len(constructions) or "note" not in constructions:
        return 0
    c = constructions[(constructions["rule"] == "prescribed") & (constructions["criterion"] == "margin")]
    bad = c.groupby(["m", "d_model", "r"]).apply(
        lambda g: (~g["found"].astype(bool)).all() and (g["note"] == "limit fails").any(), include_groups=False)
    bad = bad[bad].reset_index()[["m", "d_model", "r"]]
    return len(cells[["m", "d_model", "r"]].merge(bad, on=["m", "d_model", "r"]))


def read_constructions(path: Path, preset: str) -> pd.DataFrame | None:
    """``data/constructions.csv`` for the bracket: None when the file is missing; the smoke preset's rows only
    when the chapter itself runs on smoke data (they cover other cells than the book's)."""
    if not path.is_file():
        return None
    t = load_table(path, catalog.get("constructions").schema)  # the strict loader, as for every table
    keep = t[t["preset"] != "smoke"] if preset != "smoke" else t
    return keep.reset_index(drop=True)


class _ChapterCells(NamedTuple):
    """The per-cell thresholds of the chapter's three cell sets."""

    base: pd.DataFrame
    diagonal: pd.DataFrame  # m / d_model = 8: the base grid's diagonal cells and the lambda8 runs
    extreme: pd.DataFrame  # m / d_model = 32: the base grid's and the lambda32 runs


def _cells(runs: pd.DataFrame) -> pd.DataFrame:
    """:func:`rgr.results.thresholds.thresholds` with each cell's preset (a column ``preset`` when the runs have
    one), how its runs at D_K* stopped (:func:`rgr.results.diagonals.at_threshold`, when they record it), and its
    runs (``n_runs``) and how many of them the futility rule stopped (``n_futile``; 0 without a ``stop_reason``),
    and its head counts h_tied, h_rejected, h_untested (:func:`rgr.results.stats.h_star_split`; () without an h*)."""
    t = thresholds(runs)
    if len(t):
        at = {k: g for k, g in runs.groupby(["m", "d_model"])}
        split = [((), (), ()) if pd.isna(c.h_star) else h_star_split(at[(c.m, c.d_model)], int(c.D_K_star),
                                                                       int(c.h_star)) for c in t.itertuples()]
        t = t.assign(**{k: [x[i] for x in split] for i, k in enumerate(("h_tied", "h_rejected", "h_untested"))})
        n = runs.groupby(["m", "d_model"]).size().rename("n_runs").to_frame()
        stops = futile_stops(runs).cells.groupby(["m", "d_model"])["stopped"].sum().rename("n_futile")
        n = n.join(stops).fillna({"n_futile": 0}).astype(int)
        t = t.join(n, on=["m", "d_model"])
    if set(STOP_COLUMNS) <= set(runs) and len(t):
        t = at_threshold(runs, t)
    if "preset" in runs and len(t):
        p = runs.groupby(["m", "d_model"])["preset"].agg(lambda s: "+".join(sorted(set(s)))).rename("preset")
        t = t.join(p, on=["m", "d_model"])
    return t


def chapter_cells(base: pd.DataFrame, diag: pd.DataFrame, extreme: pd.DataFrame) -> _ChapterCells:
    """The per-cell thresholds of the base grid, the diagonal and the extreme compression (see :func:`_cells`)."""
    return _ChapterCells(_cells(base), _cells(with_cells_of(diag, on_diagonal(base, 8))),
                        _cells(with_cells_of(extreme, on_diagonal(base, 32))))


def _stop_words(cells: pd.DataFrame) -> str:
    """The cells of ``cells`` (rows of :func:`_cells`) with a futility-stopped run, in words."""
    if not len(cells) or "n_futile" not in cells:
        return "none of its runs"
    hit = cells[cells["n_futile"] > 0].sort_values("m")
    words = "; ".join(f"{int(c.n_futile):,} of the {int(c.n_runs):,} runs at ({int(c.m)}, {int(c.d_model)})"
                      for c in hit.itertuples())
    return words or "none of its runs"


def _diagonal_heads(cells: pd.DataFrame) -> _DiagonalHeads:
    """h* at the diagonal's first and last cell with an h* (``cells``: rows of :func:`_cells`). A constant h* fails
    only where no head count tied at one end went uncompared (no run near D_K*) at the other."""
    ok = cells[cells["h_star"].notna()].sort_values("m") if len(cells) else cells
    if len(ok) < 2:
        return _DiagonalHeads(0, 0, 0, 0, 0, 0, 0, 0, "—")
    a, z = ok.iloc[0], ok.iloc[-1]
    ends = [(int(c["m"]), int(c["h_star"]), int(c["h_lo"]), int(c["h_hi"])) for c in (a, z)]
    if ends[0][2] <= ends[1][3] and ends[1][2] <= ends[0][3]:
        return _DiagonalHeads(*ends[0], *ends[1], "holds within the head counts tied with h* at the two ends")
    gaps = [(int(x["m"]), int(y["m"]), hs) for x, y in ((a, z), (z, a))
            if (hs := [str(h) for h in x["h_tied"] if h not in y["h_rejected"]])]
    if not gaps:
        return _DiagonalHeads(*ends[0], *ends[1], "fails here: the head counts tied with h* at the two ends do not "
                                                  "overlap; why is unexplained")
    said = "; ".join(f"h = {listed(hs)}, tied with h* at m = {m}, {'has' if len(hs) == 1 else 'have'} no run within "
                     f"10% of D_K* at m = {other}" for m, other, hs in gaps)
    return _DiagonalHeads(*ends[0], *ends[1], "cannot be tested here: the tied ranges at the two ends do not overlap, "
                                              f"but {said}, so they were not compared there")


def every_cell(cells: _ChapterCells) -> pd.DataFrame:
    """One row per (m, d_model) across the chapter's cell sets (base grid first)."""
    return pd.concat(list(cells)).drop_duplicates(["m", "d_model"]).reset_index(drop=True)


def permutation_findings(base: pd.DataFrame, cells: _ChapterCells,
                         constructions: pd.DataFrame | None) -> _PermutationFindings:
    """Every number the chapter states, from the base grid's runs, the chapter's cells and the constructions."""
    everything = every_cell(cells)
    law, _ = law_reading(cells.base)
    diagonal = diagonal_trend(cells.diagonal, 8)
    notes = [law.note] if law.note else []
    if diagonal.n_cells < 2:
        notes.append(
            f"need D_K* in at least 2 cells of the diagonal m / d_model = 8 to read its trend, got {diagonal.n_cells}"
        )
    if constructions is None:
        notes.append("data/constructions.csv is missing, so the bracket has no construction side "
                     "(produce it with `python -m rgr constructions`)")
    h_max = int(base["h"].max()) if len(base) else 0
    return _PermutationFindings(transitions=_transition_widths(base), law=law,
                               heads=_head_counts(cells.base, everything, h_max), rank=_rank_ceiling(base),
                               bracket=_bracketing(cells.base, constructions), diagonal=diagonal,
                               cutoffs=_cutoff_share(base), diagonal_heads=_diagonal_heads(cells.diagonal),
                               stops=_FutilityStops(_stop_words(cells.diagonal), _stop_words(cells.extreme)),
                               seeds_base=int(cells.base["n_seeds"].max()) if len(cells.base) else 0,
                               seeds_diagonal=int(cells.diagonal["n_seeds"].min()) if len(cells.diagonal) else 0,
                               notes="; ".join(notes) or "none")


def penalty_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per cell: D_K*, h*, one head's threshold and best mean F1, and the penalty D_K*(h=1) / D_K*."""
    out = cells[["m", "d_model", "D_K_star", "h_star", "D_K_star_h1", "max_f1_h1"]].copy()
    out["penalty"] = single_head_penalty(cells).astype(float)
    return out.rename(columns={"D_K_star": "D_K*", "h_star": "h*", "D_K_star_h1": "D_K*(h=1)",
                               "max_f1_h1": "best F1, h=1", "penalty": "D_K*(h=1) / D_K*"})


def dk_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Table 1: d_k* = D_K* / h* with rows m and columns d_model."""
    t = cells.assign(d_k_star=cells["d_k_star"].astype(float)).pivot(index="m", columns="d_model", values="d_k_star")
    t.columns = [f"d_model={d}" for d in t.columns]
    return t.reset_index()


def step_cutoffs(runs: pd.DataFrame) -> pd.DataFrame:
    """Table 2: the step cutoff (max_steps) used per (m, d_model) cell."""
    return runs.groupby(["m", "d_model"], as_index=False)["max_steps"].max()
