"""The findings of chapter *denser graphs* (protocol E4, r-regular graphs), each a small frozen result.

:func:`denser_findings` fits D_K* = c x through the origin for two normalisations of the budget, each over
r <= 16 (the paper's range) and over every r of the table: the paper's x = (r m / d_model) log2 m and the
lower bound's (m' / d_model) log2(m^2 / m') with m' = r m. A normalisation that holds across densities
with one constant keeps D_K* / x flat, so each fit comes with the spread max / min of that ratio.
Too few cells give NaN and a note, never an error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..theory.bounds import regular_x, regular_x_bound
from .stats import fit_line

__all__ = ["PAPER_R_MAX", "FormFit", "denser_findings", "forms_table"]

PAPER_R_MAX = 16  # the paper's E4 grid stops at r = 16 (App. A.3)
_FORMS = ("log2m", "bound")  # x = (r m / d_model) log2 m | (m' / d_model) log2(m^2 / m')


@dataclass(frozen=True)
class FormFit:
    """D_K* = c x through the origin over the cells with r <= r_max, and the spread of D_K* / x."""

    form: str
    r_max: int
    n: int
    c: float
    r2: float
    ratio_min: float
    ratio_max: float
    spread: float  # ratio_max / ratio_min: 1 means one constant fits every r exactly
    c_lo: float  # largest optimistic D_K / x: a constant inside every cell's interval must be >= this
    c_hi: float  # smallest conservative D_K / x: ... and <= this
    one_constant: str  # "one constant fits inside every interval" or "no single constant fits inside every interval"


@dataclass(frozen=True)
class _DenserFindings:
    n_r: int  # out-degrees in the table
    n_reached: int  # ... with a D_K*
    r_top: int  # the largest r with a D_K*
    log2m_16: FormFit  # the paper's range
    bound_16: FormFit
    log2m_all: FormFit  # every r of the table
    bound_all: FormFit
    flatter_16: str  # which form keeps D_K* / x flatter (smaller spread), in words
    flatter_all: str
    contrast_16: float  # spread of the log2 m form / spread of the bound's form, r <= 16
    contrast_all: float  # the same over every r
    h_first: int  # h* at the smallest r with an h*
    r_first: int
    h_last: int
    r_last: int
    fold: float  # r_last / r_first: how much r m / d_model grows
    h_max: int  # the largest head count tried
    n_top: int  # out-degrees whose h* is h_max
    h_ratio_min: float  # h* / (r m / d_model)
    h_ratio_max: float
    n_seeds: int  # most seeds behind one (r, h, D_K) point
    n_heads: int  # head counts tried
    notes: str  # "none" or what the table is too thin for (the chapter pastes it)


def _x(form: str, cells: pd.DataFrame) -> pd.Series:
    if form == "log2m":
        return pd.Series(regular_x(cells["r"], cells["m"], cells["d_model"]), index=cells.index)
    if form == "bound":
        return pd.Series(regular_x_bound(cells["r"], cells["m"], cells["d_model"]), index=cells.index)
    raise ValueError(f"form must be one of {_FORMS}, got {form!r}")


def _form_fit(cells: pd.DataFrame, form: str, r_max: int | None = None) -> FormFit:
    """The through-origin fit of D_K* on ``form``'s x over the cells with a D_K* and r <= ``r_max`` (None: all)."""
    ok = cells[cells["D_K_star"].notna()]
    ok = ok if r_max is None else ok[ok["r"] <= r_max]
    top = int(r_max if r_max is not None else (ok["r"].max() if len(ok) else 0))
    if not len(ok):
        nan = math.nan
        return FormFit(form=form, r_max=top, n=0, c=nan, r2=nan, ratio_min=nan, ratio_max=nan, spread=nan, c_lo=nan,
                       c_hi=nan, one_constant="—")
    x, y = _x(form, ok).to_numpy(float), ok["D_K_star"].to_numpy(float)
    f = fit_line(x, y, intercept=False)
    ratio = y / x
    c_lo = float((ok["D_K_opt"].astype(float).to_numpy() / x).max())
    c_hi = float((ok["D_K_cons"].astype(float).to_numpy() / x).min())
    word = (
        "one constant fits inside every interval" if c_lo <= c_hi else "no single constant fits inside every interval"
    )
    return FormFit(form=form, r_max=top, n=f.n, c=f.slope, r2=f.r2, ratio_min=float(ratio.min()),
                   ratio_max=float(ratio.max()), spread=float(ratio.max() / ratio.min()), c_lo=c_lo, c_hi=c_hi,
                   one_constant=word)


def _flatter(a: FormFit, b: FormFit) -> str:
    if a.n < 2 or not (math.isfinite(a.spread) and math.isfinite(b.spread)):
        return "neither form (too few cells to compare)"
    if math.isclose(a.spread, b.spread, rel_tol=1e-9):
        return "neither form"
    return "the lower bound's form" if b.spread < a.spread else "the log2 m form"


def denser_findings(cells: pd.DataFrame, h_max: int, n_heads: int = 0) -> _DenserFindings:
    """``cells``: :func:`rgr.results.thresholds.thresholds` of the E4 table (one (m, d_model), several r);
    ``h_max``: the largest head count tried; ``n_heads``: how many head counts were tried."""
    ok = cells[cells["D_K_star"].notna()].sort_values("r")
    fits = {(f, k): _form_fit(cells, f, r) for f in _FORMS for k, r in (("16", PAPER_R_MAX), ("all", None))}
    hs = ok[ok["h_star"].notna()]
    nan = math.nan
    if len(hs):
        trend = hs["r"] * hs["m"] / hs["d_model"]
        h_ratio = hs["h_star"].astype(float) / trend
        first, last = hs.iloc[0], hs.iloc[-1]
        heads = (int(first["h_star"]), int(first["r"]), int(last["h_star"]), int(last["r"]),
                 float(last["r"] / first["r"]), h_max, int((hs["h_star"] == h_max).sum()),
                 float(h_ratio.min()), float(h_ratio.max()))
    else:
        heads = (0, 0, 0, 0, nan, h_max, 0, nan, nan)
    notes = "none" if len(ok) >= 2 else f"need D_K* at 2 or more out-degrees to compare the forms, got {len(ok)}"
    return _DenserFindings(cells["r"].nunique(), len(ok), int(ok["r"].max()) if len(ok) else 0, fits["log2m", "16"],
                          fits["bound", "16"], fits["log2m", "all"], fits["bound", "all"],
                          _flatter(fits["log2m", "16"], fits["bound", "16"]),
                          _flatter(fits["log2m", "all"], fits["bound", "all"]),
                          fits["log2m", "16"].spread / fits["bound", "16"].spread,
                          fits["log2m", "all"].spread / fits["bound", "all"].spread, *heads,
                          int(cells["n_seeds"].max()) if len(cells) else 0, int(n_heads), notes)


def forms_table(cells: pd.DataFrame) -> pd.DataFrame:
    """Per out-degree: D_K* with its interval, h*, and D_K* / x under both forms."""
    t = cells.sort_values("r")[["r", "D_K_star", "D_K_opt", "D_K_cons", "h_star", "h_lo", "h_hi"]].copy()
    y = cells.sort_values("r")["D_K_star"].astype(float)
    for f in _FORMS:
        t[f"D_K* / x ({'log2 m' if f == 'log2m' else 'log2(m^2/m_prime)'})"] = y / _x(f, cells.sort_values("r"))
    return t.rename(columns={"D_K_star": "D_K*", "D_K_opt": "optimistic", "D_K_cons": "conservative", "h_star": "h*",
                             "h_lo": "tied h from", "h_hi": "tied h to"})
