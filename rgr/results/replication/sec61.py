"""One reading per claim of the paper, from the book's tables (chapter *Does it replicate?*): Sec. 6.1 / App. A.2.

:func:`rgr.results.replication.registry.evaluate` turns the runs of each experiment (:class:`Source`) into one
:class:`ClaimRow` per entry of :data:`rgr.results.reported.CLAIMS`: the book's value, its noise interval
(the convention of the chapter's "Intervals"), the preset and seeds behind it, and a
:class:`~rgr.results.replication.verdicts.Verdict`.
Readings that decide nothing (the other log base, every configuration tested) ride along as :class:`Reading`.
Every rule is stated in the docstring of its reader; the paper's numbers come from
:mod:`rgr.results.reported` only.
The Fig. 4 readers are in :mod:`rgr.results.replication.fig4`, App. A.3's in :mod:`rgr.results.denser_graphs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...protocol import F1_TARGET, reaches_target
from .. import reported as rep
from ..stats import by_seed, paired_difference, within
from ..thresholds import curves, meets_precondition
from .paper_arithmetic import ArithmeticCheck, check_words, log_space_reading, reproduced_with, table1_base
from .rows import ClaimRow, Source, basis, fit_row, fmt_iv, reached, seeds_per_point, untestable
from .seed_bootstrap import Draws, cell_noise, noise, origin_slope
from .verdicts import LAW_BASE, LOG_BASES, Verdict, combined, noise_verdict, side_verdict, table1


@dataclass(frozen=True)
class SharedBase:
    """What the Sec. 6.1 readers share: the base grid's runs and seed draws, the draws of every configuration the
    book tested at one preset (None without them) and what they are, and the arithmetic on the paper's Table 1."""

    src: Source
    draws: Draws
    every: Draws | None
    every_basis: str
    arithmetic: list[ArithmeticCheck]


def _missing(cells: pd.DataFrame, wanted) -> list:
    have = set() if not len(cells) else {(int(m), int(d)) for m, d in cells[["m", "d_model"]].itertuples(index=False)}
    return [c for c in wanted if tuple(c) not in have]


def _law_caveat(capped: pd.DataFrame, top_h: int, seeds: int) -> str:
    """Why a fitted slope could sit off the paper's: head counts at the grid's cap, and the ladder's resolution."""
    paper_seeds = rep.PAPER_SEEDS["base"]
    step = (f"with {seeds} seeds (paper {paper_seeds}) a threshold moves by a refinement step" if seeds < paper_seeds
            else f"with {seeds} seeds, as the paper's, a threshold is still known only to one refinement step")
    if not len(capped):
        return step[0].upper() + step[1:]
    where = ", ".join(f"({r.m}, {r.d_model})" for r in capped.itertuples())
    also = " (the paper's grid stops there too)" if top_h >= rep.PAPER_MAX_HEADS else ""
    return (f"h* is the book's largest head count {top_h} (paper: {rep.PAPER_MAX_HEADS}) at {where}{also}: "
            f"more heads could lower those D_K*; {step}")


def _every(sb: SharedBase, e: Draws | None, factor: float) -> list[tuple[str, Draws, float]]:
    """Every configuration tested (``e``: its draws, None without them) as a fit row's reading beside it."""
    return [] if e is None else [(f"every configuration tested ({sb.every_basis}; {len(e.cells)} cells)", e, factor)]


def law_rows(sb: SharedBase, b: str) -> list[ClaimRow]:
    """Slope and R² of D_K* on m log m / d_model through the origin (all cells / precondition cells), in the law's
    base (:data:`rgr.results.replication.verdicts.LAW_BASE`); the other base, the ln fit in log space
    (:mod:`rgr.results.replication.paper_arithmetic`) and every configuration tested ride along."""
    ok = reached(sb.draws)
    top_h, seeds = int(sb.src.runs["h"].max()), seeds_per_point(sb.src.runs)
    every = reached(sb.every) if sb.every is not None else None
    other = [k for k in LOG_BASES if k != LAW_BASE][0]
    rows = []
    for tag in ("all", "pre"):
        d = ok if tag == "all" else ok.subset(meets_precondition(ok.cells))
        e = None if every is None else (every if tag == "all" else every.subset(meets_precondition(every.cells)))
        if len(d.cells) < 2:
            rows += [
                untestable(f"law_{k}_{tag}", f"D_K* reached in {len(d.cells)} cells; a fit needs 2", b)
                for k in ("slope", "r2")
            ]
            continue
        words = check_words(sb.arithmetic, f"law_{tag}")
        ev = _every(sb, e, LOG_BASES[LAW_BASE])
        caveat = _law_caveat(d.cells[d.cells["h_star"] >= top_h], top_h, seeds)
        f = LOG_BASES[LAW_BASE]
        ok_t1 = reproduced_with(sb.arithmetic, f"law_{tag}", LAW_BASE)
        ruled_out = table1_base(sb.arithmetic) == LAW_BASE  # Table 1 leaves the paper's law one base: the protocol's
        log_space = log_space_reading(d, rep.claim(f"law_slope_{tag}").value)
        rows.append(
            fit_row(key=f"law_slope_{tag}", d=d, spec=("x_law", "dk", False, "slope", f), b=b + f"; log = {LAW_BASE}",
                    others=[(f"with {other}", d, LOG_BASES[other])] + ev, arithmetic=words, caveat=caveat,
                    paper_reproduced=ok_t1, base_ruled_out=ruled_out, extra=(log_space,) if log_space else ())
        )
        rows.append(fit_row(f"law_r2_{tag}", d, ("x_law", "dk", False, "r2", f), b, ev, words, paper_reproduced=ok_t1))
    return rows


def excluded_above(sb: SharedBase, b: str) -> ClaimRow:
    """Each d_model = 16, m > 64 cell lies above the precondition line: D_K* / (c x) > 1, the line refitted on every
    seed replicate, across the ratio's 95% noise interval (widened over mixed threshold ends: the cell at one, the
    line's cells at the other)."""
    key, wanted = "excluded_above", rep.claim("excluded_above").value
    ok = reached(sb.draws)
    miss = _missing(ok.cells, wanted)
    pre = meets_precondition(ok.cells).to_numpy()
    if miss or not pre.any():
        return untestable(key, f"cells {miss} not reached in these data" if miss else "no precondition cells with D_K*",
                          b)
    x = ok.cells["x_law"].to_numpy(float)
    at = {c: int(np.flatnonzero((ok.cells["m"] == c[0]) & (ok.cells["d_model"] == c[1]))[0]) for c in wanted}

    ns = {c: noise(ok, lambda dk, h, j=j: dk[j] / (origin_slope(x[pre], dk[pre]) * x[j]), mixed=True)
          for c, j in at.items()}
    vs = [side_verdict(n.lo, n.hi, 1.0, True, f"D_K* / line at {c}") for c, n in ns.items()]
    txt = ", ".join(f"({m}, {d}): {n.value:.2f}x" for (m, d), n in ns.items())
    ivs = ", ".join(f"[{n.lo:.2f}, {n.hi:.2f}]" for n in ns.values())
    n_above = sum(v.status == "agrees" for v in vs)
    why = f"above the precondition line across the ratio's 95% noise interval in {n_above} of {len(vs)} cells"
    why += "".join(f"; {v.detail}" for v in vs if v.status != "agrees")
    return ClaimRow(key, f"D_K* / line: {txt}", ivs, b, combined(vs, why), min(n.value for n in ns.values()))


def heads_rows(sb: SharedBase, b: str) -> list[ClaimRow]:
    """h* = a m/d_model + b with intercept; a deviation notes how many cells sit at the book's largest head count."""
    d = reached(sb.draws)
    if len(d.cells) < 3:
        return [
            untestable(k, f"h* found in {len(d.cells)} cells; the line needs 3", b)
            for k in ("heads_slope", "heads_intercept", "heads_r2")
        ]
    top = int(sb.src.runs["h"].max())
    capped = d.cells[d.cells["h_star"] >= top]
    caveat = (
        f"In {len(capped)} cell(s) h* is the book's largest head count {top} (paper: up to {rep.PAPER_MAX_HEADS}); "
        "a larger grid could only raise those h*, i.e. steepen the line"
        if len(capped)
        else ""
    )
    ev = _every(sb, None if sb.every is None else reached(sb.every), 1.0)
    words = check_words(sb.arithmetic, "heads")
    ok_t1 = reproduced_with(sb.arithmetic, "heads", "—")
    return [
        fit_row(key=k, d=d, spec=("lam", "h", True, w, 1.0), b=b, others=ev, arithmetic=words, caveat=caveat,
                paper_reproduced=ok_t1)
        for k, w in (("heads_slope", "slope"), ("heads_intercept", "intercept"), ("heads_r2", "r2"))
    ]


_T1_MEDIAN = float(pd.Series(list(rep.TABLE1.values())).median())  # the paper's own Table 1: 8 (its text says 11)


def _table1_median_note(lo: float, hi: float) -> str:
    """Where the median of the paper's own Table 1 falls against the book's interval."""
    return (f"; the paper's own Table 1 has median {_T1_MEDIAN:g} (its text says {rep.claim('dk_median').value:g}), "
            f"{'inside' if within(_T1_MEDIAN, lo, hi) else 'outside'} the book's interval")


def _one_step(runs: pd.DataFrame, cells: pd.DataFrame, r) -> str:
    """For a cell whose d_k* noise interval is one value (``r``: a :func:`cell_noise` row): the rung of D_K below its
    D_K* at h*, and what that says (the Table 1 caveat: a one-value interval can miss the paper by one refinement
    step of D_K; the paper does not list its D_K grid, so that is a likely reason, not a measured one)."""
    m, dm = int(r.m), int(r.d_model)
    c = cells[(cells.m == m) & (cells.d_model == dm)].iloc[0]
    dk, h = int(c["D_K_star"]), int(c["h_star"])
    at = runs[(runs.m == m) & (runs.d_model == dm) & (runs.h == h)]
    mean = at.groupby("D_K")["test_f1"].mean()
    below = mean[mean.index < dk]
    if not len(below):
        return ""
    n_ok = int(reaches_target(at[at.D_K == dk].groupby("seed")["test_f1"].mean()).sum())
    return (f"; at ({m}, {dm}) the rung below D_K* = {dk} (h* = {h}), D_K = {int(below.index[-1])}, has mean "
            f"F1 {below.iloc[-1]:.3f}, and D_K = {dk} reaches {F1_TARGET:g} on {n_ok} of {at.seed.nunique()} seeds: as "
            "for Table 1, a one-value interval can still miss the paper's d_k* by one refinement step of D_K; the "
            "paper does not list its D_K grid, so a coarser grid there is a likely reason, not a measured one")


def dk_rows(sb: SharedBase, b: str) -> list[ClaimRow]:
    """Median and range of d_k* = D_K*/h*, and Table 1 per cell, each on d_k*'s noise interval."""
    d = reached(sb.draws)
    if not len(d.cells):
        return [untestable(k, "no cell reached D_K*", b) for k in ("dk_median", "dk_range", "table1")]
    n = noise(d, lambda dk, h: np.median(dk / h, axis=0))
    v = noise_verdict(rep.claim("dk_median").value, n.value, n.lo, n.hi, n.lo99, n.hi99)
    rows = [
        ClaimRow(
            key="dk_median",
            book=f"{n.value:.3g} (n = {len(d.cells)})",
            interval=fmt_iv(n.lo, n.hi, 1),
            basis=b,
            verdict=Verdict(
                v.status,
                v.detail + _table1_median_note(n.lo, n.hi),
                v.near_miss,
                "paper_text" if v.status == "deviates" and within(_T1_MEDIAN, n.lo, n.hi) else v.cause,
            ),
            value=n.value,
            lo=n.lo,
            hi=n.hi,
        )
    ]
    per = cell_noise(d, "d_k_star")
    p_lo, p_hi = rep.claim("dk_range").value
    out = per[(per["hi"] < p_lo) | (per["lo"] > p_hi)]
    v = (
        Verdict("agrees", f"every cell's d_k* noise interval meets the paper's [{p_lo}, {p_hi}]")
        if not len(out)
        else Verdict(
            "deviates",
            f"{len(out)} of {len(per)} cells lie outside [{p_lo}, {p_hi}] across their noise interval: "
            + ", ".join(f"({r.m}, {r.d_model}): {r.value:.3g} [{r.lo:.3g}, {r.hi:.3g}]" for r in out.itertuples())
            + "".join(_one_step(sb.src.runs, d.cells, r) for r in out.itertuples() if r.lo == r.hi),
        )
    )
    rows.append(ClaimRow("dk_range", f"[{per['value'].min():.3g}, {per['value'].max():.3g}]",
                         f"[{per['lo'].min():.3g}, {per['hi'].max():.3g}]", b, v))
    t = table1(d.cells, per).dropna(subset=["agrees"])
    n_in = int(t["agrees"].astype(bool).sum())
    v = Verdict(
        "agrees" if n_in == len(t) else "deviates",
        f"the paper's d_k* lies in the book's per-cell noise interval in {n_in} of {len(t)} cells (Table 1 below)",
    )
    rows.append(
        ClaimRow("table1", f"{n_in} of {len(t)} cells match", "per cell: 95% noise interval of d_k*", b, v, float(n_in))
    )
    return rows


def single_head_never(sb: SharedBase, b: str) -> ClaimRow:
    """One head stays below mean F1 0.99 at the named cells: at its best tested budget, across the 95% t-interval."""
    key, wanted = "single_head_never", rep.claim("single_head_never").value
    s = curves(sb.src.runs[sb.src.runs["h"] == 1])
    have = {(int(m), int(d)) for m, d in s[["m", "d_model"]].itertuples(index=False)}
    miss = [c for c in wanted if tuple(c) not in have]
    if miss:
        return untestable(key, f"cells {miss} with one head not in these data", b)
    best = {c: s[(s.m == c[0]) & (s.d_model == c[1])].sort_values("mean").iloc[-1] for c in wanted}
    vs = [side_verdict(r["lo"], r["hi"], F1_TARGET, False, f"one head's best mean F1 at {c}", "95% t-interval")
          for c, r in best.items()]
    txt = ", ".join(
        f"({m}, {d}): best mean F1 {r['mean']:.2f} up to D_K = {int(s[(s.m == m) & (s.d_model == d)].D_K.max())}"
        for (m, d), r in best.items()
    )
    return ClaimRow(key, txt, ", ".join(f"[{r['lo']:.2f}, {r['hi']:.2f}]" for r in best.values()), b,
                    combined(vs, "; ".join(v.detail for v in vs)), float(max(r["mean"] for r in best.values())))


# fig1: a budget where no configuration's mean F1 reaches this is far from the F1 target (a description, not a cause:
# chance, an all-positive predictor, lies far lower)
_FAR_F1 = 0.5


def _paired_at(dk, diff, h: int) -> str:
    return f"D_K = {int(dk)}: {diff.words('h = 1', f'h = {h}')}"


def _corrected(dks, diffs, n_tests: int) -> str:
    """Which of the budgets ``dks`` hold their paired difference at the Bonferroni level 0.05 / ``n_tests`` (one
    paired test per shared budget); the others are nominal (p < 0.05 only)."""
    level = 0.05 / n_tests
    keep = [dk for dk in dks if diffs[dk].p < level]
    nominal = [dk for dk in dks if dk not in keep]
    said = (f"these are {n_tests} paired tests, one per budget: at the Bonferroni level 0.05/{n_tests} = {level:.2g} "
            + (f"D_K = {', '.join(str(int(dk)) for dk in keep)} holds" if keep else "none holds"))
    return said + (f", D_K = {', '.join(str(int(dk)) for dk in nominal)} is nominal" if nominal else "")


def fig1_one_head_worse(sb: SharedBase, b: str) -> ClaimRow:
    """At the Fig. 1 cell: one head worse than the best multi-head configuration at every budget both tested, each
    budget judged on paired seeds (:mod:`rgr.results.replication.seed_bootstrap`)."""
    key, (m, d) = "fig1_one_head_worse", rep.claim("fig1_one_head_worse").value
    runs = sb.src.runs
    cell = runs[(runs.m == m) & (runs.d_model == d)] if len(runs) else runs
    s = curves(cell) if len(cell) else pd.DataFrame()
    if not len(s) or not (s.h == 1).any():
        return untestable(key, f"cell ({m}, {d}) with one head not in these data", b)
    one = s[s.h == 1].set_index("D_K")
    multi = s[s.h > 1].sort_values("mean").groupby("D_K").last()
    shared = one.index.intersection(multi.index)
    diffs = {dk: paired_difference(by_seed(cell, "test_f1", 1, int(dk)),
                                   by_seed(cell, "test_f1", int(multi.loc[dk, "h"]), int(dk))) for dk in shared}
    worse = [dk for dk, pdiff in diffs.items() if pdiff.side() == "a lower"]
    gap = (multi.loc[shared, "mean"] - one.loc[shared, "mean"])
    better = [dk for dk in shared if diffs[dk].side() == "b lower"]  # one head above it, paired
    tied = [dk for dk in shared if dk not in worse and dk not in better]
    best_any = s.groupby("D_K")["mean"].max()
    far = all(best_any.loc[dk] < _FAR_F1 for dk in better + tied)
    at = lambda dks: ", ".join(_paired_at(dk, diffs[dk], int(multi.loc[dk, "h"])) for dk in dks)  # noqa: E731
    said = (f"one head is below the best multi-head configuration at {len(worse)} of {len(shared)} shared budgets "
            "on paired seeds (the 95% interval of the per-seed F1 difference below zero)"
            + (f"; one head beats it at {len(better)}: {at(better)}; {_corrected(better, diffs, len(shared))}"
               if better else "")
            + (f"; tied at {len(tied)}: {at(tied)}" if tied else "")
            + (f"; at these {len(better) + len(tied)} budgets every configuration's mean F1 is below {_FAR_F1:g}, far "
               f"from the F1 target {F1_TARGET:g}" if (better or tied) and far else "")
            + ("; why one head beats it there is unexplained" if better else ""))
    v = Verdict("agrees" if len(worse) == len(shared) else "deviates", said)
    return ClaimRow(key, f"largest gap {gap.max():.2f} F1 (D_K = {int(gap.idxmax())})",
                    f"paired: below at {len(worse)} of {len(shared)}", b, v, float(gap.max()))


def fig2_more_heads(sb: SharedBase, b: str) -> ClaimRow:
    """More heads as m doubles (d_model fixed) and as d_model halves (m fixed), over every neighbouring pair of cells
    with h*: each pair's change judged on the per-replicate difference of the two cells' h* (their seed draws are
    independent, so the difference's 95% percentile interval is its noise). Agrees when h* rises beyond that noise in
    at least one pair and falls beyond it in none (a flat pair, h* equal, neither supports nor contradicts)."""
    d = reached(sb.draws)
    at = {(int(m), int(dm)): i for i, (m, dm) in enumerate(d.cells[["m", "d_model"]].itertuples(index=False))}
    pairs = []
    for (m, dm), i in sorted(at.items()):
        for nxt in ((m * 2, dm), (m, dm // 2)):
            if nxt in at:  # nxt should need at least as many heads
                j = at[nxt]
                diff = d.h[j] - d.h[i]
                diff = diff[np.isfinite(diff)]
                lo, hi = np.percentile(diff, [2.5, 97.5]) if diff.size else (np.nan, np.nan)
                pairs.append((float(d.cells["h_star"].iloc[j] - d.cells["h_star"].iloc[i]), lo, hi))
    if not pairs:
        return untestable("fig2_more_heads", "no neighbouring cells with h*", b)
    up, flat, down = (sum(f(x) for x, _, _ in pairs) for f in (lambda x: x > 0, lambda x: x == 0, lambda x: x < 0))
    up_sig, down_sig = sum(lo > 0 for _, lo, _ in pairs), sum(hi < 0 for _, _, hi in pairs)
    v = Verdict(
        "agrees" if up_sig and not down_sig else "deviates",
        f"over {len(pairs)} neighbouring pairs h* rises in {up} ({up_sig} beyond the noise: the 95% interval of the "
        f"per-replicate difference above zero), is flat in {flat} and falls in {down} ({down_sig} beyond the noise)",
    )
    return ClaimRow("fig2_more_heads", f"rises in {up} of {len(pairs)} pairs ({up_sig} beyond the noise), flat in "
                    f"{flat}, falls in {down}", "95% interval of each pair's h* difference", b, v, float(up_sig))


def sec61_rows(sb: SharedBase) -> list[ClaimRow]:
    """Every Sec. 6.1 / App. A.2 claim, in the order of :data:`rgr.results.reported.CLAIMS`."""
    b = basis(sb.src)
    return (law_rows(sb, b) + [excluded_above(sb, b)] + heads_rows(sb, b) + dk_rows(sb, b)
            + [single_head_never(sb, b), fig1_one_head_worse(sb, b), fig2_more_heads(sb, b)])
