"""The law's constant c of D_K* = c m log m / d_model read three ways, beside the paper's Table 1 arithmetic
(issue 45; chapter *Does it replicate?*, "Which logarithm, which fit").

The paper reports c = 1.19 over its twelve base cells and 0.966 over the nine precondition cells without saying the
logarithm's base or how it fitted. The protocol (E2) says least squares through the origin, natural log unless
stated. :func:`law_constants` gives, on the same cells and the same seed resamples:

- **ln, least squares**: the verdict's reading (protocol E2);
- **log2, least squares**: the other base (c scales by ln 2 exactly: the x column is ln m / log2 m = ln 2 times
  larger under ln);
- **ln, log space**: c = the geometric mean of D_K* / x over the cells (chapter *choosing heads*' fit), which weighs
  every cell alike where least squares weighs the largest D_K* most;

each with its 95% noise interval (:func:`rgr.results.replication.seed_bootstrap.noise`: the seed bootstrap widened
to the E3 threshold ends) and the seed bootstrap's interval alone, and the number of head assignments of the
paper's own Table 1 that reproduce its fit in that base (:mod:`rgr.results.replication.paper_arithmetic`).
:func:`rgr.results.replication.paper_arithmetic.table1_base` reads which base that arithmetic leaves the paper;
:func:`log_space_reading` is the third reading as it rides along a verdict row (and names a cause in
:func:`rgr.results.replication.verdicts.cause_of`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import within
from ..thresholds import meets_precondition
from . import reported as rep
from .paper_arithmetic import ArithmeticCheck, table1_base
from .rows import Reading, reached
from .seed_bootstrap import Draws, noise
from .verdicts import CAUSES, LOG_BASES, LOG_SPACE, cause_of

__all__ = ["READINGS", "Constant", "CellSet", "LawConstants", "law_constants", "law_constant_values",
           "log_space_constant", "log_space_reading"]

READINGS: tuple[tuple[str, str, str], ...] = (("ln, least squares", "ln", "ls"), ("log2, least squares", "log2", "ls"),
                                              (LOG_SPACE, "ln", "log"))
_TAG = {"ln, least squares": "ln", "log2, least squares": "log2", LOG_SPACE: "logspace"}
_KEY = {"all": "law_slope_all", "pre": "law_slope_pre"}


def log_space_constant(x: np.ndarray, dk: np.ndarray) -> np.ndarray:
    """c fitted through the origin in log space: exp(mean over cells of ln(D_K* / x)); ``dk`` (cells, k) -> (k,)."""
    return np.exp(np.mean(np.log(dk / np.asarray(x, float)[:, None]), axis=0))


def log_space_reading(d: Draws, paper: float) -> Reading | None:
    """The ln log-space constant on ``d``'s cells as a :class:`~rgr.results.replication.rows.Reading` (its noise
    interval and whether ``paper`` lies in it); None with fewer than 2 cells."""
    if len(d.cells) < 2:
        return None
    x = d.cells["x_law"].to_numpy(float) * LOG_BASES["ln"]
    n = noise(d, lambda dk, h: log_space_constant(x, dk))
    ok = math.isfinite(n.lo) and math.isfinite(n.hi)
    return Reading(LOG_SPACE, n.value, n.lo, n.hi, within(paper, n.lo, n.hi) if ok else None)


def _least_squares(x: np.ndarray, dk: np.ndarray) -> np.ndarray:
    x = np.asarray(x, float)[:, None]
    return (x * dk).sum(0) / (x**2).sum()


def _reproducing(checks: Sequence[ArithmeticCheck], fit: str, base: str) -> int:
    """Head assignments of Table 1 that reproduce the paper's fit in ``base`` (centred R², the book's)."""
    return sum(c.matches for c in checks if c.fit == fit and c.base == base and c.r2_kind == "centred")


def law_constants(draws: Draws, checks: Sequence[ArithmeticCheck]) -> pd.DataFrame:
    """One row per cell set ("all", "pre") and reading of :data:`READINGS`: n cells, the book's c, its 95% noise
    interval (lo, hi) and seed-bootstrap interval (boot_lo, boot_hi), the paper's c, whether it lies inside each
    interval, and ``table1``: assignments of the paper's Table 1 reproducing its fit in that base (least squares
    only; the arithmetic fits least squares)."""
    ok = reached(draws)
    out = []
    for cells in ("all", "pre"):
        d = ok if cells == "all" else ok.subset(meets_precondition(ok.cells))
        paper = float(rep.claim(_KEY[cells]).value)
        for name, base, how in READINGS:
            x = d.cells["x_law"].to_numpy(float) * LOG_BASES[base]
            fit = _least_squares if how == "ls" else log_space_constant
            n = noise(d, lambda dk, h, x=x, fit=fit: fit(x, dk)) if len(d.cells) >= 2 else None
            row = dict(cells=cells, reading=name, n=len(d.cells), value=math.nan, lo=math.nan, hi=math.nan,
                       boot_lo=math.nan, boot_hi=math.nan, paper=paper)
            if n is not None:
                row.update(value=n.value, lo=n.lo, hi=n.hi, boot_lo=n.boot[0], boot_hi=n.boot[1])
            row["inside"] = within(paper, row["lo"], row["hi"])
            row["inside_boot"] = within(paper, row["boot_lo"], row["boot_hi"])
            row["table1"] = _reproducing(checks, f"law_{cells}", base) if how == "ls" else pd.NA
            out.append(row)
    frame = pd.DataFrame(out)
    frame["table1"] = frame["table1"].astype("Int64")
    return frame


def _iv(lo: float, hi: float) -> str:
    return f"[{lo:.3f}, {hi:.3f}]" if math.isfinite(lo) and math.isfinite(hi) else "(no interval)"


@dataclass(frozen=True)
class Constant:
    """One reading of the constant as the chapter pastes it: value, noise interval and seed-bootstrap interval (to 3
    decimals), and where the paper's value lies in each ("inside" / "outside")."""

    value: float
    iv: str
    boot: str
    inside: str
    inside_boot: str


@dataclass(frozen=True)
class CellSet:
    """The three readings on one cell set, and the Table 1 head assignments reproducing the paper's fit per base."""

    ln: Constant
    log2: Constant
    logspace: Constant
    t1_ln: str
    t1_log2: str


@dataclass(frozen=True)
class LawConstants:
    """:func:`law_constants` for the chapter: ``c_all`` (twelve base cells), ``c_pre`` (precondition cells),
    ``t1_base``, the base Table 1 leaves the paper ("neither base" where the arithmetic cannot tell), and the causes
    the verdict rows law_slope_all / law_slope_pre give (:data:`rgr.results.replication.verdicts.CAUSES`'s words;
    "none: it agrees" for an agreement)."""

    t1_base: str
    c_all: CellSet
    c_pre: CellSet
    cause_all: str
    cause_pre: str


def law_constant_values(frame: pd.DataFrame, checks: Sequence[ArithmeticCheck], rows: Sequence) -> LawConstants:
    """The numbers of :func:`law_constants` (``frame``) as a finding the chapter glues (``c_all_ln_value``, ...),
    with the causes of the verdict ``rows`` (:class:`~rgr.results.replication.rows.ClaimRow`) of the two slopes."""
    sets = {}
    for cells, g in frame.groupby("cells", sort=False):
        got = {}
        for r in g.itertuples(index=False):
            got[_TAG[r.reading]] = Constant(float(r.value), _iv(r.lo, r.hi), _iv(r.boot_lo, r.boot_hi),
                                            "inside" if r.inside else "outside",
                                            "inside" if r.inside_boot else "outside")
        t1 = {_TAG[r.reading]: f"{int(r.table1):,}" for r in g.itertuples(index=False) if not pd.isna(r.table1)}
        sets[cells] = CellSet(got["ln"], got["log2"], got["logspace"], t1["ln"], t1["log2"])
    causes = {r.key: cause_of(r) for r in rows}
    said = {k: CAUSES[causes[k]] if causes.get(k) else ("none: it agrees" if k in causes else "no row")
            for k in _KEY.values()}
    return LawConstants(table1_base(list(checks)) or "neither base", sets["all"], sets["pre"],
                        said["law_slope_all"], said["law_slope_pre"])
