"""The comparison machinery of the chapter *Does it replicate?*: verdicts, intervals, Table 1.

One interval convention decides every verdict (chapter *Does it replicate?*, "Intervals"): the measurement's own
noise on the cells the claim names (:mod:`rgr.results.replication.seed_bootstrap`);
the bootstrap over cells is only shown beside it.

The per-claim readings are in :mod:`rgr.results.replication.sec61`; the paper's numbers only
in :mod:`rgr.results.reported`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..reported import TABLE1
from ..stats import fit_line, tie_margin, within

_STATUSES: tuple[str, ...] = ("agrees", "deviates", "not testable")
LOG_BASES: dict[str, float] = {"ln": 1.0, "log2": 1.0 / math.log(2.0)}  # factor from m ln m to m log_b m
# the protocol's reading of the law's unstated log (E2: "natural log unless stated"), fixed before the release
LAW_BASE = "ln"
# the name of a law row's reading fitted in log space (rgr.results.replication.paper_arithmetic), a cause when it holds
LOG_SPACE = "ln, log space"

# Why a row does not agree: the one home of the causes' names. A reader that cannot test a claim names one of
# NOT_TESTABLE_CAUSES; a deviation's cause is computed from the row (rgr.results.replication.verdicts.cause_of), the
# reader naming only what it alone knows ("thin", "paper_table1", "paper_text", "budget"); then a fit in log space
# ("weighting"); "unexplained" is what remains.
CAUSES: dict[str, str] = {
    "log_base": "the logarithm's base",
    "near_miss": "a near miss",
    "thin": "rests on a point with few seeds",
    "paper_table1": "the paper's fit is not reproduced by its own Table 1",
    "paper_text": "the paper's text and its own Table 1 disagree",
    "budget": "the protocol's step cutoff",
    "budget_bound": "budget-bound: agrees with a longer step budget",
    "weighting": "the book's higher thresholds at the largest cells",
    "unexplained": "unexplained",
    "undecided": "the noise cannot decide",
    "unsettled": "runs cut while still improving",
    "presets": "tables at different presets",
    "not_the_task": "not the paper's task",
    "no_number": "the paper gives no number",
    "no_data": "the cells are not in the data",
}
NOT_TESTABLE_CAUSES: tuple[str, ...] = ("undecided", "unsettled", "presets", "not_the_task", "no_number", "no_data")
_READER_DEVIATION_CAUSES = ("thin", "paper_table1", "paper_text", "budget", "budget_bound")

@dataclass(frozen=True)
class Verdict:
    """How one claim fares: ``status`` in :data:`_STATUSES`, a sentence saying why (with numbers), whether a
    deviation is a near miss (the paper's value outside the 95% interval, inside the 99% one), and ``cause``, a key of
    :data:`CAUSES`: required for "not testable" (one of :data:`NOT_TESTABLE_CAUSES`), optional for a deviation (what
    only its reader knows), empty for an agreement."""

    status: str
    detail: str
    near_miss: bool = False
    cause: str = ""

    def __post_init__(self) -> None:
        if self.status not in _STATUSES:
            raise ValueError(f"status must be one of {_STATUSES}, got {self.status!r}")
        if self.near_miss and self.status != "deviates":
            raise ValueError("only a deviation can be a near miss")
        allowed = {"agrees": ("",), "deviates": ("", *_READER_DEVIATION_CAUSES),
                   "not testable": NOT_TESTABLE_CAUSES}[self.status]
        if self.cause not in allowed:
            raise ValueError(f"cause of a verdict {self.status!r} must be one of {allowed}, got {self.cause!r}")

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}" if self.detail else self.status


DEVIATION_CAUSES: tuple[str, ...] = ("log_base", "near_miss", *_READER_DEVIATION_CAUSES, "weighting",
                                     "unexplained")  # in this order


def other_base_reading(row):
    """The reading of a law-slope row under the base the verdict does not use (a
    :class:`~rgr.results.replication.rows.Reading` named "with <base>"), or None for any other row."""
    names = {f"with {b}" for b in LOG_BASES if b != LAW_BASE}
    found = [x for x in getattr(row, "readings", ()) if x.name in names]
    return found[0] if found else None


def cause_of(row) -> str:
    """Why a verdict row (anything with ``verdict`` and ``readings``) does not agree, as a key of :data:`CAUSES`;
    "" when it agrees. Not testable: its reader's cause. A deviation, in the order of :data:`DEVIATION_CAUSES`: the
    other log base's reading holds ("log_base"); the paper's value lies in the 99% interval ("near_miss"); what its
    reader found ("thin", "paper_table1", "paper_text", "budget"); the same law fitted in log space, every cell
    weighed alike, holds the paper's value ("weighting": the book's least-squares constant, the paper's kind of fit,
    is raised by its thresholds at the largest cells, which least squares weighs most); otherwise "unexplained". The
    paper's value inside the bootstrap over cells is no cause: the book fits the cells the paper names, so that
    bootstrap says how the constant depends on the cells chosen, not why the book's differs."""
    v = row.verdict  # a log base the paper's own Table 1 rules out (``base_ruled_out``) is no cause
    if v.status == "agrees":
        return ""
    if v.status == "not testable":
        return v.cause
    other = other_base_reading(row)
    if other is not None and other.holds and not getattr(row, "base_ruled_out", False):
        return "log_base"
    if v.near_miss:
        return "near_miss"
    if v.cause:
        return v.cause
    if any(x.name == LOG_SPACE and x.holds for x in getattr(row, "readings", ())):
        return "weighting"
    return "unexplained"


def verdict_label(row) -> str:
    """The verdict in words, as the table shows it: "agrees", "not testable", "deviates", "deviates (near miss)", or
    for a law slope "deviates with ln; agrees with log2" (one claim, both readings, one verdict)."""
    v = row.verdict
    if v.status != "deviates":
        return v.status
    if cause_of(row) == "log_base":
        return f"deviates with {LAW_BASE}; agrees {other_base_reading(row).name}"
    return "deviates (near miss)" if v.near_miss else "deviates"


def _g(x: float) -> str:
    return f"{x:.3g}"


def _interval_verdict(paper: float, value: float, lo: float, hi: float) -> Verdict:
    """Compare the paper's number with the book's ``value`` and its interval [lo, hi].

    Agrees when lo <= paper <= hi (up to round-off: :func:`rgr.results.stats.within`); deviates otherwise, saying by
    how much (the difference, the ratio, and the distance from the nearer end of the interval).
    """
    if not all(math.isfinite(float(v)) for v in (paper, value)):
        raise ValueError(f"paper and value must be finite, got {paper} and {value}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Verdict("not testable", f"the book has no interval for this value ({_g(value)}): too few seeds or cells",
                       cause="undecided")
    if lo > hi:
        raise ValueError(f"interval must have lo <= hi, got [{lo}, {hi}]")
    if within(paper, lo, hi):
        return Verdict("agrees", f"the paper's {_g(paper)} lies in the book's interval [{_g(lo)}, {_g(hi)}]")
    gap = lo - paper if paper < lo else paper - hi
    ratio = f", {value / paper:.2f}x the paper's" if paper != 0 else ""
    text = (f"book {_g(value)} vs paper {_g(paper)} (difference {value - paper:+.3g}{ratio}); the paper's value lies "
            f"{_g(gap)} {'below' if paper < lo else 'above'} the book's interval [{_g(lo)}, {_g(hi)}]")
    return Verdict("deviates", text)


def noise_verdict(paper: float, value: float, lo: float, hi: float, lo99: float, hi99: float,
                  caveat: str = "") -> Verdict:
    """:func:`_interval_verdict` on the 95% noise interval [lo, hi]; a deviation also says whether it is a near miss
    (the paper's value inside the 99% interval [lo99, hi99]) and the difference in half-widths of the 95% interval."""
    v = _interval_verdict(paper, value, lo, hi)
    if v.status != "deviates":
        return Verdict(v.status, v.detail.replace("the book's interval", "the book's 95% noise interval"),
                       cause=v.cause)
    near = within(paper, lo99, hi99)
    half = (hi - lo) / 2
    size = f"the difference is {abs(value - paper) / half:.1f} half-widths of that interval" if half > 0 else\
        "the interval has no width (every replicate gave the same value)"
    prec = "; the paper gives its value without an interval, so only the book's noise measures the difference"
    where = (f"a near miss: inside the 99% interval [{_g(lo99)}, {_g(hi99)}]" if near else
             f"beyond the 99% interval [{_g(lo99)}, {_g(hi99)}] too")
    text = v.detail.replace("the book's interval", "the book's 95% noise interval") + f", {where}; {size}{prec}"
    return Verdict("deviates", text + (f". {caveat}" if caveat else ""), near_miss=near)


def combined(verdicts: list[Verdict], why: str) -> Verdict:
    """One verdict from per-item verdicts of one claim: deviates if any item does, agrees if all do, otherwise not
    testable with the first undecided item's cause; ``why`` is its detail."""
    if any(v.status == "deviates" for v in verdicts):
        return Verdict("deviates", why)
    open_ = [v for v in verdicts if v.status != "agrees"]
    return Verdict("not testable", why, cause=open_[0].cause) if open_ else Verdict("agrees", why)


def side_verdict(lo: float, hi: float, level: float, above: bool, what: str,
                 label: str = "95% noise interval") -> Verdict:
    """A claimed direction ("``what`` lies above ``level``", or below with ``above=False``) against the book's interval
    [lo, hi] of it (``label`` names its kind): agrees when the whole interval is on the claimed side, deviates when it
    is all on the other, not testable (the noise cannot decide) when it reaches ``level`` (up to round-off:
    :func:`rgr.results.stats.tie_margin`)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return Verdict("not testable", f"the book has no interval for {what}", cause="no_data")
    side = "above" if above else "below"
    iv = f"[{_g(lo)}, {_g(hi)}]"
    tol = tie_margin(lo, hi, level)
    if (lo > level + tol) if above else (hi < level - tol):
        return Verdict("agrees", f"{what} lies {side} {_g(level)} across its {label} {iv}")
    if (hi < level - tol) if above else (lo > level + tol):
        return Verdict("deviates", f"{what} lies {'below' if above else 'above'} {_g(level)} across its {label} {iv}")
    return Verdict("not testable", f"undecided: the {label} of {what}, {iv}, reaches {_g(level)}", cause="undecided")


# ----------------------------------------------------------------------------- fits with intervals


def fit_interval(x, y, intercept: bool = False) -> dict[str, tuple[float, float]]:
    """95% percentile-bootstrap intervals over the points (cells) of :func:`rgr.results.stats.fit_line`'s slope,
    intercept and R², by name.

    Each of 2000 replicates draws len(x) points with replacement and refits; replicates whose x are all
    equal (no line) or whose y are all equal (no R²) are dropped. Deterministic (a fixed seed).
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    rng = np.random.default_rng(0)
    reps = []
    for _ in range(2000):
        i = rng.integers(0, x.size, x.size)
        xs, ys = x[i], y[i]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        f = fit_line(xs, ys, intercept=intercept)
        reps.append((f.slope, f.intercept, f.r2))
    a = np.array(reps) if reps else np.full((1, 3), np.nan)
    q = [(1 - 0.95) / 2 * 100, (1 + 0.95) / 2 * 100]
    return {k: tuple(float(v) for v in np.percentile(a[:, j], q)) for j, k in enumerate(("slope", "intercept", "r2"))}


# ----------------------------------------------------------------------------- Table 1


def table1(cells: pd.DataFrame, dk_noise: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 beside the book's d_k* and its 95% noise interval per (m, d_model); cells missing on
    either side are kept with NaN (``dk_noise``: :func:`rgr.results.replication.seed_bootstrap.cell_noise` of
    "d_k_star"). ``agrees``: the paper's d_k* lies in the book's interval."""
    iv = dk_noise[["m", "d_model", "r", "lo", "hi"]].rename(columns={"lo": "d_k_lo", "hi": "d_k_hi"})
    book = cells[cells["r"] == 1].merge(iv, on=["m", "d_model", "r"], how="left")
    paper = pd.DataFrame([(m, d, v) for (m, d), v in TABLE1.items()], columns=["m", "d_model", "paper_d_k"])
    out = paper.merge(book[["m", "d_model", "D_K_star", "h_star", "d_k_star", "d_k_lo", "d_k_hi"]],
                      on=["m", "d_model"], how="outer").sort_values(["m", "d_model"]).reset_index(drop=True)
    inside = (out["d_k_lo"] <= out["paper_d_k"]) & (out["paper_d_k"] <= out["d_k_hi"])
    out["agrees"] = inside.where(out["d_k_star"].notna() & out["paper_d_k"].notna())
    return out


def by_cause(rows: list) -> dict[str, list]:
    """The verdict rows (:class:`~rgr.results.replication.rows.ClaimRow`) that do not agree, per cause
    (:data:`CAUSES`): deviations first, in the order of :data:`DEVIATION_CAUSES`, then the untestable ones; causes
    without rows left out."""
    out: dict[str, list] = {c: [] for c in (*DEVIATION_CAUSES, *NOT_TESTABLE_CAUSES)}
    for r in rows:
        c = cause_of(r)
        if c:
            out[c].append(r)
    return {c: rs for c, rs in out.items() if rs}


@dataclass(frozen=True)
class _Headline:
    """The verdict table in numbers, as the chapter and the introduction paste them (see :func:`headline`)."""

    n_rows: int
    n_agrees: int
    n_deviates: int
    n_not_testable: int
    n_near_miss: int  # deviations whose paper value lies in the book's 99% noise interval


def headline(rows: list) -> _Headline:
    """How many rows there are, per status, and how many deviations are near misses."""
    n = {s: sum(r.verdict.status == s for r in rows) for s in _STATUSES}
    return _Headline(len(rows), n["agrees"], n["deviates"], n["not testable"], sum(r.verdict.near_miss for r in rows))
