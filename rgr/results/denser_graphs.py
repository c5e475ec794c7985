"""The findings of chapter *denser graphs* (protocol E4, r-regular graphs), each a small frozen result.

:func:`denser_findings` fits D_K* = c x through the origin for two normalisations of the budget, each over
r <= 16 (the paper's range) and over every r of the table: the paper's x = (r m / d_model) log2 m and the
lower bound's (m' / d_model) log2(m^2 / m') with m' = r m. A normalisation that holds across densities
with one constant keeps D_K* / x flat, so each fit comes with the spread max / min of that ratio.
Too few cells give NaN and a note, never an error.

:func:`regular_rows`: App. A.3's verdict rows for chapter *Does it replicate?* (conventions of
:mod:`rgr.results.replication.sec61`). :func:`unstopped_reading` reads them again with the ``unstopped``
extension's retrained futility stops in the stopped rows' place (issue 45, item 5; :mod:`rgr.experiments.unstopped`,
declared before its first row, not the protocol) and says per retrained point what changed: a second reading only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..experiments.futility import futile_stops, retrained_points, with_retrained
from ..protocol import F1_TARGET, reaches_target
from ..theory.bounds import regular_x, regular_x_bound
from . import reported as rep
from .replication.rows import ClaimRow, Source, basis, fit_row, reached, untestable
from .replication.seed_bootstrap import Draws, cell_noise, fit_stats, noise, seed_draws
from .replication.verdicts import Verdict, side_verdict
from .stats import fit_line
from .thresholds import curves

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
    n_reached: int  # out-degrees with a D_K*
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
    h_ratio_spread: float  # h_ratio_max / h_ratio_min: 1 if h* is proportional to r m / d_model
    h_factor: float  # the paper's "within about 2x" (rgr.results.reported, claim regular_heads)
    n_h_within: int  # out-degrees whose h* is within h_factor of r m / d_model
    h_proportional: str  # whether that proportionality holds here, in words (:func:`_h_proportional`)
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


def _h_proportional(n_within: int, n: int, factor: float) -> str:
    """The paper's h* ~ r m / d_model, "within about ``factor``x", read at the ``n`` out-degrees with an h*."""
    if not n:
        return "—"
    if n_within == n:
        return f"the proportionality holds within the paper's {factor:g}x"
    return (f"the proportionality the paper states, within about {factor:g}x, fails here, for a reason "
            f"unexplained")


def denser_findings(cells: pd.DataFrame, h_max: int, n_heads: int = 0) -> _DenserFindings:
    """``cells``: :func:`rgr.results.thresholds.thresholds` of the E4 table (one (m, d_model), several r);
    ``h_max``: the largest head count tried; ``n_heads``: how many head counts were tried."""
    ok = cells[cells["D_K_star"].notna()].sort_values("r")
    fits = {(f, k): _form_fit(cells, f, r) for f in _FORMS for k, r in (("16", PAPER_R_MAX), ("all", None))}
    hs = ok[ok["h_star"].notna()]
    nan = math.nan
    factor = float(rep.claim("regular_heads").value)
    if len(hs):
        trend = hs["r"] * hs["m"] / hs["d_model"]
        h_ratio = hs["h_star"].astype(float) / trend
        first, last = hs.iloc[0], hs.iloc[-1]
        within = int(((h_ratio >= 1 / factor) & (h_ratio <= factor)).sum())
        heads = (int(first["h_star"]), int(first["r"]), int(last["h_star"]), int(last["r"]),
                 float(last["r"] / first["r"]), h_max, int((hs["h_star"] == h_max).sum()),
                 float(h_ratio.min()), float(h_ratio.max()), float(h_ratio.max() / h_ratio.min()), factor, within,
                 _h_proportional(within, len(hs), factor))
    else:
        heads = (0, 0, 0, 0, nan, h_max, 0, nan, nan, nan, factor, 0, "—")
    notes = "none" if len(ok) >= 2 else f"need D_K* at 2 or more out-degrees to compare the forms, got {len(ok)}"
    return _DenserFindings(len(ok), int(ok["r"].max()) if len(ok) else 0, fits["log2m", "16"],
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


def regular_rows(src: Source) -> list[ClaimRow]:
    """E4 over r <= 16 (the paper's range): the fit D_K* = c x, the bound forms, the plateaus, h* against r m /
    d_model."""
    b = basis(src)
    d = reached(seed_draws(src.runs, law="regular")) if len(src.runs) else None
    ok = d.subset((d.cells["r"] <= PAPER_R_MAX).to_numpy()) if d is not None else None
    rows = []
    if ok is not None and len(ok.cells) >= 2:
        rows.append(fit_row("regular_slope", ok, ("x_law", "dk", False, "slope", 1.0), b + "; r ≤ 16", []))
        rows.append(regular_lower_form(ok, b + "; r ≤ 16"))
    else:
        n = 0 if ok is None else len(ok.cells)
        rows += [
            untestable(k, f"{n} out-degrees r <= 16 with a D_K*; a fit needs 2", b)
            for k in ("regular_slope", "regular_lower_form")
        ]
    rows.append(regular_plateaus(src, b))
    rows.append(regular_heads(ok, b, int(src.runs["h"].max()) if len(src.runs) else 0))
    c = ok.cells if ok is not None else pd.DataFrame(columns=["r"])
    construct = f"the book's D_K* at r = 16 is {int(c[c.r == 16].D_K_star.iloc[0])}; " if (c.r == 16).any() else ""
    rows.append(
        untestable(
            "regular_r16_bound",
            construct + "the paper's constructive bound carries a constant C it does not fix for "
            "this size; the book's prescribed construction fails at this cell and its only separating one is one "
            "rank-one head per edge (D_K = m'), a trivial bound (chapter constructions)",
            b,
            "no_number",
        )
    )
    return rows


def regular_lower_form(ok: Draws, b: str) -> ClaimRow:
    """The lower bound's form (m'/d_model) log2(m²/m') fits D_K* through the origin better than (r m / d_model) log2 m:
    R² of the first minus R² of the second above 0 across its 95% noise interval."""
    c = ok.cells
    xb = np.asarray(regular_x_bound(c["r"], c["m"], c["d_model"]), float)
    xl = c["x_law"].to_numpy(float)
    n = noise(ok, lambda dk, h: fit_stats(xb, dk, False)[2] - fit_stats(xl, dk, False)[2])
    r2b, r2l = (float(fit_stats(x, c["D_K_star"].to_numpy(float)[:, None], False)[2][0]) for x in (xb, xl))
    v = side_verdict(n.lo, n.hi, 0.0, True, "R²(lower-bound form) − R²(log2 m form)")
    return ClaimRow(key="regular_lower_form", book=f"R² {r2b:.3f} (lower-bound form) vs {r2l:.3f} (log2 m form)",
                    interval=f"difference {n.value:+.3f} [{n.lo:+.3f}, {n.hi:+.3f}]", basis=b, verdict=v, value=n.value,
                    lo=n.lo, hi=n.hi)


def regular_plateaus(src: Source, b: str) -> ClaimRow:
    """r = 2 with h = 1 and r = 4 with h = 2 stay below F1 0.99 at every budget (the t-interval's upper end too);
    h = 4 or 8 reach it at r = 4."""
    s = curves(src.runs) if len(src.runs) else pd.DataFrame()
    need = [(2, 1), (4, 2), (4, 4), (4, 8)]
    have = {(int(r), int(h)) for r, h in s[["r", "h"]].drop_duplicates().itertuples(index=False)} if len(s) else set()
    if not set(need) <= have:
        return untestable("regular_plateaus", f"(r, h) = {sorted(set(need) - have)} not in these data", b)
    best = {k: s[(s.r == k[0]) & (s.h == k[1])].sort_values("mean").iloc[-1] for k in need}
    flat = all(best[k]["hi"] < F1_TARGET for k in need[:2])
    jump = any(reaches_target(best[k]["mean"]) for k in need[2:])
    txt = "; ".join(f"r = {r}, h = {h}: {best[(r, h)]['mean']:.2f}" for r, h in need)
    plateau = pd.Series(list(zip(src.runs["r"], src.runs["h"])), index=src.runs.index).isin(need[:2])
    stopped = futile_stops(src.runs[plateau])
    said = (f"; {stopped.stopped} of {stopped.runs} plateau runs were stopped by the futility rule (not in the "
            "protocol): chapter denser graphs reads them again retrained" if stopped.stopped else "")
    return ClaimRow(
        "regular_plateaus",
        "best mean F1 — " + txt,
        f"plateaus' 95% upper ends below {F1_TARGET:g}: " + ("yes" if flat else "no"),
        b,
        Verdict(
            "agrees" if flat and jump else "deviates",
            (
                f"one head (r = 2) and two heads (r = 4) stay below {F1_TARGET:g} at every tested budget"
                if flat
                else f"a plateau is not below {F1_TARGET:g}"
            )
            + ("; four or eight heads reach it" if jump else "; neither 4 nor 8 heads reach it") + said,
        ),
    )


def regular_heads(ok: Draws | None, b: str, top_h: int) -> ClaimRow:
    """Each r's h* noise interval meets [t/2, 2t], t = r m / d_model (the paper's 'within about 2x')."""
    if ok is None or not len(ok.cells):
        return untestable("regular_heads", "no out-degree with h*", b)
    h = cell_noise(ok, "h_star")
    t = (h["r"] * h["m"] / h["d_model"]).astype(float)
    factor = rep.claim("regular_heads").value
    meets = (h["hi"] >= t / factor) & (h["lo"] <= t * factor)
    worst = (t / h["hi"]).max()
    txt = ", ".join(f"r = {int(r.r)}: {int(r.value)} vs {int(tt)}" for r, tt in zip(h.itertuples(), t))
    return ClaimRow(
        "regular_heads",
        "h* vs r m/d_model — " + txt,
        "95% noise intervals of h*",
        b,
        Verdict(
            "agrees" if meets.all() else "deviates",
            f"within {factor:g}x of r m / d_model in {int(meets.sum())} of {len(h)} out-degrees; at worst "
            f"r m / d_model is {worst:.1f}x the upper end of h*'s noise interval; "
            + (
                f"the book's largest head count {top_h} is inside some r's interval, so its cap may matter"
                if (h["hi"] >= top_h).any()
                else f"no interval reaches the book's largest head count {top_h}, so its cap does not explain this"
            ),
        ),
    )


def _changed(a: ClaimRow, b: ClaimRow) -> bool:
    """Whether a verdict row read on the protocol's rows (``a``) and with the retrained runs in the stopped ones' place
    (``b``) differ in status, the book's reading, its interval or its value (values to 1e-9; NaN equals NaN)."""
    x, y = float(a.value), float(b.value)
    same = (math.isnan(x) and math.isnan(y)) or (not math.isnan(x) and not math.isnan(y) and abs(x - y) <= 1e-9)
    return (a.verdict.status, a.book, a.interval) != (b.verdict.status, b.book, b.interval) or not same


@dataclass(frozen=True)
class _UnstoppedReading:
    """What retraining the stopped runs changed. ``stopped`` of the table's ``runs`` were stopped by the futility rule;
    ``points``: :func:`rgr.experiments.futility.retrained_points`;
    ``rows``: every verdict row of the regular table on both versions, as (before, after) pairs; the rest: counts for
    the chapter's prose (``false_*``: the false-stop point(s); ``plateau_*``: the plateau curves' points)."""

    stopped: int  # runs of the table the futility rule stopped (:func:`rgr.experiments.futility.futile_stops`)
    runs: int  # runs of the table
    retrained: int
    reached: int
    false_retrained: int
    false_reached: int
    false_f1_before: float
    false_f1_after: float
    plateau_retrained: int
    plateau_reached: int
    plateau_points: int
    plateau_shift_max: float  # largest |change| of a plateau point's mean F1
    plateau_shift_where: str  # that point: "r = 4, h = 2, D_K = 4096" ("—" without plateau points)
    plateau_best_before: float  # best mean F1 over the plateau points, before and after
    plateau_best_after: float
    rows_read: int
    rows_changed: int
    statuses_changed: int
    changed_words: str  # "none", or "key (status before -> after)" / "key (values only; still status)", ...
    points: pd.DataFrame
    rows: tuple[tuple[ClaimRow, ClaimRow], ...]


def _words(rows: tuple[tuple[ClaimRow, ClaimRow], ...]) -> str:
    moved = [(a.key, a.verdict.status, b.verdict.status) for a, b in rows if _changed(a, b)]
    if not moved:
        return "none"
    return ", ".join(f"{k} ({s} -> {t})" if s != t else f"{k} (values only; still {s})" for k, s, t in moved)


def unstopped_reading(src: Source, retrained: pd.DataFrame, plateaus: tuple[tuple[int, int], ...]) -> _UnstoppedReading:
    """The regular table ``src`` read with ``retrained`` (the extension's rows at ``src``'s preset) in its stopped
    rows' place. ``plateaus``: the (r, h) curves read as plateaus (the other retrained points are false stops)."""
    pts = retrained_points(src.runs, retrained)
    after = Source(src.name, src.preset, with_retrained(src.runs, retrained))
    rows = tuple(zip(regular_rows(src), regular_rows(after)))
    on = pd.Series([(int(r), int(h)) in set(plateaus) for r, h in zip(pts["r"], pts["h"])], index=pts.index,
                   dtype=bool)
    fal, pla = pts[~on], pts[on]

    def mean(df: pd.DataFrame, col: str) -> float:  # a mean over the seeds of the points' runs
        return float((df[col] * df["seeds"]).sum() / df["seeds"].sum()) if len(df) else math.nan

    shift = (pla["f1_after"] - pla["f1_before"]).abs()
    top = pla.loc[shift.idxmax()] if len(pla) else None
    where = "—" if top is None else f"r = {int(top.r)}, h = {int(top.h)}, D_K = {int(top.D_K)}"
    stops = futile_stops(src.runs)
    return _UnstoppedReading(
        stopped=stops.stopped, runs=stops.runs,
        retrained=int(pts["retrained"].sum()), reached=int(pts["reached"].sum()),
        false_retrained=int(fal["retrained"].sum()), false_reached=int(fal["reached"].sum()),
        false_f1_before=mean(fal, "f1_before"), false_f1_after=mean(fal, "f1_after"),
        plateau_retrained=int(pla["retrained"].sum()), plateau_reached=int(pla["reached"].sum()),
        plateau_points=len(pla), plateau_shift_max=float(shift.max()) if len(pla) else math.nan,
        plateau_shift_where=where,
        plateau_best_before=float(pla["f1_before"].max()) if len(pla) else math.nan,
        plateau_best_after=float(pla["f1_after"].max()) if len(pla) else math.nan,
        rows_read=len(rows), rows_changed=sum(_changed(a, b) for a, b in rows),
        statuses_changed=sum(a.verdict.status != b.verdict.status for a, b in rows), changed_words=_words(rows),
        points=pts, rows=rows,
    )
