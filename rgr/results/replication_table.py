"""The verdict table of the chapter *Does it replicate?*: the extension claims (softmax, value channel,
GPT-2 block) and :func:`evaluate`, which reads every claim of :data:`rgr.results.reported.CLAIMS`.

The readers of Sec. 6.1, Fig. 4 and App. A.3 are in :mod:`rgr.results.replication_claims`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from . import reported as rep
from .permutation_sweeps import on_diagonal, with_cells_of
from .replication import Verdict
from .replication_claims import (
    ClaimRow,
    Source,
    _cells,
    _diag_rows,
    _dk_rows,
    _excluded_above,
    _fig1,
    _fig2,
    _heads_rows,
    _law_rows,
    _regular_rows,
    _single_head,
    _untestable,
    basis,
    diagonal_basis,
    seeds_per_point,
)
from .stats import summarize, t_interval

__all__ = ["evaluate", "claims_frame", "gpt2_testable", "CHAPTER_TITLES", "verdict_counts", "row_value", "fit_words", "LogBaseReading",
           "log_base_reading"]

CHAPTER_TITLES = {"permutation_sweeps": "Permutation sweeps", "denser_graphs": "Denser graphs", "softmax": "Softmax",
                  "value_channel": "Value channel", "gpt2_block": "GPT-2 block"}


def _advantage(row) -> bool:
    """A multi-head advantage in a cell: one head is not tied with h* at D_K* (or never reaches the target)."""
    return pd.isna(row.D_K_star_h1) or (pd.notna(row.h_lo) and int(row.h_lo) > 1)


def _softmax_rows(soft: Source, maxed: Source) -> list[ClaimRow]:
    """Multi-head advantage per softmax panel; the softmax D_K* against max-over-heads in the shared cells."""
    b = basis(soft)
    cells = _cells(soft)
    if not len(cells):
        return [_untestable(k, "no softmax runs", b) for k in ("softmax_advantage", "softmax_shift")]
    except_cell = rep.claim("softmax_advantage").value
    adv = {(int(r.m), int(r.d_model)): _advantage(r) for r in cells.itertuples()}
    wrong = [c for c, a in adv.items() if a == (c == tuple(except_cell))]
    shown = ", ".join(f"({m}, {d}): {'yes' if a else 'no'}" for (m, d), a in adv.items())
    missing = [] if tuple(except_cell) in adv else [f"the book has no ({except_cell[0]}, {except_cell[1]}) panel"]
    v = Verdict("agrees" if not wrong else "deviates",
                (f"as the paper in all {len(adv)} panels" if not wrong else f"unlike the paper in {wrong}")
                + f" (the book's preset has {len(adv)} of the paper's 4 panels)" + ("; " + missing[0] if missing else ""))
    rows = [ClaimRow("softmax_advantage", "advantage — " + shown, "h* tied range / one head's threshold", b, v)]
    both = cells.merge(_cells(maxed), on=["m", "d_model", "r"], suffixes=("_s", "_m")).dropna(subset=["D_K_star_s", "D_K_star_m"])
    if not len(both):
        return rows + [_untestable("softmax_shift", "no cell where both models reach the target", b)]
    larger = int((both.D_K_star_s > both.D_K_star_m).sum())
    apart = int((both.D_K_opt_s.astype(float) > both.D_K_cons_m.astype(float)).sum())
    opposite = int((both.D_K_cons_s.astype(float) < both.D_K_opt_m.astype(float)).sum())
    txt = ", ".join(f"({r.m}, {r.d_model}): {int(r.D_K_star_s)} vs {int(r.D_K_star_m)}" for r in both.itertuples())
    v = Verdict("agrees" if larger == len(both) and not opposite else "deviates",
                f"softmax needs more in {larger} of {len(both)} cells; beyond both thresholds' intervals in {apart}")
    return rows + [ClaimRow("softmax_shift", "D_K* softmax vs max — " + txt, "optimistic–conservative D_K*", b, v, float(larger))]


def _value_rows(val: Source) -> list[ClaimRow]:
    """E6 readings at m = 64 from the mean test MSE per (d_model, h, D_K) and its 95% interval."""
    b = basis(val)
    keys = ("value_d16", "value_d32_small", "value_d32_best")
    if not len(val.runs) or not {16, 32} <= set(val.runs.d_model) or 1 not in set(val.runs.h):
        return [_untestable(k, "the cells d_model = 16 and 32 with one head are not in these data", b) for k in keys]
    s = summarize(val.runs, ["d_model", "h", "D_K"], "test_mse")
    best = lambda d, hs: s[(s.d_model == d) & s.h.isin(hs)].sort_values("mean").iloc[0]  # noqa: E731
    one, many = best(16, [1]), best(16, [h for h in s.h.unique() if h >= rep.claim("value_d16").value])
    top1 = s[(s.d_model == 16) & (s.h == 1)].sort_values("D_K").iloc[-1]
    apart = one.lo > many.hi
    rows = [ClaimRow("value_d16", f"lowest MSE one head {one['mean']:.4f} (D_K = {int(one.D_K)}), h ≥ 4 {many['mean']:.4f} "
                     f"(h = {int(many.h)}): {one['mean'] / many['mean']:.1f}x", f"one head at the top rung: {top1['mean']:.4f}", b,
                     Verdict("agrees" if apart and top1["mean"] >= one["mean"] else "deviates",
                             f"one head stops improving at D_K = {int(one.D_K)} and its best error lies "
                             + ("above" if apart else "not clearly above") + f" the best with h ≥ 4 by {one['mean'] / many['mean']:.1f}x; "
                             "'sharply' is the paper's word, the book reports the factor"), one["mean"] / many["mean"])]
    h16 = rep.claim("value_d32_small").value
    g = s[s.d_model == 32].pivot_table(index="D_K", columns="h", values="mean")
    shared = g[[1, h16]].dropna() if h16 in g else pd.DataFrame()
    if not len(shared):
        rows.append(_untestable("value_d32_small", f"no budget with both h = 1 and h = {h16} at d_model = 32", b))
    else:
        d0 = int(shared.index.min())
        wins = shared[shared[1] < shared[h16]]
        rows.append(ClaimRow("value_d32_small", f"D_K = {d0}: h = 1 {shared.loc[d0, 1]:.4f} vs h = {h16} {shared.loc[d0, h16]:.4f}",
                             "—", b, Verdict("agrees" if shared.loc[d0, 1] < shared.loc[d0, h16] else "deviates",
                                             f"one head beats h = {h16} at {len(wins)} of {len(shared)} shared budgets, the smallest "
                                             f"{'included' if d0 in wins.index else 'not included'}")))
    hs = rep.claim("value_d32_best").value
    top, cand = best(32, list(s.h.unique())), best(32, list(hs))
    hs_txt = "{" + ", ".join(map(str, sorted(hs))) + "}"
    tied = cand["lo"] <= top["hi"]
    rows.append(ClaimRow("value_d32_best", f"lowest MSE: h = {int(top.h)} {top['mean']:.4f}; best of h ∈ {hs_txt}: h = {int(cand.h)} "
                         f"{cand['mean']:.4f}", f"[{top.lo:.4f}, {top.hi:.4f}] vs [{cand.lo:.4f}, {cand.hi:.4f}]", b,
                         Verdict("agrees" if int(top.h) in hs or tied else "deviates",
                                 f"the lowest error is at h = {int(top.h)}; h ∈ {hs_txt} is "
                                 + ("within its interval" if tied else "outside its interval")
                                 + f" (book's D_K ladder tops at {int(s[s.d_model == 32].D_K.max())})")))
    return rows


def gpt2_testable(runs: pd.DataFrame) -> str | None:
    """Why the E7 rows cannot test the paper's GPT-2 claims, or None when they can: GPT-2 embeddings
    and a compressive task (m >= 4 d_model; the paper's is 6144 / 768 = 8)."""
    if not len(runs):
        return "no GPT-2 block runs in these data"
    why = []
    if (runs["embedding_source"].str.contains("stand-in")).any():
        why.append("the embeddings are a seeded stand-in, not GPT-2's")
    m, d = int(runs["m"].max()), int(runs["d_model"].max())
    if m < 4 * d:
        why.append(f"m = {m} items against d_model = {d} is not compressive (m / d_model = {m / d:.2g}; the paper's is "
                   f"{rep.GPT2_M / rep.GPT2_D_MODEL:g}), so the capacity argument does not apply")
    if m != rep.GPT2_M or int(runs["ell"].max()) != rep.GPT2_ELL:
        why.append(f"the task has m = {m}, ell = {int(runs['ell'].max())} (paper: {rep.GPT2_M}, {rep.GPT2_ELL})")
    return "; ".join(why) if why else None


def _gpt2_rows(g: Source) -> list[ClaimRow]:
    """E7: h >= 2 near perfect (mean >= 0.95) at D_K 512; h = 1 seeds split at D_K >= 256; best h in {4, 8}."""
    b = basis(g)
    keys = ("gpt2_multi", "gpt2_single", "gpt2_best")
    why = gpt2_testable(g.runs)
    if why:
        return [_untestable(k, why + " (a GPU preset)", b) for k in keys]
    s = summarize(g.runs, ["h", "D_K"], "test_acc")
    at = s[(s.D_K == s.D_K.max()) & (s.h >= 2)]
    near = bool((at["mean"] >= 0.95).all())
    rows = [ClaimRow("gpt2_multi", f"D_K = {int(s.D_K.max())}: " + ", ".join(f"h = {int(r.h)}: {r.mean:.2f}" for r in at.itertuples()),
                     "—", b, Verdict("agrees" if near else "deviates", "'near perfect' read as mean accuracy >= 0.95"))]
    one = g.runs[(g.runs.h == 1) & (g.runs.D_K >= 256)]["test_acc"]
    up = one[one > 0.1]
    split = bool(len(up) and (one <= 0.1).any())
    mean, lo, hi = t_interval(up.to_numpy()) if len(up) else (float("nan"),) * 3
    rows.append(ClaimRow("gpt2_single", f"{int((one <= 0.1).sum())} of {len(one)} seeds ≤ 0.1; the rest {mean:.2f}",
                         "—" if not len(up) else f"[{lo:.2f}, {hi:.2f}]", b,
                         Verdict("agrees" if split and lo <= rep.claim("gpt2_single").value <= hi else "deviates",
                                 "split " + ("seen" if split else "not seen") + "; the non-collapsed mean against the paper's 0.81")))
    bests = s.loc[s.groupby("D_K")["mean"].idxmax()]
    inside = int(bests.h.isin(rep.claim("gpt2_best").value).sum())
    rows.append(ClaimRow("gpt2_best", ", ".join(f"D_K = {int(r.D_K)}: h = {int(r.h)}" for r in bests.itertuples()), "—", b,
                         Verdict("agrees" if inside > len(bests) / 2 else "deviates",
                                 f"the best h is 4 or 8 at {inside} of {len(bests)} budgets")))
    return rows


def evaluate(sources: dict[str, Source]) -> list[ClaimRow]:
    """Every claim of :data:`rgr.results.reported.CLAIMS`, in its order (slopes once per log base).

    ``sources``: base, lambda8, regular, softmax, value, gpt2 (each a :class:`Source`).
    """
    need = {"base", "lambda8", "regular", "softmax", "value", "gpt2"}
    if need - set(sources):
        raise ValueError(f"sources lacks {sorted(need - set(sources))}")
    base = sources["base"]
    b = basis(base)
    cells = _cells(base)
    rows: list[ClaimRow] = []
    if len(cells):
        rows += _law_rows(cells, b, int(base.runs["h"].max()), seeds_per_point(base.runs)) + [_excluded_above(cells, b)]
        rows += _heads_rows(cells, base, b) + _dk_rows(cells, b)
        rows += [_single_head(cells, base, b), _fig1(base, b), _fig2(cells, b)]
    lam = sources["lambda8"]
    on_diag = on_diagonal(base.runs, 8)
    # a cell in both tables takes its runs from lambda8 alone, as in the permutation-sweeps chapter
    diag_runs = with_cells_of(lam.runs, on_diag) if len(lam.runs) else on_diag
    diag = _cells(Source("lambda8", lam.preset, diag_runs.reset_index(drop=True)))
    rows += _diag_rows(diag, diagonal_basis(base, lam)) if len(diag) else []
    rows += _regular_rows(sources["regular"], basis(sources["regular"]))
    rows += _softmax_rows(sources["softmax"], base) + _value_rows(sources["value"]) + _gpt2_rows(sources["gpt2"])
    return rows


def _claim_of(key: str) -> rep.Reported:
    for suffix in ("_ln", "_log2"):
        if key.endswith(suffix):
            return rep.claim(key[: -len(suffix)])
    return rep.claim(key)


def claims_frame(rows: list[ClaimRow], link: bool = True) -> pd.DataFrame:
    """The verdict table: one line per row, claims missing from ``rows`` (no data at all) marked not testable."""
    by_key = {}
    for r in rows:
        by_key.setdefault(_claim_of(r.key).key, []).append(r)
    out = []
    for c in rep.CLAIMS:
        for r in by_key.get(c.key, [ClaimRow(c.key, "—", "—", "—", Verdict("not testable", "no data for this claim"))]):
            suffix = {"_ln": " [log = ln]", "_log2": " [log = log2]"}.get(r.key[len(c.key):], "")
            title = CHAPTER_TITLES.get(c.chapter, c.chapter)
            out.append(dict(key=r.key, section=c.section, claim=c.claim + suffix, paper=c.paper, book=r.book, interval=r.interval,
                            basis=r.basis, verdict=r.verdict.status, why=r.verdict.detail,
                            chapter=f'<a href="{c.chapter}.html">{title}</a>' if link else title))
    return pd.DataFrame(out)


def verdict_counts(rows: list[ClaimRow]) -> dict[str, int]:
    """How many rows of the verdict table have each status (every status present, 0 when none)."""
    from .replication import STATUSES

    return {s: sum(r.verdict.status == s for r in rows) for s in STATUSES}


def row_value(rows: list[ClaimRow], key: str, digits: int = 2) -> str:
    """The book's number of one row as prose: "1.21 (95% interval 1.01–1.26)", or "not testable here"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable" or not math.isfinite(found[0].value):
        return "not testable here"
    r = found[0]
    if math.isfinite(r.lo) and math.isfinite(r.hi):
        return f"{r.value:.{digits}f} (95% interval {r.lo:.{digits}f}–{r.hi:.{digits}f})"
    return f"{r.value:.{digits}f}"


def fit_words(rows: list[ClaimRow], key: str = "law_r2_pre") -> str:
    """How the book's R² of a fit reads against the paper's, for the start of a sentence:
    "The line itself replicates" (the paper's value in the book's interval), "The line is looser than the
    paper's" / "... tighter ..." (outside it), or "The line's R² cannot be compared here"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable" or not math.isfinite(found[0].value):
        return "The line's R² cannot be compared here"
    if found[0].verdict.status == "agrees":
        return "The line itself replicates"
    return f"The line is {'looser' if found[0].value < rep.claim(key).value else 'tighter'} than the paper's"


@dataclass(frozen=True)
class LogBaseReading:
    """Which reading of the paper's "log" its constant agrees with, per fit (``all`` / ``pre`` cells).

    ``inside[fit]``: the bases whose bootstrap interval of the book's slope holds the paper's constant;
    ``nearer[fit]``: the base whose book slope is closer to it in ratio (|ln(book / paper)|); None without data.
    """

    inside: dict[str, tuple[str, ...]]
    nearer: dict[str, str | None]

    def words(self, fit: str) -> str:
        """A phrase for prose, e.g. "log2 only", "neither base (log2 is nearer)", "not testable here"."""
        if self.nearer.get(fit) is None:
            return "not testable here"
        ins = self.inside[fit]
        if len(ins) == 2:
            return "both bases"
        return f"{ins[0]} only" if ins else f"neither base ({self.nearer[fit]} is nearer)"


def log_base_reading(rows: list[ClaimRow]) -> LogBaseReading:
    """:class:`LogBaseReading` from the rows law_slope_{all,pre}_{ln,log2}."""
    by = {r.key: r for r in rows}
    inside, nearer = {}, {}
    for fit in ("all", "pre"):
        paper = rep.claim(f"law_slope_{fit}").value
        got = {b: by.get(f"law_slope_{fit}_{b}") for b in ("ln", "log2")}
        got = {b: r for b, r in got.items() if r is not None and r.verdict.status != "not testable"}
        inside[fit] = tuple(b for b, r in got.items() if r.verdict.status == "agrees")
        nearer[fit] = min(got, key=lambda b: abs(math.log(got[b].value / paper))) if got else None
    return LogBaseReading(inside, nearer)
