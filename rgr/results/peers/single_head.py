"""One head's capacity on the law's axis (chapter *the law beside other capacity results*): the head sweep's h = 1
rows, pal's associative memory (table ``pal``) and one head's d_k past the context length (table ``dk_saturation``).

**One head of the head sweep** (:func:`one_head`): one unconstrained d x d score matrix on frozen random embeddings,
the trainable part of pal's memory.

**pal** (its bisection per line, ``N_pass`` below ``N_fail``: :mod:`rgr.experiments.peers.reimplemented`). On the
law's axis x = d^2 / (N ln N) the capacity sits at ``x_pass`` = x(N_pass) (the true crossing lies between x(N_fail)
and it). Under the law's form x at capacity is the same at every d; a power law x* ∝ d^k through the lines measures
how far it moves (k = 0 under the law).

**Does one head's capacity stop growing in d_k at the context length ell?** (the design and what each form
predicts: :mod:`rgr.experiments.peers.engine_sweeps`.) Two readings, each a paired difference over seeds with its
95% t-interval: along d_k at a fixed ell (:func:`past_ell`), F1 at the largest d_k tested minus F1 at d_k = ell;
along ell at a fixed d_k (:func:`ell_effect`), F1 at the largest ell minus F1 at the smallest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...experiments.peers.reimplemented import PASS
from ...protocol import law_x
from ..stats import loglog_slope, paired_t, summarize
from .sweep import LEVELS, curve


def one_head(runs: pd.DataFrame) -> pd.DataFrame:
    """The h = 1 rows of the head sweep per cell (one unconstrained d x d score matrix on frozen random
    embeddings: the trainable part of the pal associative memory): x, mean F1 and its interval."""
    c = curve(runs)
    return c[c.h == 1][["m", "d_model", "d_over_ln_m", "x", "mean", "lo", "hi", "n"]].reset_index(drop=True)


@dataclass(frozen=True)
class _OneHeadFinding:
    """Of the one-head rows (:func:`one_head`): cells, those whose mean F1 reaches the protocol's,
    the best mean F1 and the largest x (None without rows)."""

    n_one: int
    n_one_pass: int
    one_best: float | None
    one_x_max: float | None


def one_head_finding(one: pd.DataFrame) -> _OneHeadFinding:
    """:class:`_OneHeadFinding` of :func:`one_head`'s table."""
    empty = one.empty
    return _OneHeadFinding(n_one=len(one), n_one_pass=int((one["mean"] >= LEVELS[1]).sum()),
                        one_best=None if empty else float(one["mean"].max()),
                        one_x_max=None if empty else float(one.x.max()))


# ----------------------------------------------------------------------------- pal's memory (table pal)

_LINE = ["d", "steps", "optimizer", "lr", "seed"]
_MAIN = ("adam", 0.1)  # the optimiser and learning rate of the chapter's main lines


def capacities(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per line: N_pass, N_fail, x_pass, x_fail and the runs it took (None where an end is missing)."""
    if runs.empty:
        raise ValueError("runs: no rows of table pal")
    rows = []
    runs = runs.assign(optimizer=runs["optimizer"].fillna("adam") if "optimizer" in runs else "adam")
    for (d, steps, opt, lr, seed), g in runs.groupby(_LINE):
        fails = g.loc[g.accuracy < PASS, "N"]
        n_fail = int(fails.min()) if len(fails) else None
        passes = g.loc[(g.accuracy >= PASS) & ((g.N < n_fail) if n_fail is not None else True), "N"]
        n_pass = int(passes.max()) if len(passes) else None
        rows.append(dict(d=int(d), steps=int(steps), optimizer=opt, lr=float(lr), seed=int(seed), N_pass=n_pass,
                         N_fail=n_fail,
                         x_pass=law_x(1, d, d, n_pass) if n_pass and n_pass > 1 else None,
                         x_fail=law_x(1, d, d, n_fail) if n_fail else None, runs=len(g)))
    return pd.DataFrame(rows)


def main_lines(caps: pd.DataFrame) -> pd.DataFrame:
    """The lines of :func:`capacities` trained with the main optimiser and learning rate (:data:`_MAIN`)."""
    return caps[(caps.optimizer == _MAIN[0]) & (caps.lr == _MAIN[1])]


def capacity_table(caps: pd.DataFrame) -> pd.DataFrame:
    """Per (d, steps): the seeds, N_pass and x_pass over them (mean, min, max), N_pass / d^2."""
    g = caps.dropna(subset=["N_pass"]).groupby(["d", "steps"])
    out = g.agg(seeds=("seed", "count"), N_mean=("N_pass", "mean"), N_min=("N_pass", "min"), N_max=("N_pass", "max"),
                x_mean=("x_pass", "mean"), x_min=("x_pass", "min"), x_max=("x_pass", "max")).reset_index()
    out["N_per_d2"] = out.N_mean / out.d**2
    return out


def lr_table(caps: pd.DataFrame) -> pd.DataFrame:
    """Per width d and (optimiser, learning rate) at the main step budget: seeds, the mean largest N stored, x* at
    it, and N against the main setting's on the same seeds (mean ratio, min, max); widths run in one setting only
    are left out."""
    main_steps = caps.steps.min()
    c = caps[(caps.steps == main_steps)].dropna(subset=["N_pass"])
    ref = c[(c.optimizer == _MAIN[0]) & (c.lr == _MAIN[1])][["d", "seed", "N_pass"]]
    both = c.merge(ref, on=["d", "seed"], suffixes=("", "_main"))
    both = both[both.d.isin(both[(both.optimizer != _MAIN[0]) | (both.lr != _MAIN[1])].d)]
    both = both.assign(ratio=both.N_pass / both.N_pass_main)
    out = both.groupby(["d", "optimizer", "lr"]).agg(
        seeds=("seed", "count"), N_mean=("N_pass", "mean"), x_mean=("x_pass", "mean"), N_ratio=("ratio", "mean"),
        ratio_min=("ratio", "min"), ratio_max=("ratio", "max")).reset_index()
    return out.sort_values(["d", "optimizer", "lr"], ascending=[True, True, False]).reset_index(drop=True)


@dataclass(frozen=True)
class PalReading:
    """What the chapter says of the ``pal`` table (fields glued by name)."""

    seeds: str  # the seeds of the lines read, e.g. "0, 1, 2"
    n_seeds: int
    steps: int  # the main budget
    d_min: int
    d_max: int
    n_d: int  # widths read
    N_at_d_min: float  # mean N_pass over seeds
    N_at_d_max: float
    x_at_d_min: float  # mean x_pass over seeds
    x_at_d_max: float
    x_spread: float  # max / min over widths of the mean x_pass
    x_exponent: float  # k of x* ∝ d^k, least squares in log-log over every line (0 under the law)
    N_exponent: float  # a of N* ∝ d^a (a bit under 2 under the law: N ln N ∝ d^2)
    law_N_exponent: float  # the a the law's form gives over the same widths, at x fixed at x_at_d_min
    x_drifts: str  # "rises", "falls" or "stays within a factor 1.25"
    growth: str  # N* against the law's form: "slower than", "faster than" or "as fast as" (x rises, falls, stays)
    budget_steps: int  # the larger budget of the check (0 without one)
    budget_lines: int  # lines run at both budgets
    budget_change: float  # largest |N_pass(larger) / N_pass(main) - 1| over those lines
    budget_x_ratio_main: float  # mean x_pass at the largest over the smallest width checked, main budget (nan: none)
    budget_x_ratio_big: float  # the same at the larger budget
    budget_reading: str  # whether those two ratios agree within 5% (then the budget does not make the drift)
    runs: int
    cpu_minutes: float


def _law_exponent(ds: np.ndarray, x: float) -> float:
    """a of N ∝ d^a through the N solving N ln N = d^2 / x at each width (the law's form at fixed x)."""
    Ns = []
    for d in ds:
        lo, hi = 2.0, float(d) ** 2
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mid * math.log(mid) < d * d / x else (lo, mid)
        Ns.append(lo)
    return loglog_slope(ds, np.array(Ns))


def pal_reading(runs: pd.DataFrame) -> PalReading:
    """The reading of the table: the main budget is the smallest; the larger one (if any) is the check."""
    caps = capacities(runs).dropna(subset=["N_pass"])
    caps = main_lines(caps)
    budgets = sorted(caps.steps.unique())
    main = caps[caps.steps == budgets[0]]
    if main.d.nunique() < 2:
        raise ValueError(f"runs: the pal reading needs at least two widths d, got {sorted(main.d.unique())}")
    per_d = capacity_table(main).sort_values("d")
    ds = per_d.d.to_numpy(float)
    k = loglog_slope(main.d.to_numpy(float), main.x_pass.to_numpy(float))
    spread = float(per_d.x_mean.max() / per_d.x_mean.min())
    drifts = "stays within a factor 1.25" if spread < 1.25 else ("rises" if k > 0 else "falls")
    growth = {"rises": "slower than", "falls": "faster than"}.get(drifts, "as fast as")
    change, n_check, big, ratios = 0.0, 0, 0, (math.nan, math.nan)
    if len(budgets) > 1:
        big = int(budgets[-1])
        both = main.merge(caps[caps.steps == big], on=["d", "lr", "seed"], suffixes=("", "_big"))
        n_check = len(both)
        if n_check:
            change = float((both.N_pass_big / both.N_pass - 1).abs().max())
            x = both.groupby("d")[["x_pass", "x_pass_big"]].mean().sort_index()
            ratios = tuple(float(x[c].iloc[-1] / x[c].iloc[0]) for c in ("x_pass", "x_pass_big"))
    if not n_check:
        reading = "no line was rerun with a larger budget"
    elif abs(math.log(ratios[1] / ratios[0])) < math.log(1.05):
        reading = "the change of x* between these widths is the same at both budgets (within 5%): not the budget's"
    else:
        reading = "the change of x* between these widths differs between the budgets: part of it may be the budget's"
    first, last = per_d.iloc[0], per_d.iloc[-1]
    seeds = sorted(int(s) for s in main.seed.unique())
    return PalReading(
        seeds=", ".join(map(str, seeds)), n_seeds=len(seeds), steps=int(budgets[0]), d_min=int(first.d),
        d_max=int(last.d), n_d=len(per_d), N_at_d_min=float(first.N_mean), N_at_d_max=float(last.N_mean),
        x_at_d_min=float(first.x_mean), x_at_d_max=float(last.x_mean), x_spread=spread, x_exponent=k,
        N_exponent=loglog_slope(main.d.to_numpy(float), main.N_pass.to_numpy(float)),
        law_N_exponent=_law_exponent(ds, float(first.x_mean)), x_drifts=drifts, growth=growth, budget_steps=big,
        budget_lines=n_check, budget_change=change, budget_x_ratio_main=ratios[0], budget_x_ratio_big=ratios[1],
        budget_reading=reading, runs=len(runs),
        cpu_minutes=float(runs.wall_time_s.sum() / 60))


@dataclass(frozen=True)
class _LrFinding:
    """Of :func:`lr_table`: per other setting, the range over widths of N stored against the main setting's
    (paired by seed), and the range of x* over every setting and width."""

    lr_widths: str  # "8, 16, 32"
    adam_low_lr: float
    adam_low_min: float
    adam_low_max: float
    gd_lr: float
    gd_min: float
    gd_max: float
    x_all_min: float
    x_all_max: float


def lr_finding(lr: pd.DataFrame) -> _LrFinding:
    """:class:`_LrFinding` of :func:`lr_table` (Adam at a lower rate and gradient descent); NaN
    where the table has neither (a smoke table)."""
    adam = lr[(lr.optimizer == "adam") & (lr.lr < lr[lr.optimizer == "adam"].lr.max())] if len(lr) else lr
    gd = lr[lr.optimizer == "gd"] if len(lr) else lr
    if adam.empty or gd.empty:
        nan = float("nan")
        return _LrFinding("", nan, nan, nan, nan, nan, nan, nan, nan)
    return _LrFinding(lr_widths=", ".join(str(int(d)) for d in sorted(lr.d.unique())),
                     adam_low_lr=float(adam.lr.iloc[0]), adam_low_min=float(adam.N_ratio.min()),
                     adam_low_max=float(adam.N_ratio.max()), gd_lr=float(gd.lr.iloc[0]), gd_min=float(gd.N_ratio.min()),
                     gd_max=float(gd.N_ratio.max()), x_all_min=float(lr.x_mean.min()), x_all_max=float(lr.x_mean.max()))


# ----------------------------------------------------------------------------- d_k past ell (table dk_saturation)

POINT = ["m", "d_model", "h", "ell", "d_k"]
_LADDER = ["m", "d_model", "h", "ell"]


def f1_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean test F1 and its 95% t-interval over seeds per point (m, d_model, h, ell, d_k)."""
    if runs.empty:
        raise ValueError("runs: no rows of table dk_saturation")
    return summarize(runs, POINT)


@dataclass(frozen=True)
class _Gain:
    """F1 at ``to`` minus F1 at ``frm`` along one variable, paired over seeds (``f1_from``, ``f1_to``: means)."""

    m: int
    d_model: int
    h: int
    along: str  # "d_k" or "ell"
    fixed: int  # the other variable's value (ell along d_k, d_k along ell)
    frm: int
    to: int
    f1_from: float
    f1_to: float
    mean: float
    lo: float
    hi: float
    n: int

    @property
    def sign(self) -> str:
        """'+' or '-' where the 95% interval excludes 0, '0' where it does not."""
        return "+" if self.lo > 0 else "-" if self.hi < 0 else "0"


def _gain(g: pd.DataFrame, var: str, fixed: int, frm: int, to: int) -> _Gain:
    a = g[g[var] == frm].set_index("seed").test_f1
    b = g[g[var] == to].set_index("seed").test_f1
    seeds, mean, lo, hi = paired_t(b, a, f"{var} = {frm} and {var} = {to}")
    r = g.iloc[0]
    return _Gain(int(r.m), int(r.d_model), int(r.h), var, int(fixed), int(frm), int(to), float(a.loc[seeds].mean()),
                float(b.loc[seeds].mean()), mean, lo, hi, len(seeds))


def past_ell(runs: pd.DataFrame) -> list[_Gain]:
    """Per ladder (m, d_model, h, ell) whose d_k reach past ell and include ell: the gain from d_k = ell to the
    largest d_k tested; none (an empty list) where no ladder does (a smoke table)."""
    out = []
    for key, g in runs.groupby(_LADDER, sort=True):
        ell = int(key[3])
        dks = sorted(g.d_k.unique())
        if ell in dks and dks[-1] > ell and len(dks) >= 3:
            out.append(_gain(g, "d_k", ell, ell, int(dks[-1])))
    return out


def ell_effect(runs: pd.DataFrame) -> list[_Gain]:
    """Per (m, d_model, h, d_k) tested at three or more ell: the gain from the smallest ell to the largest; none (an
    empty list) where no d_k was (a smoke table)."""
    out = []
    for (m, d_model, h, d_k), g in runs.groupby(["m", "d_model", "h", "d_k"], sort=True):
        ells = sorted(g.ell.unique())
        if len(ells) >= 3:
            out.append(_gain(g, "ell", d_k, int(ells[0]), int(ells[-1])))
    return out


# what the chapter's prose names: ladders along d_k as (m, h, ell), and ell series by their d_k
READ_PAST_ELL: tuple[tuple[int, int, int], ...] = ((128, 1, 4), (256, 1, 4), (128, 2, 4), (128, 1, 8), (128, 1, 16))
READ_ELL: tuple[int, ...] = (4, 8)


def read_at(gains: list[_Gain], keys, along: str) -> list[_Gain]:
    """The gains the chapter's prose names (``keys``: (m, h, ell) along d_k, d_k along ell), each the table's where
    it has it, else NaN (a smoke table has none); then any other gain the table holds."""
    nan = float("nan")
    key = (lambda g: (g.m, g.h, g.fixed)) if along == "d_k" else (lambda g: g.fixed)
    have = {key(g): g for g in gains}
    out = []
    for k in keys:
        if k in have:
            out.append(have[k])
        else:
            m, h, fixed = k if along == "d_k" else (0, 0, k)
            out.append(_Gain(m, 0, h, along, fixed, 0, 0, nan, nan, nan, nan, nan, 0))
    return out + [g for g in gains if key(g) not in set(keys)]
