"""Findings of the chapter *GPT-2 block* (book/gpt2_block.ipynb; protocol E7).

:func:`gpt2_reading` words one E7 table: the best head count per budget, whether accuracy rises with D_K,
how many runs were still improving at the step cutoff, how far seeds disagree, and whether the task is
compressive at all (m > d_model: the capacity argument says nothing about a table with m <= d_model).
:func:`embedding_label` says where the frozen embeddings came from, loudly when they are the stand-in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ..gpt2.table import STAND_IN_SOURCE
from .stats import summarize

__all__ = ["GPT2Reading", "embedding_label", "gpt2_reading", "is_stand_in"]


def is_stand_in(sources: pd.Series | list[str]) -> bool:
    """True when any row used the seeded stand-in table instead of GPT-2's embeddings."""
    return any(s == STAND_IN_SOURCE or s.startswith("stand-in") for s in map(str, sources))


def embedding_label(sources: pd.Series | list[str]) -> str:
    """A plain statement of where the embeddings came from, loud when they are a stand-in."""
    if is_stand_in(sources):
        return "STAND-IN embeddings, not GPT-2 (seeded random vectors)"
    return "frozen embeddings: " + ", ".join(sorted(set(map(str, sources))))


@dataclass(frozen=True)
class GPT2Reading:
    """What one E7 table shows (see :func:`gpt2_reading`)."""

    m: int
    d_model: int
    n_budgets: int
    multi_head_best: int  # budgets where the best mean accuracy has h > 1
    best_h: tuple[int, ...]  # per budget, ascending D_K
    best_acc: tuple[float, ...]
    one_head_acc: tuple[float, ...]  # NaN where h = 1 was not run
    n_heads: int
    n_monotone: int  # head counts whose mean accuracy never falls as D_K grows
    frac_best_last: float  # share of runs whose best validation check is their last
    n_settings: int  # (D_K, h) settings
    n_split: int  # settings whose seeds differ by more than ``split`` in accuracy
    stand_in: bool

    @property
    def lam(self) -> float:
        """m / d_model: above 1 the key-query channel must compress (the capacity argument's regime)."""
        return self.m / self.d_model

    @property
    def compressive(self) -> bool:
        return self.m > self.d_model


def gpt2_reading(runs: pd.DataFrame, split: float = 0.3) -> GPT2Reading:
    """Word an E7 table (rows of one preset: one m and d_model); ``split`` is the seed-spread that counts."""
    if runs.empty:
        raise ValueError("runs has no rows")
    if runs["m"].nunique() != 1 or runs["d_model"].nunique() != 1:
        raise ValueError("runs must hold one m and one d_model (one preset)")
    s = summarize(runs, ["h", "D_K"], "test_acc")
    best = s.loc[s.groupby("D_K")["mean"].idxmax()].sort_values("D_K")
    one = s[s.h == 1].set_index("D_K")["mean"]
    mono = s.groupby("h")["mean"].apply(lambda g: bool(g.is_monotonic_increasing))  # s is sorted by D_K
    spread = runs.groupby(["D_K", "h"])["test_acc"].agg(lambda a: a.max() - a.min())
    return GPT2Reading(
        m=int(runs["m"].iloc[0]), d_model=int(runs["d_model"].iloc[0]),
        n_budgets=len(best), multi_head_best=int((best.h > 1).sum()),
        best_h=tuple(int(h) for h in best.h), best_acc=tuple(float(a) for a in best["mean"]),
        one_head_acc=tuple(float(one.get(d, math.nan)) for d in best.D_K),
        n_heads=len(mono), n_monotone=int(mono.sum()),
        frac_best_last=float((runs.best_step == runs.steps_done).mean()),
        n_settings=len(spread), n_split=int((spread > split).sum()),
        stand_in=is_stand_in(runs["embedding_source"]),
    )
