"""What the findings modules share: turning a frozen result into the flat name -> value pairs a chapter glues.

A chapter words its findings in Markdown with myst-nb's ``{glue:text}`name:.2f```; the numbers come from
one frozen dataclass per chapter (:mod:`rgr.results.permutation_sweeps`, :mod:`rgr.results.denser_graphs`),
flattened here so the notebook glues them in one loop.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

__all__ = ["DIGITS", "Text", "flatten", "glued", "nan_if_none"]

DIGITS = 6  # floats are rounded to this many decimals, so glued text/plain is stable across platforms


class Text(str):
    """A string that shows as itself: myst-nb glues a value's text repr, which for a plain ``str`` keeps its
    quotes (the prose read "the paper's value is 'inside'"); this one's repr is the text."""

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_pretty_(self, p, cycle: bool) -> None:  # IPython's text/plain, what {glue:text} shows
        p.text(str.__str__(self))


def glued(value: Any, digits: int = DIGITS) -> Any:
    """``value`` as a chapter glues it: a finite float rounded to ``digits`` decimals, a string as
    :class:`Text` (no quotes), anything else as it is.

    myst-nb stores a glued value's repr, which nbval compares digit for digit; the last bits of a float that
    went through a BLAS kernel, a SIMD ``log`` or a thread-split sum differ between machines, so they are
    rounded off (to :data:`DIGITS` decimals; fewer, down to what the chapter shows, where the value is
    noisier: a trained model's).
    """
    if isinstance(value, str):
        return Text(value)
    if isinstance(value, (bool, np.bool_, int, np.integer)) or not isinstance(value, (float, np.floating)):
        return value
    return round(float(value), digits) if math.isfinite(value) else float(value)


def nan_if_none(v: Any) -> float:
    """``float(v)``, NaN for None or pandas' NA."""
    try:
        return math.nan if v is None or v != v else float(v)  # noqa: PLR0124 (NaN/NA check)
    except TypeError:  # pd.NA compares to NA
        return math.nan


def _scalar(v: Any) -> Any:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return glued(v)
    if isinstance(v, str):
        return Text(v)
    return None


def flatten(result: Any, prefix: str = "") -> dict[str, Any]:
    """Scalar fields (int, float, bool, str) of a dataclass, nested ones joined by ``_``; others skipped.

    Floats are rounded to :data:`DIGITS` decimals; a tuple field of scalars gives one entry per element
    (``name_0``, ``name_1``, ...).
    """
    if not dataclasses.is_dataclass(result) or isinstance(result, type):
        raise TypeError(f"result must be a dataclass instance, got {type(result).__name__}")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        v = getattr(result, f.name)
        key = f"{prefix}{f.name}"
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            out.update(flatten(v, prefix=f"{key}_"))
        elif isinstance(v, tuple):
            for i, e in enumerate(v):
                s = _scalar(e)
                if s is not None:
                    out[f"{key}_{i}"] = s
        else:
            s = _scalar(v)
            if s is not None:
                out[key] = s
    return out
