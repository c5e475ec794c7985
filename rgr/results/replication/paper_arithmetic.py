"""Can the paper's fits come from its own Table 1? Pure arithmetic on the paper's numbers (chapter *Does it
replicate?*).

Table 1 gives d_k at D_K* per base cell; D_K* = h* d_k for the head count h* the paper found there, one of
its head counts 1, 2, 4, ..., 64. Every such assignment of head counts to the twelve cells gives one set of
D_K* and h*, hence one law fit (D_K* on m log m / d_model through the origin, all cells or the nine that meet
the precondition) and one head-count line (h* on m / d_model, with intercept). :func:`table1_checks` counts
the assignments whose fit reproduces the paper's printed numbers to their last printed digit, in each
reading of the logarithm, and gives the nearest one in R² where none does.

The count is exact (every assignment, 7^12 for twelve cells), by meeting in the middle: each half of the
cells is enumerated once, sorted by the fit's linear statistic sum w_i y_i, and only the pairs whose slope
rounds to the paper's are combined. R² is the centred one of :func:`rgr.results.stats.fit_line`, as the
book's fits use.

The law's constant c read three ways beside that arithmetic (:func:`law_constants`; issue 45; why these three, and
what they show: chapter *Does it replicate?*, "Which logarithm, which fit"); :func:`log_space_reading` is the third
reading as it rides along a verdict row (and names a cause in :func:`rgr.results.replication.verdicts.cause_of`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...theory.bounds import scaling_x
from .. import reported as rep
from ..stats import within
from ..thresholds import meets_precondition
from .rows import Reading, paper_window, place, reached, reading
from .seed_bootstrap import Draws, noise, origin_slope
from .verdicts import CAUSES, LOG_BASES, LOG_SPACE, cause_of


def _table1_heads() -> tuple[int, ...]:
    """The paper's head counts: powers of two up to its largest (64)."""
    return tuple(2 ** k for k in range(int(math.log2(rep.PAPER_MAX_HEADS)) + 1))


def printed_half_unit(printed: str) -> float:
    """Half a unit of the last printed digit: "0.966" -> 0.0005, "1.19" -> 0.005, "−6.64" -> 0.005, "11" -> 0.5."""
    text = printed.replace("−", "-").strip()
    float(text)  # a number, or ValueError
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0 ** (-decimals)


@dataclass(frozen=True)
class ArithmeticCheck:
    """One of the paper's fits against every head-count assignment of Table 1, in one log base and one R².

    ``r2_kind``: "centred" (1 - SS_res / sum (y - mean y)², the book's) or "uncentred" (1 - SS_res / sum y², what some
    packages report for a fit through the origin). ``slope_matches``: assignments whose slope (and, for the head-count
    line, intercept) round to the paper's; ``matches``: those whose R² rounds to the paper's too; ``nearest``:
    (slope, intercept, R²) of the slope-matching assignment with R² nearest the paper's (None when no slope matches).
    """

    fit: str
    base: str
    r2_kind: str
    cells: int
    assignments: int
    slope_matches: int
    matches: int
    nearest: tuple[float, float, float] | None

    @property
    def reproduced(self) -> bool:
        return self.matches > 0


def _half(y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every assignment of one half of the cells (rows of ``y``: a cell's values, one per choice): sum w y, sum y, sum
    y²."""
    grids = np.meshgrid(*[np.arange(y.shape[1])] * y.shape[0], indexing="ij")
    pick = np.stack([g.ravel() for g in grids], axis=1)
    vals = y[np.arange(y.shape[0]), pick]
    return vals @ w, vals.sum(1), (vals ** 2).sum(1)


@dataclass
class _Tally:
    target: float
    tol: float
    matches: int = 0
    nearest: tuple[float, float, float] | None = None

    def add(self, keep: np.ndarray, slope: np.ndarray, icpt: np.ndarray, r2: np.ndarray) -> None:
        gap = np.where(keep, np.abs(r2 - self.target), np.inf)
        self.matches += int((gap <= self.tol).sum())
        if keep.any() and np.isfinite(np.nanmin(gap)):
            j = int(np.nanargmin(gap))
            if self.nearest is None or gap[j] < abs(self.nearest[2] - self.target):
                self.nearest = (float(slope[j]), float(icpt[j]), float(r2[j]))


def meet_in_the_middle(x: np.ndarray, y: np.ndarray, intercept: bool, slope_win: tuple[float, float],
            icpt_win: tuple[float, float] | None, r2_target: float, r2_tol: float, chunk: int = 4096):
    """Assignments (``y[i, j]``: cell i's value under choice j) whose slope lies in ``slope_win`` (and intercept in
    ``icpt_win``): their number, and per R² kind a :class:`_Tally` of those whose R² is within ``r2_tol`` of
    ``r2_target``."""
    n = x.size
    w = x - x.mean() if intercept else x
    sww = float(w @ w)
    k = n // 2
    ta, s1a, s2a = _half(y[:k], w[:k])
    tb, s1b, s2b = _half(y[k:], w[k:])
    order = np.argsort(tb, kind="stable")
    tb, s1b, s2b = tb[order], s1b[order], s2b[order]
    n_slope = 0
    tallies = {kind: _Tally(r2_target, r2_tol) for kind in (("centred",) if intercept else ("centred", "uncentred"))}
    for start in range(0, ta.size, chunk):
        a = np.arange(start, min(start + chunk, ta.size))
        lo = np.searchsorted(tb, slope_win[0] * sww - ta[a], "left")
        counts = np.searchsorted(tb, slope_win[1] * sww - ta[a], "right") - lo
        if not counts.sum():
            continue
        ia = np.repeat(a, counts)
        ib = np.repeat(lo - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        t, s1, s2 = ta[ia] + tb[ib], s1a[ia] + s1b[ib], s2a[ia] + s2b[ib]
        slope = t / sww
        icpt = (s1 - slope * x.sum()) / n if intercept else np.zeros_like(slope)
        keep = np.ones(slope.size, bool) if icpt_win is None else (icpt >= icpt_win[0]) & (icpt <= icpt_win[1])
        n_slope += int(keep.sum())
        sst = s2 - s1 ** 2 / n
        sst = np.where(sst > 0, sst, np.nan)
        if intercept:  # R² = slope² sum (x - mean x)² / SS_tot
            tallies["centred"].add(keep, slope, icpt, slope ** 2 * sww / sst)
        else:  # SS_res = sum y² - t² / sum x²
            ss_res = s2 - t * slope
            tallies["centred"].add(keep, slope, icpt, 1 - ss_res / sst)
            tallies["uncentred"].add(keep, slope, icpt, 1 - ss_res / s2)
    return n_slope, tallies


def _window(key: str, scale: float = 1.0) -> tuple[float, float]:
    c = rep.claim(key)
    tol = printed_half_unit(c.paper)
    return (c.value - tol) * scale, (c.value + tol) * scale


def table1_checks() -> list[ArithmeticCheck]:
    """The law fits (all cells, precondition cells; ln and log2; centred and uncentred R²) and the head-count line,
    each against every power-of-two head assignment of the paper's Table 1 (D_K* = h* d_k exactly)."""
    cells = sorted(rep.TABLE1)
    heads = np.array(_table1_heads(), float)
    m = np.array([c[0] for c in cells], float)
    d = np.array([c[1] for c in cells], float)
    y = np.outer([rep.TABLE1[c] for c in cells], heads)  # D_K* = d_k h
    pre = meets_precondition(pd.DataFrame({"m": m, "d_model": d})).to_numpy()
    out = []
    for fit, mask in (("all", np.ones(len(cells), bool)), ("pre", pre)):
        x = np.asarray(scaling_x(m[mask], d[mask]), float)
        r2 = rep.claim(f"law_r2_{fit}")
        for base, factor in LOG_BASES.items():
            # x in base b is factor * x in ln, so a slope c in base b is c * factor in the ln abscissa's units
            n_s, tallies = meet_in_the_middle(x, y[mask], False, _window(f"law_slope_{fit}", factor), None, r2.value,
                                   printed_half_unit(r2.paper))
            for kind, t in tallies.items():
                near = None if t.nearest is None else (t.nearest[0] / factor, 0.0, t.nearest[2])
                out.append(
                    ArithmeticCheck(fit=f"law_{fit}", base=base, r2_kind=kind, cells=int(mask.sum()),
                                    assignments=len(heads) ** int(mask.sum()), slope_matches=n_s, matches=t.matches,
                                    nearest=near)
                )
    r2 = rep.claim("heads_r2")
    n_s, tallies = meet_in_the_middle(m / d, np.outer(np.ones(len(cells)), heads), True, _window("heads_slope"),
                           _window("heads_intercept"), r2.value, printed_half_unit(r2.paper))
    t = tallies["centred"]
    out.append(
        ArithmeticCheck(fit="heads", base="—", r2_kind="centred", cells=len(cells),
                        assignments=len(heads) ** len(cells), slope_matches=n_s, matches=t.matches, nearest=t.nearest)
    )
    return out


def check_words(checks: list[ArithmeticCheck], fit: str) -> str:
    """What the arithmetic says about the paper's fit ``fit`` ("law_all", "law_pre" or "heads"), for its rows: per
    base, how many head assignments of Table 1 reproduce it (centred R², the book's), else the nearest R²; and
    whether one assignment reproduces all the paper's base-grid fits together; "" without a check of ``fit``."""
    found = [c for c in checks if c.fit == fit and c.r2_kind == "centred"]
    if not found:
        return ""
    parts = []
    for c in found:
        where = "" if c.base == "—" else f" with {c.base}"
        if c.reproduced:
            parts.append(f"{c.matches:,} reproduce it{where}")
        elif c.nearest is None:
            parts.append(f"none gives its slope{where}")
        else:
            s, i, r2 = c.nearest
            line = f"{s:.3g} λ {i:+.3g}" if fit == "heads" else f"slope {s:.3g}"
            parts.append(
                f"none reproduces it{where} ({c.slope_matches:,} give its {'line' if fit == 'heads' else 'slope'}; "
                f"nearest R² {r2:.3f}, {line})"
            )
    uncentred = [c for c in checks if c.fit == fit and c.r2_kind == "uncentred"]
    alt = ("" if not uncentred else "; with the uncentred R² of a fit through the origin "
           + ("some do" if any(c.reproduced for c in uncentred) else "none does either"))
    joint = ("each of the paper's base-grid fits is reproduced by some assignment" if all_reproduced(checks) else
             "no single assignment reproduces the paper's base-grid fits together")
    return (f"Table 1 arithmetic (every power-of-two head count at the paper's own Table 1 d_k, "
            f"{found[0].assignments:,} assignments): " + "; ".join(parts) + alt + f"; {joint}")


def reproduced_with(checks: list[ArithmeticCheck], fit: str, base: str) -> bool | None:
    """Whether some head assignment of Table 1 reproduces the paper's fit ``fit`` in ``base`` ("ln", "log2"; "—" for
    the head-count line) with the centred R²; None without such a check."""
    found = [c for c in checks if c.fit == fit and c.base == base and c.r2_kind == "centred"]
    return None if not found else any(c.reproduced for c in found)


def table1_base(checks: list[ArithmeticCheck]) -> str:
    """The log base Table 1 leaves the paper: the one base in which some law fit of the paper is reproduced (centred
    R²) while none is in the other. The paper fits one law in one section, so one base for both law fits; "" where
    the arithmetic cannot tell (no law fit reproduced, or fits reproduced in both bases)."""
    bases = {c.base for c in checks if c.fit.startswith("law_") and c.r2_kind == "centred" and c.reproduced}
    return bases.pop() if len(bases) == 1 else ""


def all_reproduced(checks: list[ArithmeticCheck]) -> bool:
    """Whether each of the paper's fits (law over all cells, over the precondition cells, head-count line) is
    reproduced by some assignment in at least one base with the centred R² (a necessary condition for one
    assignment reproducing them together)."""
    fits = {c.fit for c in checks}
    return all(any(c.reproduced for c in checks if c.fit == f and c.r2_kind == "centred") for f in fits)


_READINGS: tuple[tuple[str, str, str, str], ...] = (("ln, least squares", "ln", "ls", "ln"),
                                                   ("log2, least squares", "log2", "ls", "log2"),
                                                   (LOG_SPACE, "ln", "log", "logspace"))  # name, base, fit, glued tag
_TAG = {name: tag for name, _, _, tag in _READINGS}


def _log_space_constant(x: np.ndarray, dk: np.ndarray) -> np.ndarray:
    """c fitted through the origin in log space: exp(mean over cells of ln(D_K* / x)); ``dk`` (cells, k) -> (k,)."""
    return np.exp(np.mean(np.log(dk / np.asarray(x, float)[:, None]), axis=0))


def log_space_reading(d: Draws, paper: float) -> Reading | None:
    """The ln log-space constant on ``d``'s cells as a :class:`~rgr.results.replication.rows.Reading` (its noise
    interval and whether ``paper`` lies in it); None with fewer than 2 cells."""
    if len(d.cells) < 2:
        return None
    x = d.cells["x_law"].to_numpy(float) * LOG_BASES["ln"]
    return reading(LOG_SPACE, noise(d, lambda dk, h: _log_space_constant(x, dk)), paper)


def _reproducing(checks: Sequence[ArithmeticCheck], fit: str, base: str) -> int:
    """Head assignments of Table 1 that reproduce the paper's fit in ``base`` (centred R², the book's)."""
    return sum(c.matches for c in checks if c.fit == fit and c.base == base and c.r2_kind == "centred")


def law_constants(draws: Draws, checks: Sequence[ArithmeticCheck]) -> pd.DataFrame:
    """One row per cell set ("all", "pre") and reading of :data:`_READINGS`: n cells, the book's c, its 95% noise
    interval (lo, hi) and seed-bootstrap interval (boot_lo, boot_hi), the paper's c, whether it lies inside each
    interval, and ``table1``: assignments of the paper's Table 1 reproducing its fit in that base (least squares
    only; the arithmetic fits least squares)."""
    ok = reached(draws)
    out = []
    for cells in ("all", "pre"):
        d = ok if cells == "all" else ok.subset(meets_precondition(ok.cells))
        paper = float(rep.claim(f"law_slope_{cells}").value)
        for name, base, how, _ in _READINGS:
            x = d.cells["x_law"].to_numpy(float) * LOG_BASES[base]
            fit = origin_slope if how == "ls" else _log_space_constant
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
class _Constant:
    """One reading of the constant as the chapter pastes it: value, noise interval and seed-bootstrap interval (to 3
    decimals), and where the paper's printed value, as the values it rounds (:func:`rgr.results.replication.rows.
    paper_window`), lies in each ("inside", "outside", or at the edge within the paper's rounding)."""

    value: float
    iv: str
    boot: str
    inside: str
    inside_boot: str


@dataclass(frozen=True)
class _CellSet:
    """The three readings on one cell set, and the Table 1 head assignments reproducing the paper's fit per base."""

    ln: _Constant
    log2: _Constant
    logspace: _Constant
    t1_ln: str
    t1_log2: str


@dataclass(frozen=True)
class _LawConstants:
    """:func:`law_constants` for the chapter: ``c_all`` (twelve base cells), ``c_pre`` (precondition cells),
    ``t1_base``, the base Table 1 leaves the paper ("neither base" where the arithmetic cannot tell), and the causes
    the verdict rows law_slope_all / law_slope_pre give (:data:`rgr.results.replication.verdicts.CAUSES`'s words;
    "none: it agrees" for an agreement)."""

    t1_base: str
    c_all: _CellSet
    c_pre: _CellSet
    cause_all: str
    cause_pre: str


def law_constant_values(frame: pd.DataFrame, checks: Sequence[ArithmeticCheck], rows: Sequence) -> _LawConstants:
    """The numbers of :func:`law_constants` (``frame``) as a finding the chapter glues (``c_all_ln_value``, ...),
    with the causes of the verdict ``rows`` (:class:`~rgr.results.replication.rows.ClaimRow`) of the two slopes."""
    sets = {}
    for cells, g in frame.groupby("cells", sort=False):
        got = {}
        window = paper_window(f"law_slope_{cells}")
        for r in g.itertuples(index=False):
            where = [place(window, a, z) if math.isfinite(a) and math.isfinite(z) else "outside"
                     for a, z in ((r.lo, r.hi), (r.boot_lo, r.boot_hi))]
            got[_TAG[r.reading]] = _Constant(float(r.value), _iv(r.lo, r.hi), _iv(r.boot_lo, r.boot_hi), *where)
        t1 = {_TAG[r.reading]: f"{int(r.table1):,}" for r in g.itertuples(index=False) if not pd.isna(r.table1)}
        sets[cells] = _CellSet(got["ln"], got["log2"], got["logspace"], t1["ln"], t1["log2"])
    causes = {r.key: cause_of(r) for r in rows}
    said = {k: CAUSES[causes[k]] if causes.get(k) else ("none: it agrees" if k in causes else "no row")
            for k in ("law_slope_all", "law_slope_pre")}
    return _LawConstants(table1_base(list(checks)) or "neither base", sets["all"], sets["pre"],
                        said["law_slope_all"], said["law_slope_pre"])
