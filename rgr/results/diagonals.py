"""The fixed-compression diagonals of chapter *permutation sweeps* (protocol E2; the paper's Fig. 4): the cells with
m / d_model = lam (8: the ``lambda8`` sweep beside the base grid's diagonal cells; 32: ``lambda32``), how D_K* moves
along them against the law's ln m growth (:func:`diagonal_trend`), which preset and seeds stand behind each cell
(``DiagonalTrend.basis``), and the tables the chapter shows (:func:`diagonal_table`, :func:`extreme_table`). The
replication chapter's Fig. 4 readings (:mod:`rgr.results.replication.fig4`) take their cells from here too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .findings import listed, nan_if_none
from .stats import tie_margin
from .thresholds import meets_precondition


@dataclass(frozen=True)
class DiagonalTrend:
    """D_K* along m / d_model = lam against the law's ln m growth (the intervals are [optimistic, conservative])."""

    lam: int
    n_cells: int  # cells on the diagonal with a D_K*
    m_first: int
    m_last: int
    dk_first: float
    dk_first_opt: float
    dk_first_cons: float
    dk_last: float
    dk_last_opt: float
    dk_last_cons: float
    law_rise: float  # ln m_last / ln m_first: the law's D_K*(last) / D_K*(first)
    measured_rise: float
    law_last: float  # D_K*(first) * law_rise
    grows: str  # "grows" (last interval above the first), "does not grow" (last D_K* <= first), else
    # "rises within the intervals"
    law_outside: str  # "above" / "inside" / "below": law_last against the last cell's interval
    # the cells' presets and seeds, in words (:func:`_cells_basis`): whether the ends were measured alike
    basis: str = "—"
    # likely reasons the measured rise falls short of the law's (:func:`_trend_reason`; "" when the data give none)
    reason: str = ""


def on_diagonal(runs: pd.DataFrame, lam: int) -> pd.DataFrame:
    """The rows of ``runs`` with m = lam * d_model."""
    return runs[runs["m"] == lam * runs["d_model"]]


def with_cells_of(extra: pd.DataFrame, base: pd.DataFrame) -> pd.DataFrame:
    """``extra``'s runs and those of ``base`` in cells ``extra`` lacks: a cell's runs always come from one table
    (the paper's lambda = 8 grid repeats three base cells; their runs are not pooled across presets)."""
    have = set(zip(extra["m"], extra["d_model"]))
    keep = [(m, d) not in have for m, d in zip(base["m"], base["d_model"])]
    return pd.concat([base[keep], extra])


def diagonal_trend(cells: pd.DataFrame, lam: int = 8) -> DiagonalTrend:
    """The first and last m of the diagonal cells with a D_K*, against the law's ln m growth, and likely reasons
    where it falls short (:func:`_trend_reason`; the step cutoffs only where ``cells`` has the columns of
    :func:`at_threshold`)."""
    ok = cells[cells["D_K_star"].notna()].sort_values("m")
    nan = math.nan
    if len(ok) < 2:
        return DiagonalTrend(lam=lam, n_cells=len(ok), m_first=0, m_last=0, dk_first=nan, dk_first_opt=nan,
                             dk_first_cons=nan, dk_last=nan, dk_last_opt=nan, dk_last_cons=nan, law_rise=nan,
                             measured_rise=nan, law_last=nan, grows="—", law_outside="—")
    a, z = ok.iloc[0], ok.iloc[-1]
    v = {k: (nan_if_none(a[c]), nan_if_none(z[c])) for k, c in (("c", "D_K_star"), ("o", "D_K_opt"), ("k", "D_K_cons"))}
    law_rise = math.log(z["m"]) / math.log(a["m"])
    law_last = v["c"][0] * law_rise
    grows = ("grows" if v["o"][1] > v["k"][0] else "does not grow" if v["c"][1] <= v["c"][0]
             else "rises within the intervals")
    tol = tie_margin(law_last, v["o"][1], v["k"][1])  # law_last can equal a ladder budget (56 * 12/7 = 96)
    where = "above" if law_last > v["k"][1] + tol else "below" if law_last < v["o"][1] - tol else "inside"
    return DiagonalTrend(lam=lam, n_cells=len(ok), m_first=int(a["m"]), m_last=int(z["m"]), dk_first=v["c"][0],
                         dk_first_opt=v["o"][0], dk_first_cons=v["k"][0], dk_last=v["c"][1], dk_last_opt=v["o"][1],
                         dk_last_cons=v["k"][1], law_rise=law_rise, measured_rise=v["c"][1] / v["c"][0],
                         law_last=law_last, grows=grows, law_outside=where, basis=_cells_basis(ok),
                         reason=_trend_reason(ok) if where == "above" else "")


def _trend_reason(ok: pd.DataFrame) -> str:
    """Likely reasons D_K* rises less than the law along the diagonal's cells with a D_K* (``ok``, by m): the first
    cell outside the law's precondition (:func:`rgr.results.thresholds.meets_precondition`; then how the law reads
    from the first cell inside it, which says whether that explains the shortfall), and, with the columns of
    :func:`at_threshold`, the step cutoffs (:func:`cutoff_reason`). Runs cut only at the last cell are no reason:
    they can only raise its D_K*. "" when neither applies."""
    a = ok.iloc[0]
    said = []
    inside = ok[meets_precondition(ok).to_numpy()]
    if not meets_precondition(ok.iloc[:1]).iloc[0]:
        said.append(f"the first cell, ({int(a.m)}, {int(a.d_model)}), lies outside the law's precondition "
                    f"d_model ≳ c0 ln m (the law's fit without such cells leaves it out), so the law need not set its "
                    f"D_K*")
        if len(inside) >= 2:
            t = diagonal_trend(inside, int(round(a.m / a.d_model)))
            first = inside.iloc[0]
            said.append(f"but from ({int(first.m)}, {int(first.d_model)}), the first cell inside it, the law's rise "
                        f"to {t.law_last:.0f} at m = {t.m_last} "
                        + (f"still lies {t.law_outside} that cell's interval, so this explains part of the shortfall "
                           f"at most" if t.law_outside == "above" else f"lies {t.law_outside} that cell's interval"))
    cut = cutoff_reason(ok.iloc[[0, -1]]) if "n_cut" in ok else ""
    if cut:
        said.append(cut)
    return ("Likely reasons, not measured here: " + "; ".join(said) + ".") if said else ""


STOP_COLUMNS = ("stop_reason", "max_steps")  # what :func:`at_threshold` reads of each run


def at_threshold(runs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` (with m, d_model, h_star, D_K_star) with, at each cell's D_K* point (h*, D_K*): how many runs there
    are (``n_at_star``), how many the step cutoff stopped (``n_cut``: stop reason "cutoff", short of early
    stopping) and that cutoff (``cutoff``, steps). Zero runs where a cell has no D_K*."""
    missing = sorted(set(STOP_COLUMNS) - set(runs))
    if missing:
        raise ValueError(f"runs must record how each run stopped: missing column(s) {missing}")
    at = runs.merge(cells[["m", "d_model", "h_star", "D_K_star"]].dropna(), left_on=["m", "d_model", "h", "D_K"],
                    right_on=["m", "d_model", "h_star", "D_K_star"])
    per = at.assign(cut=at["stop_reason"] == "cutoff").groupby(["m", "d_model"]).agg(
        n_at_star=("seed", "size"), n_cut=("cut", "sum"), cutoff=("max_steps", "max"))
    out = cells.join(per, on=["m", "d_model"])
    return out.fillna({"n_at_star": 0, "n_cut": 0}).astype({"n_at_star": int, "n_cut": int})


def cutoff_reason(ends: pd.DataFrame) -> str:
    """A likely reason D_K* rises less than the law between two cells (``ends``: the first and last, rows of
    :func:`at_threshold`): most runs at both D_K* points were stopped by step cutoffs that differ, so each D_K* is an
    upper bound on the settled threshold by an amount that depends on its cutoff. Offered as a reason, not measured
    here; "" unless the last cell's cutoff is the longer and most runs at both points were cut."""
    a, z = ends.iloc[0], ends.iloc[-1]
    if min(a["n_at_star"], z["n_at_star"]) == 0 or a["cutoff"] >= z["cutoff"]:
        return ""
    if 2 * a["n_cut"] < a["n_at_star"] or 2 * z["n_cut"] < z["n_at_star"]:
        return ""
    said = "; ".join(f"m = {int(c.m)}: {int(c.n_cut)} of {int(c.n_at_star)} at {int(c.cutoff):,} steps"
                     for c in (a, z))
    return (f"at both ends most runs at D_K* were stopped by the step cutoff ({said}), so each D_K* is an upper "
            f"bound on the settled threshold the law describes, by an amount that depends on the cutoff, "
            f"{z['cutoff'] / a['cutoff']:.0f} times longer at m = {int(z.m)}: where the shorter cutoff raises "
            f"D_K*(m = {int(a.m)}) more, the ratio falls below the law's")


def _cells_basis(cells: pd.DataFrame) -> str:
    """Which preset and how many seeds stand behind ``cells`` (rows of :func:`chapter_cells`), for prose.

    One kind of cell: "all from the paper preset, 10 seeds"; one preset, two seed counts: "all from the book
    preset, seeds 3 at m = 128–512 and 2 at m = 1024"; two presets (the diagonal pools two tables):
    "paper with 10 seeds at m = 128–512, book with 2 at m = 1024: not all measured alike".
    """
    if not len(cells):
        return "—"
    preset = cells["preset"] if "preset" in cells else pd.Series("?", index=cells.index)
    groups = cells.assign(_p=preset).groupby(["_p", "n_seeds"], sort=False)["m"]
    parts = [(p, int(n), int(ms.min()), int(ms.max())) for (p, n), ms in groups]
    if len(parts) == 1:
        p, n, _, _ = parts[0]
        return f"all from the {p} preset, {n} seeds" if p != "?" else f"all with {n} seeds"
    parts.sort(key=lambda t: t[2])
    where = lambda lo, hi: f"m = {lo}" if lo == hi else f"m = {lo}–{hi}"
    if len({p for p, *_ in parts}) == 1:  # one preset, seeds differing between the tables
        seeds = listed([f"{n} at {where(lo, hi)}" for _, n, lo, hi in parts])
        return f"all from the {parts[0][0]} preset, seeds {seeds}"
    text = ", ".join(f"{p} with {n} seeds at {where(lo, hi)}" if i == 0 else f"{p} with {n} at {where(lo, hi)}"
                     for i, (p, n, lo, hi) in enumerate(parts))
    return text + ": not all measured alike"


def diagonal_table(cells: pd.DataFrame, c: float) -> pd.DataFrame:
    """The diagonal's cells with their interval, h* and the law's c (m / d_model) ln m (``c``: its fitted constant)."""
    keep = ["m", "d_model", *(["preset"] if "preset" in cells else []), "n_seeds", "D_K_star", "D_K_opt", "D_K_cons",
            "h_star"]
    d = cells.sort_values("m")[keep].copy()
    d["law"] = c * d["m"] * np.log(d["m"]) / d["d_model"]
    return d.rename(columns={"n_seeds": "seeds", "D_K_star": "D_K*", "D_K_opt": "optimistic",
                             "D_K_cons": "conservative", "h_star": "h*", "law": "law c (m/d_model) ln m"})


def extreme_table(cells: pd.DataFrame) -> pd.DataFrame:
    """The extreme-compression cells: D_K*, h* and one head's best mean F1."""
    keep = ["m", "d_model", *(["preset"] if "preset" in cells else []), "n_seeds", "D_K_star", "h_star", "max_f1_h1"]
    return cells.sort_values("m")[keep].rename(
        columns={"n_seeds": "seeds", "D_K_star": "D_K*", "h_star": "h*", "max_f1_h1": "best F1, h=1"})
