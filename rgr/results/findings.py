"""What the findings modules share: turning a frozen result into the flat name -> value pairs a chapter glues.

A chapter words its findings in Markdown with myst-nb's ``{glue:text}`name:.2f```; the numbers come from
frozen dataclasses of ``rgr.results.<chapter>``, flattened here by field name (:func:`entries`, :func:`flatten`)
so that the chapter glues each in one call (:func:`rgr.chapters.display.glue_finding`).

And which cells a chapter's figure shows, as its caption pastes them (:func:`shown_cell`, :func:`shown_degrees`):
the paper's choice where the table has it, else a stated fallback (chapters *permutation sweeps*, Fig. 1's cell,
and *denser graphs*, Fig. 11's out-degrees).
"""

from __future__ import annotations

import ast
import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

_DIGITS = 6  # floats are rounded to this many decimals, so glued text/plain is stable across platforms


class Text(str):
    """A string that shows as itself: myst-nb glues a value's text repr, which for a plain ``str`` keeps its
    quotes (the prose read "the paper's value is 'inside'"); this one's repr is the text."""

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_pretty_(self, p, cycle: bool) -> None:  # IPython's text/plain, what {glue:text} shows
        p.text(str.__str__(self))


def glued(value: Any, digits: int = _DIGITS) -> Any:
    """``value`` as a chapter glues it: a finite float rounded to ``digits`` decimals, a string as
    :class:`Text` (no quotes) where it pastes as itself (:func:`_pastes_as_itself`), anything else as it is.

    myst-nb stores a glued value's repr, which nbval compares digit for digit; the last bits of a float that
    went through a BLAS kernel, a SIMD ``log`` or a thread-split sum differ between machines, so they are
    rounded off (to :data:`_DIGITS` decimals; fewer, down to what the chapter shows, where the value is
    noisier: a trained model's).
    """
    if isinstance(value, str):
        return Text(value) if _pastes_as_itself(value) else value
    if isinstance(value, (bool, np.bool_, int, np.integer)) or not isinstance(value, (float, np.floating)):
        return value
    return round(float(value), digits) if math.isfinite(value) else float(value)


def _pastes_as_itself(text: str) -> bool:
    """Whether ``{glue:text}`` shows ``text`` unchanged when it is glued without quotes: myst-nb reads a glued
    text with ``ast.literal_eval`` first, so "8, 8" would show as the tuple "(8, 8)"; such a string is glued as a
    plain ``str`` (its quotes are then what the reader evaluates away)."""
    try:
        return str(ast.literal_eval(text)) == text
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return True


def listed(words: list[str]) -> str:
    """``words`` as prose lists them: "a", "a and b", "a, b and c"."""
    if not words:
        raise ValueError("words must name at least one item")
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def nan_if_none(v: Any) -> float:
    """``float(v)``, NaN for None or pandas' NA."""
    try:
        return math.nan if v is None or v != v else float(v)  # noqa: PLR0124 (NaN/NA check)
    except TypeError:  # pd.NA compares to NA
        return math.nan


def int_or_none(v: Any) -> int | None:
    """``int(v)``, None for None, NaN or pandas' NA."""
    return None if pd.isna(v) else int(v)


def _scalar(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating, str)):
        return glued(v)
    return None


def entries(key: str, value: Any) -> dict[str, Any]:
    """One field of a finding as the name -> value pairs a chapter glues: a scalar under ``key``, a nested dataclass
    as its fields (``key_field``), a tuple of scalars as ``key_0``, ``key_1``, ...; anything else (None) as nothing."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return flatten(value, prefix=f"{key}_")
    if isinstance(value, tuple):
        return {f"{key}_{i}": s for i, s in enumerate(map(_scalar, value)) if s is not None}
    s = _scalar(value)
    return {} if s is None else {key: s}


def flatten(result: Any, prefix: str = "") -> dict[str, Any]:
    """Scalar fields (int, float, bool, str) of a dataclass, nested ones joined by ``_``; others skipped.

    Floats are rounded to :data:`_DIGITS` decimals; a tuple field of scalars gives one entry per element
    (``name_0``, ``name_1``, ...); see :func:`entries`.
    """
    if not dataclasses.is_dataclass(result) or isinstance(result, type):
        raise TypeError(f"result must be a dataclass instance, got {type(result).__name__}")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        out.update(entries(f"{prefix}{f.name}", getattr(result, f.name)))
    return out

@dataclass(frozen=True)
class _ShownCell:
    """The (m, d_model) cell the chapter's F1-against-budget figure shows."""
    fig1_cell: str  # "(m, d_model)", as the caption pastes it
    fig1_m: int
    fig1_d_model: int


def shown_cell(runs: pd.DataFrame, wanted: tuple[int, int]) -> _ShownCell:
    """The paper's Fig. 1 cell ``wanted`` where ``runs`` (columns m, d_model) has it, else the middle cell
    (``permutation_sweeps.ipynb``, the F1 figure)."""
    present = sorted({(int(m), int(d)) for m, d in runs[["m", "d_model"]].itertuples(index=False)})
    if not present:
        raise ValueError("runs has no (m, d_model) cell to show")
    m, d = tuple(wanted) if tuple(wanted) in present else present[len(present) // 2]
    return _ShownCell(fig1_cell=f"({m}, {d})", fig1_m=m, fig1_d_model=d)


@dataclass(frozen=True)
class _ShownDegrees:
    """The out-degrees the chapter's F1 figure shows (the paper's Fig. 11 ones that the table has)."""
    fig11_r: str  # "r = 2 and r = 4", as the figure's caption pastes it
    degrees: tuple[int, ...]


def shown_degrees(runs: pd.DataFrame, wanted: tuple[int, ...]) -> _ShownDegrees:
    """The out-degrees of ``wanted`` present in ``runs`` (a column ``r``), else its two smallest
    (``denser_graphs.ipynb``, the F1 figure)."""
    if "r" not in runs:
        raise ValueError("runs must have a column 'r' (the out-degree)")
    present = sorted({int(r) for r in runs["r"]})
    show = [int(r) for r in wanted if r in present] or present[:2]
    return _ShownDegrees(fig11_r=listed([f"r = {r}" for r in show]), degrees=tuple(show))
