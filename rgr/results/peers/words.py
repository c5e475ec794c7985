"""What the chapter *The law beside other results* (``book/peers.ipynb``) pastes into its prose beyond the
readings of :mod:`.dana`, :mod:`.sweep`, :mod:`.aot` and :mod:`.pal`: small frozen findings glued by field name
(:func:`rgr.chapters.display.glue_finding`), and the decimals each float field is shown with (:func:`prose_digits`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .aot import Difference
from .dana import PowerRefit
from .sweep import LEVELS, PreconditionReading, SeriesDrift, cpu_minutes

__all__ = ["prose_digits", "RefitWords", "refit_words", "SweepWords", "sweep_words", "AotWords", "aot_words",
           "OneHeadWords", "one_head_words", "LrWords", "lr_words"]


def prose_digits(found: Any, default: int = 2, **exact: int) -> dict[str, int]:
    """``glue_finding``'s ``digits`` for the frozen finding ``found``: every field holding a float or None
    (shown "—") at ``default`` decimals, or at ``exact[field]``."""
    if not dataclasses.is_dataclass(found) or isinstance(found, type):
        raise TypeError(f"found must be a dataclass instance, got {type(found).__name__}")
    names = {f.name for f in dataclasses.fields(found)}
    unknown = set(exact) - names
    if unknown:
        raise ValueError(f"exact names no field of {type(found).__name__}: {sorted(unknown)}")
    return {name: exact.get(name, default) for name in names
            if getattr(found, name) is None or isinstance(getattr(found, name), float)}


@dataclass(frozen=True)
class RefitWords:
    """Of the re-fit of their experiment 1: RSS(cubic) / RSS(quadratic) and the largest step-1 slope."""

    rss_ratio: float
    slope_max: float


def refit_words(fit: PowerRefit) -> RefitWords:
    """:class:`RefitWords` of :func:`rgr.results.peers.dana.power_refit`'s result."""
    if not fit.slope:
        raise ValueError("fit must hold at least one slope")
    return RefitWords(rss_ratio=float(fit.rss_ratio), slope_max=float(max(fit.slope)))


@dataclass(frozen=True)
class SweepWords:
    """Of the head sweep: its size and cost, the cells behind each drift, the failing cells and how to word
    them (``separates``: "do" / "do not"; the drift of x* at F1 = 0.5 ``direction`` "falls" / "rises", and which
    of the two factors ``dominates``, "first" / "second")."""

    n_runs: int
    n_seeds: int
    cpu: float  # worker-minutes
    half_n_cells: int
    pass_n_cells: int
    n_fail: int
    fail_cells: str  # "(m, d_model), ..." or "none"
    separates: str
    direction: str
    dominates: str


def sweep_words(runs: pd.DataFrame, half: SeriesDrift, passed: SeriesDrift, pre: PreconditionReading) -> SweepWords:
    """:class:`SweepWords` from the sweep's rows, the drifts of one series at both :data:`.sweep.LEVELS`
    (``half``, ``passed``) and :func:`.sweep.precondition_reading`."""
    if half.level != LEVELS[0] or passed.level != LEVELS[1]:
        raise ValueError(f"half and passed must be drifts at the levels {LEVELS}, got {half.level}, {passed.level}")
    falls = (half.exponent or 0) < 0
    return SweepWords(n_runs=len(runs), n_seeds=int(runs.seed.nunique()), cpu=cpu_minutes(runs),
                      half_n_cells=len(half.cells), pass_n_cells=len(passed.cells), n_fail=len(pre.failing),
                      fail_cells=", ".join(f"({m}, {d})" for m, d in pre.failing) or "none",
                      separates="do" if pre.separates else "do not", direction="falls" if falls else "rises",
                      dominates="first" if falls else "second")


@dataclass(frozen=True)
class AotWords:
    """Of the attention-only re-implementation: seeds behind each paired difference, the two verdicts
    (:func:`.aot.verdicts`), its rows and cost ("19 worker-minutes")."""

    beyond_code_n: int
    beyond_paper_n: int
    split_code_n: int
    split_paper_n: int
    verdict_beyond: str
    verdict_split: str
    aot_runs: int
    aot_cpu: str


def aot_words(runs: pd.DataFrame, found: dict[str, Difference], said: dict[str, str]) -> AotWords:
    """:class:`AotWords` from the ``aot`` rows, :func:`.aot.conclusions` and :func:`.aot.verdicts`."""
    n = {f"{key}_n": len(found[key].seeds) for key in ("beyond_code", "beyond_paper", "split_code", "split_paper")}
    return AotWords(**n, verdict_beyond=said["beyond"], verdict_split=said["split"], aot_runs=len(runs),
                    aot_cpu=f"{cpu_minutes(runs):.0f} worker-minutes")


@dataclass(frozen=True)
class OneHeadWords:
    """Of the one-head rows (:func:`.sweep.one_head`): cells, those whose mean F1 reaches the protocol's,
    the best mean F1 and the largest x (None without rows)."""

    n_one: int
    n_one_pass: int
    one_best: float | None
    one_x_max: float | None


def one_head_words(one: pd.DataFrame) -> OneHeadWords:
    """:class:`OneHeadWords` of :func:`.sweep.one_head`'s table."""
    empty = one.empty
    return OneHeadWords(n_one=len(one), n_one_pass=int((one["mean"] >= LEVELS[1]).sum()),
                        one_best=None if empty else float(one["mean"].max()),
                        one_x_max=None if empty else float(one.x.max()))


@dataclass(frozen=True)
class LrWords:
    """Of :func:`.pal.lr_table`: per other setting, the range over widths of N stored against the main setting's
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


def lr_words(lr: pd.DataFrame) -> LrWords:
    """:class:`LrWords` of :func:`rgr.results.peers.pal.lr_table` (Adam at a lower rate and gradient descent); NaN
    where the table has neither (a smoke table)."""
    adam = lr[(lr.optimizer == "adam") & (lr.lr < lr[lr.optimizer == "adam"].lr.max())] if len(lr) else lr
    gd = lr[lr.optimizer == "gd"] if len(lr) else lr
    if adam.empty or gd.empty:
        nan = float("nan")
        return LrWords("", nan, nan, nan, nan, nan, nan, nan, nan)
    return LrWords(lr_widths=", ".join(str(int(d)) for d in sorted(lr.d.unique())), adam_low_lr=float(adam.lr.iloc[0]),
                   adam_low_min=float(adam.N_ratio.min()), adam_low_max=float(adam.N_ratio.max()),
                   gd_lr=float(gd.lr.iloc[0]), gd_min=float(gd.N_ratio.min()), gd_max=float(gd.N_ratio.max()),
                   x_all_min=float(lr.x_mean.min()), x_all_max=float(lr.x_mean.max()))
