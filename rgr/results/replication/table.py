"""The verdict table of the chapter *Does it replicate?*: the extension claims (softmax, value channel,
GPT-2 block) and :func:`evaluate`, which reads every claim of :data:`rgr.results.replication.reported.CLAIMS` once.

The readers of Sec. 6.1 are in :mod:`rgr.results.replication.sec61`, those of Fig. 4 and App. A.3 in
:mod:`rgr.results.replication.fig4`. Experiments compared with each other (the diagonal's two tables, softmax against
max-over-heads, every configuration tested) are read at one preset (:data:`JOINT`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import numpy as np
import pandas as pd

from ..permutation_sweeps import with_cells_of
from ..stats import summarize, t_interval
from . import reported as rep
from .fig4 import diag_rows, regular_rows
from .paper_arithmetic import ArithmeticCheck, table1_checks
from .sec61 import ClaimRow, SharedBase, Source, _untestable, basis, cutoffs, sec61_rows
from .seed_bootstrap import Draws, cell_noise, seed_draws
from .value_decision import deciding_runs, long_basis
from .verdicts import LAW_BASE, STATUSES, Verdict, cause_of, verdict_label

__all__ = ["evaluate", "complete_rows", "claims_frame", "gpt2_testable", "CHAPTER_TITLES", "verdict_counts", "near_misses", "row_value",
           "fit_words", "base_words", "JOINT", "every_configuration", "arithmetic"]

CHAPTER_TITLES = {"permutation_sweeps": "Permutation sweeps", "denser_graphs": "Denser graphs", "softmax": "Softmax",
                  "value_channel": "Value channel", "gpt2_block": "GPT-2 block"}
# experiments read together at one preset, per comparison: the diagonal's cells, softmax against max-over-heads,
# and every configuration the book tested with the max-over-heads model on permutation graphs. "shift" is the
# softmax chapter's own group (softmax, linear, base read together), so both softmax rows read exactly the rows that
# chapter shows: one D_K* per cell and model in the book, whichever preset the group resolves to.
JOINT: dict[str, tuple[str, ...]] = {"diagonal": ("base", "lambda8"), "shift": ("softmax", "linear", "base"),
                                     "every": ("base", "lambda8", "lambda32")}


@lru_cache(maxsize=1)
def arithmetic() -> tuple[ArithmeticCheck, ...]:
    """:func:`rgr.results.replication.paper_arithmetic.table1_checks`, computed once (it depends on the paper's numbers only)."""
    return tuple(table1_checks())


def _advantage(d: Draws) -> dict[tuple[int, int], str]:
    """Per cell, whether one head needs a larger budget than D_K* (a multi-head advantage; never reaching the target
    counts as larger): "yes" when it does in the cell's own reading and in at least 97.5% of the seed replicates,
    "no" when it does in neither the reading nor more than 2.5% of them, "undecided" otherwise."""
    out = {}
    for i, r in enumerate(d.cells.itertuples()):
        if pd.isna(r.D_K_star):
            continue
        more = np.where(np.isnan(d.dk1[i]), True, d.dk1[i] > d.dk[i])[~np.isnan(d.dk[i])]
        own = pd.isna(r.D_K_star_h1) or r.D_K_star_h1 > r.D_K_star
        share = float(more.mean()) if more.size else math.nan
        out[(int(r.m), int(r.d_model))] = ("yes" if own and share >= 0.975 else "no" if not own and share <= 0.025 else "undecided")
    return out


def _softmax_rows(soft: Source, pair: dict[str, Source]) -> list[ClaimRow]:
    """Multi-head advantage per softmax panel (:func:`_advantage`): "yes" everywhere but at the paper's excepted
    panel, "no" there; the softmax D_K* against max-over-heads in the shared cells. Both read the softmax chapter's
    group (``pair``: softmax and base at one preset) where it has softmax runs, ``soft`` otherwise."""
    soft = pair.get("softmax", soft) if len(pair.get("softmax", soft).runs) else soft
    b = basis(soft)
    if not len(soft.runs):
        return [_untestable(k, "no softmax runs", b) for k in ("softmax_advantage", "softmax_shift")]
    adv = _advantage(seed_draws(soft.runs))
    except_cell = tuple(rep.claim("softmax_advantage").value)
    wrong = [c for c, a in adv.items() if a == ("yes" if c == except_cell else "no")]
    open_ = [c for c, a in adv.items() if a == "undecided"]
    shown = ", ".join(f"({m}, {d_}): {a}" for (m, d_), a in adv.items())
    status = "deviates" if wrong else "not testable" if open_ else "agrees"
    cause = "undecided" if status == "not testable" else ""
    said = (f"unlike the paper in {wrong}" if wrong else f"undecided by the seeds' noise in {open_}" if open_ else
            f"as the paper in all {len(adv)} panels")
    said += f" (the book's preset has {len(adv)} of the paper's 4 panels)"
    if except_cell not in adv:
        said += f"; the book has no {except_cell} panel"
    rows = [ClaimRow("softmax_advantage", "advantage — " + shown, "one head's threshold above D_K* in ≥ 97.5% of seed replicates", b,
                     Verdict(status, said, cause=cause))]
    return rows + [_shift(pair["softmax"], pair["base"])]


def _shift(soft: Source, maxed: Source) -> ClaimRow:
    """Softmax's D_K* above max-over-heads' in every shared cell, none the other way beyond both noise intervals."""
    key = "softmax_shift"
    b = f"softmax {basis(soft)}; max-over-heads {basis(maxed)}"
    if soft.preset != maxed.preset:
        return _untestable(key, f"not comparable yet: softmax is read at {soft.preset}, max-over-heads at {maxed.preset}", b,
                           "presets")
    if not len(soft.runs) or not len(maxed.runs):
        return _untestable(key, "softmax or max-over-heads runs missing at this preset", b)
    ns, nm = (cell_noise(seed_draws(s.runs), "D_K_star").dropna(subset=["value"]) for s in (soft, maxed))
    both = ns.merge(nm, on=["m", "d_model", "r"], suffixes=("_s", "_m"))
    if not len(both):
        return _untestable(key, "no cell where both models reach the target", b)
    larger = int((both.value_s > both.value_m).sum())
    apart = int((both.lo_s > both.hi_m).sum())
    opposite = int((both.hi_s < both.lo_m).sum())
    txt = ", ".join(f"({r.m}, {r.d_model}): {int(r.value_s)} vs {int(r.value_m)}" for r in both.itertuples())
    shared = maxed.runs.merge(both[["m", "d_model"]], on=["m", "d_model"])
    cut = (f"; cutoffs: softmax {cutoffs(soft.runs)}, max-over-heads {cutoffs(shared)} steps (the protocol's, as the paper's)"
           + ("; more steps could only lower max-over-heads' D_K*, so its shorter cutoff does not make the shift"
              if shared["max_steps"].max() <= soft.runs["max_steps"].min() else ""))
    v = Verdict("agrees" if larger == len(both) and not opposite else "deviates",
                f"softmax needs more in {larger} of {len(both)} cells; beyond both 95% noise intervals in {apart}" + cut)
    return ClaimRow(key, "D_K* softmax vs max — " + txt, "95% noise intervals of D_K*", b, v, float(larger))


def _unsettled(runs: pd.DataFrame, d_model: int, h: int, D_K: int) -> str | None:
    """Why the mean test MSE at (d_model, h, D_K) may still fall: the point is the top of its head count's D_K ladder
    (its minimum over budgets is not bracketed), or runs there hit the step cutoff (under E6's stopping rule, still
    improving when cut). None when neither."""
    g = runs[(runs.d_model == d_model) & (runs.h == h)]
    at = g[g.D_K == D_K]
    why = []
    if D_K >= int(g.D_K.max()):
        why.append(f"D_K = {D_K} is the top of the ladder")
    cut = int((at["stop_reason"] == "cutoff").sum()) if "stop_reason" in at else 0
    if cut:
        why.append(f"{cut} of {len(at)} runs hit the {int(at['max_steps'].max()):,}-step cutoff still improving")
    return f"h = {h}: " + " and ".join(why) if why else None


def _value_rows(val: Source, long: Source | None = None) -> list[ClaimRow]:
    """E6 readings at m = 64 from the mean test MSE per (d_model, h, D_K) and its 95% t-interval. A comparison is
    undecided (not testable) when the point that could still overtake is unsettled (:func:`_unsettled`).
    ``long``: the decision run ``value_long``; its rows at d_model = 32 decide value_d32_best when its table is complete
    (:func:`rgr.results.replication.value_decision.deciding_runs`), ``val``'s otherwise."""
    b = basis(val)
    keys = ("value_d16", "value_d32_small", "value_d32_best")
    if not len(val.runs) or not {16, 32} <= set(val.runs.d_model) or 1 not in set(val.runs.h):
        return [_untestable(k, "the cells d_model = 16 and 32 with one head are not in these data", b) for k in keys]
    s = summarize(val.runs, ["d_model", "h", "D_K"], "test_mse")
    best = lambda d, hs: s[(s.d_model == d) & s.h.isin(hs)].sort_values("mean").iloc[0]  # noqa: E731
    one, many = best(16, [1]), best(16, [h for h in s.h.unique() if h >= rep.claim("value_d16").value])
    apart = one.lo > many.hi
    open_ = _unsettled(val.runs, 16, 1, int(one.D_K))  # the plateau is the claim: one head's best must be settled
    head = (f"lowest MSE one head {one['mean']:.4f} (D_K = {int(one.D_K)}), h ≥ 4 {many['mean']:.4f} (h = {int(many.h)}): "
            f"{one['mean'] / many['mean']:.1f}x")
    iv = f"[{one.lo:.4f}, {one.hi:.4f}] vs [{many.lo:.4f}, {many.hi:.4f}]"
    rows = [ClaimRow("value_d16", head, iv, b, Verdict("not testable", f"undecided at this cutoff: {open_}", cause="unsettled") if open_ else
                     Verdict("agrees" if apart else "deviates",
                             f"one head's error is lowest at D_K = {int(one.D_K)}, below the top of its ladder, and lies "
                             + ("above" if apart else "not clearly above") + f" the best with h ≥ 4 by {one['mean'] / many['mean']:.1f}x "
                             "(95% t-intervals); 'sharply' is the paper's word, the book reports the factor"), one["mean"] / many["mean"])]
    rows.append(_d32_small(s, val.runs, b))
    decide = deciding_runs(long, 32)
    if decide is None:
        rows.append(_d32_best(s, val.runs, b, best))
    else:
        s_long = summarize(decide, ["d_model", "h", "D_K"], "test_mse")
        best_long = lambda d, hs: s_long[(s_long.d_model == d) & s_long.h.isin(hs)].sort_values("mean").iloc[0]  # noqa: E731
        rows.append(_d32_best(s_long, decide, long_basis(long, decide), best_long))
    return rows


def _d32_small(s: pd.DataFrame, runs: pd.DataFrame, b: str) -> ClaimRow:
    """d_model = 32: one head's mean MSE below h = 16's at the smallest budget both tested."""
    h16 = rep.claim("value_d32_small").value
    g = s[s.d_model == 32].pivot_table(index="D_K", columns="h", values="mean")
    shared = g[[1, h16]].dropna() if h16 in g else pd.DataFrame()
    if not len(shared):
        return _untestable("value_d32_small", f"no budget with both h = 1 and h = {h16} at d_model = 32", b)
    d0 = int(shared.index.min())
    wins = shared[shared[1] < shared[h16]]
    loser = h16 if shared.loc[d0, 1] < shared.loc[d0, h16] else 1
    open_ = _unsettled(runs, 32, loser, d0)
    book = f"D_K = {d0}: h = 1 {shared.loc[d0, 1]:.4f} vs h = {h16} {shared.loc[d0, h16]:.4f}"
    if open_:
        return ClaimRow("value_d32_small", book, "—", b, Verdict("not testable", f"undecided at this cutoff: {open_}",
                                                                  cause="unsettled"))
    return ClaimRow("value_d32_small", book, "—", b, Verdict("agrees" if loser == h16 else "deviates",
                    f"one head beats h = {h16} at {len(wins)} of {len(shared)} shared budgets, the smallest "
                    f"{'included' if d0 in wins.index else 'not included'}; the higher error there (h = {loser}) is settled"))


def _d32_best(s: pd.DataFrame, runs: pd.DataFrame, b: str, best) -> ClaimRow:
    """d_model = 32: the lowest mean MSE over every (h, D_K) is at h in {4, 8}, or h in {4, 8} is within its 95%
    t-interval; undecided when the lowest point or its rival across the claim is unsettled."""
    hs = rep.claim("value_d32_best").value
    top, cand = best(32, list(s.h.unique())), best(32, list(hs))
    others = [h for h in s[s.d_model == 32].h.unique() if h not in hs]
    rival = best(32, others) if int(top.h) in hs and others else cand
    hs_txt = "{" + ", ".join(map(str, sorted(hs))) + "}"
    tied = cand["lo"] <= top["hi"]
    book = f"lowest MSE: h = {int(top.h)} {top['mean']:.4f}; best of h ∈ {hs_txt}: h = {int(cand.h)} {cand['mean']:.4f}"
    iv = f"[{top.lo:.4f}, {top.hi:.4f}] vs [{cand.lo:.4f}, {cand.hi:.4f}]"
    open_ = [w for w in (_unsettled(runs, 32, int(top.h), int(top.D_K)), _unsettled(runs, 32, int(rival.h), int(rival.D_K))) if w]
    if open_:
        return ClaimRow("value_d32_best", book, iv, b, Verdict("not testable", "undecided at this cutoff: " + "; ".join(open_)
                        + f" — the errors were still falling where the comparison is made; a longer cutoff and a D_K ladder past "
                        f"{int(s[s.d_model == 32].D_K.max())} would decide it", cause="unsettled"))
    return ClaimRow("value_d32_best", book, iv, b, Verdict("agrees" if int(top.h) in hs or tied else "deviates",
                    f"the lowest error is at h = {int(top.h)}; h ∈ {hs_txt} is " + ("within its 95% t-interval" if tied else
                    "outside its 95% t-interval")))


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
        return [_untestable(k, why + " (a GPU preset)", b, "not_the_task" if len(g.runs) else "no_data") for k in keys]
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


def every_configuration(group: dict[str, Source]) -> tuple[Draws | None, str]:
    """Seed draws of every configuration the book tested with max-over-heads on permutation graphs (``group``: base,
    lambda8, lambda32 at one preset; a cell in several tables takes the base grid's runs) and what they are; None and
    the reason when the tables are at different presets or empty."""
    have = {n: s for n, s in group.items() if len(s.runs)}
    if not have:
        return None, "no runs"
    presets = {s.preset for s in have.values()}
    if len(presets) > 1:
        return None, "not read: the tables are at different presets (" + ", ".join(f"{n} {s.preset}" for n, s in have.items()) + ")"
    base = have.get("base")
    others = [s.runs for n, s in have.items() if n != "base"]
    extra = pd.concat(others, ignore_index=True) if others else None
    runs = base.runs if extra is None else (extra if base is None else with_cells_of(base.runs, extra))
    runs = runs.reset_index(drop=True)
    return seed_draws(runs), f"{presets.pop()}: {', '.join(have)}; cutoff {cutoffs(runs)} steps"


def evaluate(sources: dict[str, Source], joint: dict[str, dict[str, Source]] | None = None,
             checks: tuple[ArithmeticCheck, ...] | None = None) -> list[ClaimRow]:
    """Every claim of :data:`rgr.results.replication.reported.CLAIMS`, once each, in its order.

    ``sources``: base, lambda8, regular, softmax, value, gpt2 (each a :class:`Source`; lambda32 and value_long
    optional), each at its own preset. ``joint``: per comparison of :data:`JOINT`, its experiments read at one preset; where missing, the
    ``sources`` themselves (a comparison across presets is then not read). ``checks``: the Table 1 arithmetic
    (computed when None).
    """
    need = {"base", "lambda8", "regular", "softmax", "value", "gpt2"}
    if need - set(sources):
        raise ValueError(f"sources lacks {sorted(need - set(sources))}")
    joint = joint or {}

    def group(name: str) -> dict[str, Source]:
        return joint.get(name) or {n: sources[n] for n in JOINT[name] if n in sources}

    base = sources["base"]
    rows: list[ClaimRow] = []
    at = lambda new, preset: [replace(r, preset=preset) for r in new]  # noqa: E731
    if len(base.runs):
        every, said = every_configuration(group("every"))
        rows += at(sec61_rows(SharedBase(base, seed_draws(base.runs), every, said, list(checks or arithmetic()))), base.preset)
    diag, shift = group("diagonal"), group("shift")
    rows += at(diag_rows(diag["base"], diag["lambda8"]), "/".join(sorted({diag["base"].preset, diag["lambda8"].preset})))
    rows += at(regular_rows(sources["regular"]), sources["regular"].preset)
    soft = shift.get("softmax", sources["softmax"])
    rows += at(_softmax_rows(sources["softmax"], shift), soft.preset if len(soft.runs) else sources["softmax"].preset)
    long = sources.get("value_long")
    decided = {"value_d32_best": long.preset} if deciding_runs(long, 32) is not None else {}
    rows += [replace(r, preset=decided.get(r.key, sources["value"].preset)) for r in _value_rows(sources["value"], long)]
    rows += at(_gpt2_rows(sources["gpt2"]), sources["gpt2"].preset)
    return rows


def complete_rows(rows: list[ClaimRow]) -> list[ClaimRow]:
    """One row per claim of :data:`rgr.results.replication.reported.CLAIMS`, in its order; a claim missing from ``rows`` (no data
    at all) is marked not testable. Two rows for one claim, or a row of no claim, are an error."""
    by_key: dict[str, ClaimRow] = {}
    for r in rows:
        rep.claim(r.key)  # a KeyError for a row of no claim
        if r.key in by_key:
            raise ValueError(f"two rows for the claim {r.key!r}: one row per claim")
        by_key[r.key] = r
    return [by_key.get(c.key, ClaimRow(c.key, "—", "—", "—", Verdict("not testable", "no data for this claim", cause="no_data")))
            for c in rep.CLAIMS]


def claims_frame(rows: list[ClaimRow], link: bool = True) -> pd.DataFrame:
    """The verdict table as a frame: one line per claim (:func:`complete_rows`), with its verdict in words
    (:func:`rgr.results.replication.verdicts.verdict_label`) and its cause (:func:`rgr.results.replication.verdicts.cause_of`)."""
    out = []
    for r in complete_rows(rows):
        c = rep.claim(r.key)
        title = CHAPTER_TITLES.get(c.chapter, c.chapter)
        out.append(dict(key=r.key, section=c.section, claim=c.claim, paper=c.paper, book=r.book, interval=r.interval,
                        cells=r.cells, basis=r.basis, verdict=verdict_label(r), cause=cause_of(r), why=r.verdict.detail,
                        chapter=f'<a href="{c.chapter}.html">{title}</a>' if link else title))
    return pd.DataFrame(out)


def verdict_counts(rows: list[ClaimRow]) -> dict[str, int]:
    """How many rows of the verdict table have each status (every status present, 0 when none)."""
    return {s: sum(r.verdict.status == s for r in rows) for s in STATUSES}


def near_misses(rows: list[ClaimRow]) -> int:
    """How many deviations are near misses (the paper's value inside the book's 99% noise interval)."""
    return sum(r.verdict.near_miss for r in rows)


def row_value(rows: list[ClaimRow], key: str, digits: int = 2, reading: str | None = None) -> str:
    """The book's number of one row as prose: "1.21 (95% noise interval 1.01–1.26)", or "not testable here";
    ``reading``: the row's :class:`~rgr.results.replication.sec61.Reading` whose name starts with it instead."""
    found = [r for r in rows if r.key == key]
    if not found or not math.isfinite(found[0].value):
        return "not testable here"
    r = found[0]
    if reading is not None:
        got = [x for x in r.readings if x.name.startswith(reading)]
        if not got:
            return "not testable here"
        value, lo, hi = got[0].value, got[0].lo, got[0].hi
    else:
        value, lo, hi = r.value, r.lo, r.hi
    if math.isfinite(lo) and math.isfinite(hi):
        return f"{value:.{digits}f} (95% noise interval {lo:.{digits}f}–{hi:.{digits}f})"
    return f"{value:.{digits}f}"


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


def base_words(rows: list[ClaimRow], key: str) -> str:
    """For a law slope row: where the paper's constant lies under the law's base (the verdict's) and under the other
    (a reading), e.g. "outside the book's noise interval with ln (the verdict's base), inside it with log2"."""
    found = [r for r in rows if r.key == key]
    if not found or found[0].verdict.status == "not testable":
        return "not testable here"
    r = found[0]
    side = {"agrees": "inside", "deviates": "outside"}[r.verdict.status]
    other = [x for x in r.readings if x.name.startswith("with ")]
    said = f"{side} the book's noise interval with {LAW_BASE} (the verdict's base)"
    if other and other[0].holds is not None:
        said += f", {'inside' if other[0].holds else 'outside'} it {other[0].name}"
    return said
