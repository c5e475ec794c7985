"""The comparison machinery of the chapter *Does it replicate?*: verdicts, intervals, Table 1.

- :func:`interval_verdict` — "agrees" when the paper's value lies in the book's interval,
  else "deviates" with by how much; "not testable" when the book has no interval;
- :func:`fit_interval` — a least-squares line with percentile-bootstrap intervals over cells
  for its slope, intercept and R²;
- :func:`with_log_base` — the thresholds table with the law's abscissa in ln or log2;
- :func:`dk_star_intervals` and :func:`table1` — d_k* per cell with the interval the tied
  head counts give it, beside the paper's Table 1.

The per-claim readings are in :mod:`rgr.results.replication_claims`; the paper's numbers only
in :mod:`rgr.results.reported`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .reported import PAPER_MAX_HEADS, PAPER_SEEDS, TABLE1
from .stats import Fit, fit_line

__all__ = [
    "STATUSES", "Verdict", "interval_verdict", "FitInterval", "fit_interval", "with_log_base", "LOG_BASES",
    "dk_star_intervals", "table1", "table1_basis_words",
]

STATUSES: tuple[str, ...] = ("agrees", "deviates", "not testable")
LOG_BASES: dict[str, float] = {"ln": 1.0, "log2": 1.0 / math.log(2.0)}  # factor from m ln m to m log_b m


@dataclass(frozen=True)
class Verdict:
    """How one claim fares: ``status`` in :data:`STATUSES` and a sentence saying why (with numbers)."""

    status: str
    detail: str

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else self.status


def _g(x: float) -> str:
    return f"{x:.3g}"


def interval_verdict(paper: float, value: float, lo: float, hi: float, caveat: str = "") -> Verdict:
    """Compare the paper's number with the book's ``value`` and its interval [lo, hi].

    Agrees when lo <= paper <= hi; deviates otherwise, saying by how much (the difference, the
    ratio, and the distance from the nearer end of the interval). ``caveat`` (a preset
    difference that could explain a deviation) is appended to a deviation.
    """
    if not all(math.isfinite(float(v)) for v in (paper, value)):
        raise ValueError(f"paper and value must be finite, got {paper} and {value}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Verdict("not testable", f"the book has no interval for this value ({_g(value)}): too few seeds or cells")
    if lo > hi:
        raise ValueError(f"interval must have lo <= hi, got [{lo}, {hi}]")
    if lo <= paper <= hi:
        return Verdict("agrees", f"the paper's {_g(paper)} lies in the book's interval [{_g(lo)}, {_g(hi)}]")
    gap = lo - paper if paper < lo else paper - hi
    ratio = f", {value / paper:.2f}x the paper's" if paper != 0 else ""
    text = (f"book {_g(value)} vs paper {_g(paper)} (difference {value - paper:+.3g}{ratio}); the paper's value lies "
            f"{_g(gap)} {'below' if paper < lo else 'above'} the book's interval [{_g(lo)}, {_g(hi)}]")
    return Verdict("deviates", text + (f". {caveat}" if caveat else ""))


# ----------------------------------------------------------------------------- fits with intervals


@dataclass(frozen=True)
class FitInterval:
    """A line fitted to all points, with 95% percentile-bootstrap intervals (resampling points)."""

    fit: Fit
    slope: tuple[float, float]
    intercept: tuple[float, float]
    r2: tuple[float, float]
    n_boot: int


def fit_interval(x, y, intercept: bool = False, n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> FitInterval:
    """:func:`rgr.results.stats.fit_line` and bootstrap intervals over the points (cells).

    Each replicate draws len(x) points with replacement and refits; replicates whose x are all
    equal (no line) or whose y are all equal (no R²) are dropped. Deterministic for a given ``seed``.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    fit = fit_line(x, y, intercept=intercept)
    if n_boot < 100:
        raise ValueError(f"n_boot must be at least 100, got {n_boot}")
    rng = np.random.default_rng(seed)
    reps = []
    for _ in range(n_boot):
        i = rng.integers(0, x.size, x.size)
        xs, ys = x[i], y[i]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        f = fit_line(xs, ys, intercept=intercept)
        reps.append((f.slope, f.intercept, f.r2))
    a = np.array(reps) if reps else np.full((1, 3), np.nan)
    q = [(1 - level) / 2 * 100, (1 + level) / 2 * 100]
    lo_hi = [tuple(float(v) for v in np.percentile(a[:, k], q)) for k in range(3)]
    return FitInterval(fit, lo_hi[0], lo_hi[1], lo_hi[2], len(reps))


def with_log_base(cells: pd.DataFrame, base: str) -> pd.DataFrame:
    """The thresholds table with ``x_law`` = m log_base m / d_model (``base`` "ln" or "log2")."""
    if base not in LOG_BASES:
        raise ValueError(f"base must be one of {sorted(LOG_BASES)}, got {base!r}")
    return cells.assign(x_law=cells["x_law"] * LOG_BASES[base])


# ----------------------------------------------------------------------------- Table 1


def dk_star_intervals(cells: pd.DataFrame) -> pd.DataFrame:
    """d_k* per cell with the range the tied head counts allow at D_K*: [D_K*/h_hi, D_K*/h_lo]."""
    out = cells.copy()
    dk = out["D_K_star"].astype(float)
    out["d_k_lo"] = dk / out["h_hi"].astype(float)
    out["d_k_hi"] = dk / out["h_lo"].astype(float)
    return out


def table1(cells: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 beside the book's d_k* (and its range) per (m, d_model); cells missing on
    either side are kept with NaN. ``agrees``: the paper's d_k* lies in the book's range."""
    book = dk_star_intervals(cells[cells["r"] == 1] if "r" in cells else cells)
    paper = pd.DataFrame([(m, d, v) for (m, d), v in TABLE1.items()], columns=["m", "d_model", "paper_d_k"])
    out = paper.merge(book[["m", "d_model", "D_K_star", "h_star", "d_k_star", "d_k_lo", "d_k_hi"]],
                      on=["m", "d_model"], how="outer").sort_values(["m", "d_model"]).reset_index(drop=True)
    inside = (out["d_k_lo"] <= out["paper_d_k"]) & (out["paper_d_k"] <= out["d_k_hi"])
    out["agrees"] = inside.where(out["d_k_star"].notna() & out["paper_d_k"].notna())
    return out


def table1_basis_words(runs: pd.DataFrame) -> str:
    """What the base rows behind Table 1 are, against the paper's head counts and seeds, as one or two sentences.

    Says whether the rows reach the paper's largest head count and seed count; only where they fall short does
    it say what that costs (a less sharply determined h*)."""
    h_max, seeds = int(runs["h"].max()), int(runs["seed"].nunique())
    paper_h, paper_seeds = PAPER_MAX_HEADS, PAPER_SEEDS["base"]
    said = f"The base rows read here reach h = {h_max} with {seeds} seeds per point (the paper: {paper_h} and {paper_seeds})"
    step = "a cell whose tied range is a single head count can miss the paper's d_k* by one refinement step of D_K."
    if h_max >= paper_h and seeds >= paper_seeds:
        return f"{said}: the same head counts and seeds. Both sides still read D_K* on a refined ladder, so {step}"
    return f"{said}. Fewer seeds or head counts leave h* less sharply determined, and {step}"
