"""What the chapter *constructions* reads off its tables (issue 13 item 2: findings in the package).

:func:`constructions_finding` condenses the chapter's live tables (success rates, the explicit
table, the limit phase, the leakage sweep, the head split, the softmax background) into one frozen
:class:`ConstructionsFinding`; :func:`finding_rows` lays it out as measured-against-predicted rows for
``rgr.chapters.display.table``. :func:`coloring_summary` does the same for Algorithm 5's packing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..task.graphs import Graph
from ..theory.constructions import theorem_B1_C
from ..theory.theorem81 import inside_theorem81

__all__ = ["ConstructionsFinding", "constructions_finding", "finding_rows", "ColoringSummary", "coloring_summary"]


@dataclass(frozen=True)
class ConstructionsFinding:
    """The chapter's measured quantities; NaN / -1 where the tables hold nothing to read."""

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
    limit_first_ratio: float  # smallest d_model / ln m with positive mean limit slack at B = d_model (phase m)
    limit_last_negative: float  # the largest grid ratio below it whose mean slack is <= 0 (NaN if none)
    n3_slope: float  # log-log slope of the N3 fluctuation RMS in B (predicted 1)
    n3_ratio_lo: float  # max N3 fluctuation / predicted scale, range over B
    n3_ratio_hi: float
    n3_mean_slope: float  # slope of the conditional mean (0.5 at block size B)
    first_D_K_by_h: dict[int, int]  # smallest D_K with every pair separated, per head count
    background_dev: float  # largest |max non-edge - (h-1)/ell| on one-hot inputs
    absent_fp_inside: int  # target-absent false positives, one head on one-hot inputs, inside Theorem 8.1's bounds
    absent_inside_ells: tuple[int, ...]  # the context lengths of those rows (-1: no rows given)
    absent_inside_d_k: int


def _slope(x: pd.Index | np.ndarray, y: pd.Series | np.ndarray) -> float:
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0]) if len(x) > 1 else math.nan


def constructions_finding(success: pd.DataFrame, table: pd.DataFrame, phase: pd.DataFrame, leak: pd.DataFrame,
                          split: pd.DataFrame, bg: pd.DataFrame, theory_cell: tuple[int, int],
                          bg_inside: pd.DataFrame | None = None) -> ConstructionsFinding:
    """Read the chapter's tables (see :class:`ConstructionsFinding`).

    ``bg_inside``: :func:`rgr.experiments.construction_sweeps.softmax_background` rows with one head at a width
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
    ratio = g.n3_fluct_max / g.predicted
    first = split[split.separated].groupby("h").D_K.min()
    return ConstructionsFinding(
        smallest_C={str(k): float(v) for k, v in smallest.items()}, proof_C=theorem_B1_C(0.25),
        theory_d_k=int(cell.d_k.iloc[0]) if found else -1, theory_C_eff=float(cell.C_eff.iloc[0]) if found else math.nan,
        theory_D_K=int(cell.D_K.iloc[0]) if found else -1, theory_ratio=d_t / math.log(m_t),
        grid_found=int(pres.found.sum()), grid_cells=len(pres),
        grid_ratio_lo=float((pres.d_model / np.log(pres.m)).min()) if len(pres) else math.nan,
        grid_ratio_hi=float((pres.d_model / np.log(pres.m)).max()) if len(pres) else math.nan,
        limit_first_ratio=float(ok.index.min() / math.log(m_p)) if len(ok) else math.nan,
        limit_last_negative=float(below.index.max() / math.log(m_p)) if len(below) else math.nan,
        n3_slope=_slope(g.index, g.n3_fluct_rms), n3_ratio_lo=float(ratio.min()) if len(g) else math.nan,
        n3_ratio_hi=float(ratio.max()) if len(g) else math.nan, n3_mean_slope=_slope(g.index, g.n3_mean_max),
        first_D_K_by_h={int(k): int(v) for k, v in first.items()},
        background_dev=float((bg.max_non_edge - bg.predicted).abs().max()),
        absent_fp_inside=int(inside.absent_false_positives.sum()) if len(inside) else -1,
        absent_inside_ells=tuple(int(e) for e in inside.ell) if len(inside) else (-1,),
        absent_inside_d_k=int(inside.d_k.iloc[0]) if len(inside) else -1,
    )


def finding_rows(f: ConstructionsFinding) -> pd.DataFrame:
    """Measured against predicted, one row per quantity (strings, ready for a table).

    ``kind``: "evidence" where the measurement could have come out against the prediction, "sanity check" where
    it holds by construction (a check of the code, not of the paper).
    """
    ev, sc = "evidence", "sanity check"
    rows = [(f"smallest C, {k}", f"{v:g}", f"proof: {f.proof_C:.0f} (Bernoulli)", ev) for k, v in f.smallest_C.items()]
    ells = ", ".join(map(str, f.absent_inside_ells))
    rows += [
        ("theory cell: smallest d_k (prescribed split)", "none" if f.theory_d_k < 0 else
         f"{f.theory_d_k} (C = {f.theory_C_eff:.0f}, D_K = {f.theory_D_K})", f"C ln m, d_model / ln m = {f.theory_ratio:.0f}",
         ev),
        ("book grid: prescribed split separates", f"{f.grid_found} of {f.grid_cells} cells", "all, if c_0 ln m <= d_model", ev),
        ("d_model / ln m where the limit's mean slack turns positive (d_model doubling)",
         f"above {f.limit_last_negative:.0f}, by {f.limit_first_ratio:.0f}", "c_0 (not given)", ev),
        ("N3 fluctuation: log-log slope in B", f"{f.n3_slope:.2f}", "1", ev),
        ("N3 max / ((B/d_model) sqrt(d_k ln m))", f"{f.n3_ratio_lo:.1f} to {f.n3_ratio_hi:.1f}", "O(1)", ev),
        ("N3 conditional mean: slope in B", f"{f.n3_mean_slope:.2f}", "0.5 (Lemma B.3(3))", ev),
        ("smallest separating D_K by h (theory cell)", ", ".join(f"h={h}: {d}" for h, d in f.first_D_K_by_h.items()) or "none",
         "fewer for more heads", ev),
        ("softmax, one-hot: largest |max non-edge - (h-1)/ell|", f"{f.background_dev:.3f}",
         "0 (a non-owner head's softmax is uniform by construction)", sc),
        (f"softmax, one-hot, h = 1, d_k = {f.absent_inside_d_k}, ell = {ells} (inside Theorem 8.1's bounds): "
         "target-absent false positives", f"{f.absent_fp_inside}", "0 (Theorem 8.1)", ev),
    ]
    return pd.DataFrame(rows, columns=["quantity", "measured", "predicted", "kind"])


@dataclass(frozen=True)
class ColoringSummary:
    """Algorithm 5's packing of one graph: colours used, blocks, and the paper's bound on the heads."""

    m: int
    m_edges: int
    delta: int
    colours: int
    blocks: int
    bound: int  # ceil(m'/block_size) + Delta
    blocks_fit: bool  # every block holds at most block_size edges


def coloring_summary(graph: Graph, col: pd.DataFrame, block_size: int) -> ColoringSummary:
    """Summarise :func:`rgr.experiments.construction_sweeps.coloring_table` rows of ``graph``."""
    st = graph.stats()
    return ColoringSummary(m=st.m, m_edges=st.m_edges, delta=st.delta, colours=len(col), blocks=int(col.blocks.sum()),
                           bound=math.ceil(st.m_edges / block_size) + st.delta,
                           blocks_fit=bool((col.largest_block <= block_size).all()))
