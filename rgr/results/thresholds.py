"""From a sweep's table to the paper's quantities, per cell (chapters *permutation sweeps*, *denser graphs*).

:func:`thresholds` turns one experiment table into one row per (m, d_model, r)
cell: D_K* (central, optimistic, conservative), h* and its interval, d_k*,
the single-head threshold and the law's abscissae. :func:`law_fits` fits the
scaling laws on those rows. Everything here is computed from the table; the
chapters print it rather than type numbers into prose.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..protocol import F1_TARGET
from ..theory.bounds import bit_budget_DK, bit_budget_DK_derangements, regular_x, scaling_x
from .stats import Fit, dk_star, fit_line, h_star_interval, summarize

CELL = ["m", "d_model", "r"]


def curves(df: pd.DataFrame, metric: str = "test_f1") -> pd.DataFrame:
    """Mean and 95% interval of ``metric`` per (cell, h, D_K) — the F1-vs-D_K lines."""
    return summarize(df, [*CELL, "h", "D_K"], metric)


def paired_seeds(max_runs: pd.DataFrame, soft_runs: pd.DataFrame) -> pd.DataFrame:
    """The max-over-heads runs at the (cell, seed) pairs the softmax table also ran (chapter *softmax*).

    Seed s draws the same graph, embeddings, contexts and initial weights in both
    (:class:`rgr.experiments.engine.config.RunConfig`), so the two models' thresholds compare on the same draws; more
    max-over-heads seeds would compare a 10-seed reading with a 3-seed one."""
    key = [*CELL, "seed"]
    return max_runs.merge(soft_runs[key].drop_duplicates(), on=key)


def thresholds(df: pd.DataFrame, law: str = "permutation") -> pd.DataFrame:
    """One row per cell: D_K* (central/optimistic/conservative), h*, its interval, d_k*, D_K*(h=1).

    ``x_law`` is the law's abscissa: m ln m / d_model (``law="permutation"``) or
    (r m / d_model) log2 m (``law="regular"``, E4).
    """
    if law not in ("permutation", "regular"):
        raise ValueError(f"law must be 'permutation' or 'regular', got {law!r}")
    rows = []
    summary = curves(df)
    for key, s in summary.groupby(CELL):
        m, d_model, r = (int(k) for k in key)
        star = dk_star(s)
        cell_runs = df[(df.m == m) & (df.d_model == d_model) & (df.r == r)]
        interval = h_star_interval(cell_runs, star)
        single = dk_star(s[s.h == 1]).central if (s.h == 1).any() else None
        rows.append(
            dict(m=m, d_model=d_model, r=r, D_K_star=star.central, D_K_opt=star.optimistic, D_K_cons=star.conservative,
                 h_star=star.h_star, h_lo=None if interval is None else interval[0],
                 h_hi=None if interval is None else interval[1], d_k_star=star.d_k_star, D_K_star_h1=single,
                 max_f1_h1=float(s[s.h == 1]["mean"].max()) if (s.h == 1).any() else math.nan,
                 x_law=float(scaling_x(m, d_model) if law == "permutation" else regular_x(r, m, d_model)),
                 lam=m / d_model, n_seeds=int(s["n"].max()))
        )
    columns = ["m", "d_model", "r", "D_K_star", "D_K_opt", "D_K_cons", "h_star", "h_lo", "h_hi", "d_k_star",
               "D_K_star_h1", "max_f1_h1", "x_law", "lam", "n_seeds"]
    out = pd.DataFrame(rows, columns=columns)  # no rows (an empty table) gives the columns, no cells
    for c in ("D_K_star", "D_K_opt", "D_K_cons", "h_star", "h_lo", "h_hi", "D_K_star_h1"):
        out[c] = out[c].astype("Int64")
    return out


def transitions(df: pd.DataFrame, low: float = 0.5, high: float = F1_TARGET) -> pd.DataFrame:
    """How sharp each F1-vs-D_K curve is: one row per (cell, h) whose mean F1 crosses ``high``.

    ``D_below`` is the largest tested budget under the first passing one with mean F1 < ``low``,
    ``D_pass`` the smallest with mean F1 >= ``high``; ``width = D_pass / D_below`` (NaN when even
    the smallest tested budget is above ``low``). A width of 2 means the curve goes from below
    ``low`` to the target within one doubling of D_K.
    """
    rows = []
    for key, g in curves(df).groupby([*CELL, "h"]):
        g = g.sort_values("D_K")
        passing = g[g["mean"] >= high - 1e-9]
        if not len(passing):
            continue
        d_pass = int(passing["D_K"].iloc[0])
        below = g[(g["D_K"] < d_pass) & (g["mean"] < low)]
        d_below = int(below["D_K"].iloc[-1]) if len(below) else None
        rows.append(dict(zip([*CELL, "h"], (int(k) for k in key)), D_below=d_below, D_pass=d_pass,
                         width=d_pass / d_below if d_below else math.nan))
    return pd.DataFrame(rows, columns=[*CELL, "h", "D_below", "D_pass", "width"])


def single_head_penalty(cells: pd.DataFrame) -> pd.Series:
    """D_K*(h = 1) / D_K* per cell; NaN where one head never reaches the target."""
    ratio = cells["D_K_star_h1"].astype(float) / cells["D_K_star"].astype(float)
    return ratio.rename("single_head_penalty")


@dataclass(frozen=True)
class LawFits:
    """The fits of protocol E2: D_K* on m ln m / d_model (origin / intercept; all / precondition) and h* on m /
    d_model."""

    origin_all: Fit
    intercept_all: Fit
    origin_pre: Fit | None
    heads: Fit | None
    n_excluded: int


def meets_precondition(cells: pd.DataFrame) -> pd.Series:
    """Cells kept by the law's precondition d_model >~ c0 log m: all but d_model = 16 with m > 64 (E2).

    The one home of that rule: the law's fits, the design rule and the replication's rows all use it."""
    return ~((cells["d_model"] == 16) & (cells["m"] > 64))


def law_fits(cells: pd.DataFrame) -> LawFits:
    """Least-squares fits over the cells whose D_K* was reached."""
    ok = cells[cells["D_K_star"].notna()]
    if len(ok) < 2:
        raise ValueError(f"need D_K* in at least 2 cells to fit the law, got {len(ok)}")
    x, y = ok["x_law"].to_numpy(float), ok["D_K_star"].to_numpy(float)
    pre = ok[meets_precondition(ok)]
    xp, yp = pre["x_law"].to_numpy(float), pre["D_K_star"].to_numpy(float)
    hh = ok[ok["h_star"].notna()]
    return LawFits(
        origin_all=fit_line(x, y, intercept=False),
        intercept_all=fit_line(x, y, intercept=True),
        origin_pre=fit_line(xp, yp, intercept=False) if len(pre) >= 1 else None,
        heads=fit_line(hh["lam"].to_numpy(float), hh["h_star"].to_numpy(float),
                       intercept=True) if len(hh) >= 2 else None,
        n_excluded=int(len(ok) - len(pre)),
    )


def bracket(cells: pd.DataFrame, constructions: pd.DataFrame | None, bits: float = 32.0) -> pd.DataFrame:
    """Necessary and sufficient budgets beside the learned D_K* of each cell.

    ``lower``: the bit-budget bound of Sec. 9 counting all graphs with m' = r m edges, for parameters of
    ``bits`` bits (float32 by default: what the trained models have); ``lower_sampled``: the same bound
    counting only the family the sweeps draw, the derangements of m items (r = 1; NaN otherwise).
    ``construction``: the smallest D_K of an explicit construction that separated every pair with a margin
    (``data/constructions.csv``, rule best-split, criterion margin); ``algorithm1``: the same for the
    paper's prescribed split (Algorithm 1 / 5), NaN where it separated nothing, and ``algorithm1_tested``
    whether the table tried it at that cell.
    """
    out = cells[["m", "d_model", "r", "x_law"]].copy()
    out["lower"] = [bit_budget_DK(int(m), int(r) * int(m), int(d), bits) for m, d, r in zip(out.m, out.d_model, out.r)]
    out["lower_sampled"] = [bit_budget_DK_derangements(int(m), int(d), bits) if int(r) == 1 else math.nan
                            for m, d, r in zip(out.m, out.d_model, out.r)]
    if constructions is not None and len(constructions):
        out = out.merge(_smallest(constructions, "best-split", "construction"), on=CELL, how="left")
        out = out.merge(_smallest(constructions, "prescribed", "algorithm1"), on=CELL, how="left")
        tried = (
            constructions[constructions["rule"] == "prescribed"][CELL].drop_duplicates().assign(algorithm1_tested=True)
        )
        out = out.merge(tried, on=CELL, how="left")
        out["algorithm1_tested"] = out["algorithm1_tested"].fillna(False).astype(bool)
    return out


def _smallest(constructions: pd.DataFrame, rule: str, name: str) -> pd.DataFrame:
    """Smallest D_K per cell that ``rule`` found under the margin criterion, as column ``name``."""
    c = constructions[(constructions["rule"] == rule) & (constructions["criterion"] == "margin")
                      & constructions["found"].astype(bool)]
    return c.groupby(CELL, as_index=False)["D_K"].min().rename(columns={"D_K": name})
