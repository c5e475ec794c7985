"""The design rule checked (chapter *choosing heads*): the preregistered held-out cell, validation on
cells the rule was not fitted on, the law read backwards at real layer shapes, and a summary.

The rule itself is :mod:`rgr.results.choosing_heads.design`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import pandas as pd

from ...protocol import F1_TARGET
from ..findings import int_or_none
from ..thresholds import curves, thresholds
from .design import DesignRule, DomainError, recommend


@dataclass(frozen=True)
class _Preregistration:
    """A prediction written down and committed before its cell was run (chapter *choosing heads*).

    ``f1_at``: (D_K, predicted F1, low, high) at a few budgets, from :func:`recommend` with the rule fitted on
    the ``book`` preset of data/base.csv. Tests check that the rule still gives these numbers, so the
    prediction cannot drift after the result is known.
    """

    experiment: str
    preset: str
    m: int
    d_model: int
    D_K: float
    D_K_lo: float
    D_K_hi: float
    h: int
    h_lo: int
    h_hi: int
    f1_at: tuple[tuple[int, float, float, float], ...]


# committed before `python -m rgr sweep design_check --preset book` was run (see the git log)
PREREGISTERED = _Preregistration(
    experiment="design_check", preset="book", m=384, d_model=48,
    D_K=46.88, D_K_lo=28.41, D_K_hi=77.35, h=8, h_lo=1, h_hi=16,
    f1_at=((16, 0.495, 0.404, 0.583), (32, 0.871, 0.708, 0.976), (64, 1.000, 0.990, 1.000), (128, 1.000, 0.998, 1.000)),
)


def _row(name: str, c, prediction: str, in_domain: bool, pred: tuple[float, float, float, int, int, int]) -> dict:
    """One validation row: the measured thresholds of cell ``c`` beside a prediction (D_K, lo, hi, h, h_lo, h_hi)."""
    D_K, lo, hi, h, h_lo, h_hi = pred
    star, hs = int_or_none(c.D_K_star), int_or_none(c.h_star)
    return dict(experiment=name, prediction=prediction, m=int(c.m), d_model=int(c.d_model), lam=c.m / c.d_model,
                in_domain=in_domain, D_K_pred=D_K, D_K_lo=lo, D_K_hi=hi, D_K_star=star,
                D_K_opt=int_or_none(c.D_K_opt), D_K_cons=int_or_none(c.D_K_cons),
                ratio=math.nan if star is None else star / D_K, inside=star is not None and lo <= star <= hi,
                h=h, h_lo=h_lo, h_hi=h_hi, h_star=hs, h_inside=hs is not None and h_lo <= hs <= h_hi)


def held_out_cells(runs: Mapping[str, pd.DataFrame], fitted: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per experiment, the threshold rows (:func:`rgr.results.thresholds.thresholds`) of its cells that are not
    cells of ``fitted`` (the runs the rule was fitted on). A paper preset repeats base-grid cells (lambda32's
    (512, 16), lambda8's m <= 512): those runs are the rule's own table, read again, so they are no test of it,
    even where its fit left a cell out (d_model = 16 with m > 64)."""
    seen = set(zip(fitted["m"], fitted["d_model"]))
    out = {}
    for name, r in runs.items():
        t = thresholds(r)
        keep = [(m, d) not in seen for m, d in zip(t["m"], t["d_model"])]
        out[name] = t[keep].reset_index(drop=True)
    return out


def validation(rule: DesignRule | None, held_out: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Predicted against measured D_K* and h* on cells the rule was not fitted on.

    ``held_out``: experiment name -> threshold rows (:func:`rgr.results.thresholds.thresholds`). Cells outside
    the domain are predicted with ``extrapolate=True`` and marked ``in_domain = False``. ``inside``: the
    measured central D_K* lies in the 95% prediction interval; ``h_inside``: the measured h* lies in
    [h_lo, h_hi]. ``prediction`` says whose: "<preset> fit" (``rule``), or, for the preregistered cell,
    "preregistered" (the committed numbers of :data:`PREREGISTERED`, whatever ``rule`` is now) and, when ``rule`` was
    fitted on another preset than the preregistration, also "<preset> fit, after the fact".
    """
    cols = ["experiment", "prediction", "m", "d_model", "lam", "in_domain", "D_K_pred", "D_K_lo", "D_K_hi",
            "D_K_star", "D_K_opt", "D_K_cons", "ratio", "inside", "h", "h_lo", "h_hi", "h_star", "h_inside"]
    rows = []
    for name, cells in ([] if rule is None else held_out.items()):
        for c in cells.itertuples(index=False):
            d = recommend(rule, int(c.m), int(c.d_model), target_f1=F1_TARGET, extrapolate=True)
            ours = (d.D_K, d.D_K_lo, d.D_K_hi, d.h, d.h_lo, d.h_hi)
            p = PREREGISTERED
            if (name, c.m, c.d_model) != (p.experiment, p.m, p.d_model):
                rows.append(_row(name, c, f"{rule.preset} fit", d.in_domain, ours))
                continue
            # chosen inside the domain of the rule it was predicted with
            rows.append(_row(name, c, "preregistered", True, (p.D_K, p.D_K_lo, p.D_K_hi, p.h, p.h_lo, p.h_hi)))
            if rule.preset != p.preset:
                rows.append(_row(name, c, f"{rule.preset} fit, after the fact", d.in_domain, ours))
    out = pd.DataFrame(rows, columns=cols)
    for c in ("D_K_star", "D_K_opt", "D_K_cons", "h_star"):
        out[c] = out[c].astype("Int64")
    return out


@dataclass(frozen=True)
class _Layer:
    """A real attention layer's shape: d_model, h heads of width d_k."""

    name: str
    d_model: int
    h: int
    d_k: int


REAL_LAYERS: tuple[_Layer, ...] = (
    _Layer("GPT-2 small", 768, 12, 64),
    _Layer("GPT-2 medium", 1024, 16, 64),
    _Layer("7B Llama-style", 4096, 32, 128),
)


def _capacity(rule: DesignRule, d_model: int, D_K: int) -> tuple[float, float, float]:
    """(central, low, high) m' with c * m' ln m' / d_model = D_K: the relations the law says fit in D_K.

    ``low``/``high`` use the ends of the 95% prediction interval of c. No domain check: this is the law read
    backwards, which the caller must flag (see :func:`real_layers`).
    """
    from scipy.optimize import brentq

    def solve(c: float) -> float:
        target = D_K * d_model / c
        return float(brentq(lambda m: m * math.log(m) - target, 2.0, max(4.0, target)))

    c, f = rule.c(), rule.factor()
    return solve(c), solve(c * f), solve(c / f)


def real_layers(rule: DesignRule | None, layers: tuple[_Layer, ...] = REAL_LAYERS) -> pd.DataFrame:
    """The law read backwards at real layer shapes, with what the rule says about each (an extrapolation).

    Per layer: its D_K = h d_k; the m' the law would let that budget hold (``m_cap`` with its interval);
    the head count and per-head width the rule would pick for that m' (``h_rule``, ``d_k_rule``, from
    ``extrapolate=True``); and ``refusal``, the rule's message when asked without ``extrapolate``.
    """
    cols = ["layer", "d_model", "h", "d_k", "D_K", "m_cap", "m_cap_lo", "m_cap_hi", "lam_cap", "h_rule",
            "d_k_rule", "refusal"]
    rows = []
    for L in ([] if rule is None else layers):
        D_K = L.h * L.d_k
        m, lo, hi = _capacity(rule, L.d_model, D_K)
        d = recommend(rule, int(round(m)), L.d_model, D_K=D_K, extrapolate=True)
        try:
            recommend(rule, int(round(m)), L.d_model, D_K=D_K)
            refusal = ""
        except DomainError as e:
            refusal = str(e).split(". Pass")[0]
        rows.append(dict(layer=L.name, d_model=L.d_model, h=L.h, d_k=L.d_k, D_K=D_K, m_cap=m, m_cap_lo=lo,
                         m_cap_hi=hi, lam_cap=m / L.d_model, h_rule=d.h, d_k_rule=d.d_k, refusal=refusal))
    return pd.DataFrame(rows, columns=cols)


def f1_check(rule: DesignRule | None, runs: pd.DataFrame, p: _Preregistration = PREREGISTERED) -> pd.DataFrame:
    """The preregistered F1 predictions beside the measured best-over-h mean F1 (and its h) at each budget."""
    cols = ["D_K", "f1_pred", "f1_lo", "f1_hi", "f1_measured", "h_best", "inside"]
    if rule is None:
        return pd.DataFrame(columns=cols)
    s = curves(runs[(runs.m == p.m) & (runs.d_model == p.d_model)])
    rows = []
    for dk, f1, lo, hi in p.f1_at:
        at = s[s.D_K == dk].sort_values(["mean", "h"], ascending=[False, True])
        meas = float(at["mean"].iloc[0]) if len(at) else math.nan
        rows.append(dict(D_K=dk, f1_pred=f1, f1_lo=lo, f1_hi=hi, f1_measured=meas,
                         h_best=int(at["h"].iloc[0]) if len(at) else None, inside=bool(lo - 5e-4 <= meas <= hi + 5e-4)))
    out = pd.DataFrame(rows, columns=cols)
    out["h_best"] = out["h_best"].astype("Int64")
    return out


@dataclass(frozen=True)
class _RuleSummary:
    """The numbers the chapter words (NaN where the preset has no rule)."""

    c: float
    factor: float
    a: float
    b: float
    h_r2: float
    n: int
    d_model_lo: float
    d_model_hi: float
    lam_lo: float
    lam_hi: float
    c0: float
    dk_per_log: float  # c / a: d_k ~ (c / a) ln m' where b is negligible
    h_max: float  # the largest head count of the fitted grid


def summarize_rule(rule: DesignRule | None) -> _RuleSummary:
    nan = math.nan
    if rule is None:
        return _RuleSummary(c=nan, factor=nan, a=nan, b=nan, h_r2=nan, n=0, d_model_lo=nan, d_model_hi=nan, lam_lo=nan,
                           lam_hi=nan, c0=nan, dk_per_log=nan, h_max=nan)
    d = rule.domain
    return _RuleSummary(c=rule.c(), factor=rule.factor(), a=rule.a, b=rule.b, h_r2=rule.h_r2, n=rule.n,
                       d_model_lo=d.d_model[0], d_model_hi=d.d_model[1], lam_lo=d.lam[0], lam_hi=d.lam[1], c0=d.c0,
                       dk_per_log=rule.c() / rule.a, h_max=float(max(rule.heads)))


def refit_note(val: pd.DataFrame) -> str:
    """A sentence on the preregistered cell under a rule refitted on other rows ("" when there is none)."""
    after = val[val["prediction"].str.endswith("after the fact")]
    if after.empty:
        return ""
    r = after.iloc[0]
    return (f"Refitted on the {r.prediction.split(' fit')[0]} rows, which include no run of this cell either, the "
            f"rule would now predict D_K* ≈ {r.D_K_pred:.0f} ({r.D_K_lo:.0f}–{r.D_K_hi:.0f}) and h = {r.h} "
            f"({r.h_lo}–{r.h_hi}) here, {'inside' if r.inside else 'outside'} of which the measured "
            f"{r.D_K_star} lies; this is a comparison made after the result was known, not a test.")


def head_count_reading(h_lo: int, h_hi: int, h_star: int | None, heads_run) -> str:
    """How the measured h* stands against the predicted interval [h_lo, h_hi], for the prose of chapter
    *Choosing heads*: "inside the interval" / "outside the interval", and, when the interval holds every head
    count the cell ran (``heads_run``), says that the check could not fail: a sanity check, not evidence; when
    it holds at least two thirds of them and the measured h* is inside, that the check is near-vacuous."""
    if h_star is None or pd.isna(h_star):
        return "not measured (no head count reached the target)"
    words = "inside the interval" if h_lo <= h_star <= h_hi else "outside the interval"
    heads = sorted(int(h) for h in set(heads_run))
    held = sum(h_lo <= h <= h_hi for h in heads)
    if heads and h_lo <= heads[0] and heads[-1] <= h_hi:
        words += (f", a sanity check only: the interval holds every head count the cell ran ({heads[0]} to "
                  f"{heads[-1]}), so it could not fail")
    elif 3 * held >= 2 * len(heads) and h_lo <= h_star <= h_hi:
        words += (f", a near-vacuous check: the interval holds {held} of the {len(heads)} head counts the "
                  f"cell ran")
    return words
