"""Does one head's capacity stop growing in d_k at the context length ell? The ``dk_saturation`` table read
(chapter *the law beside other capacity results*; design: :mod:`rgr.experiments.peers.dk_sweep`).

Two readings, each a paired difference over seeds with its 95% t-interval:

- along d_k at a fixed ell (:func:`past_ell`): F1 at the largest d_k tested minus F1 at d_k = ell. A capacity
  saturating at ell (Mahdavi et al.'s min(n, d_h)) predicts no gain; the law's form predicts a gain wherever
  F1 at d_k = ell is below its ceiling;
- along ell at a fixed d_k (:func:`ell_effect`): F1 at the largest ell minus F1 at the smallest. A saturation at
  ell predicts a gain when the smallest ell is below d_k; the law's form has no ell in it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..stats import summarize, t_interval

__all__ = ["POINT", "f1_table", "past_ell", "ell_effect", "READ_PAST_ELL", "READ_ELL", "read_at"]

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
    seeds = sorted(set(a.index) & set(b.index))
    if not seeds:
        raise ValueError(f"runs: no seed has both {var} = {frm} and {var} = {to}")
    mean, lo, hi = t_interval((b.loc[seeds] - a.loc[seeds]).to_numpy())
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
