"""How chapters show a table: HTML with headers, sensible rounding and readable missing values.

Every chapter shows its tables through :func:`table` (never ``print(df)``), so a reader sees a
rendered HTML table with a header row, numbers rounded to what the experiment supports, and "—"
where a value does not exist (a cell whose D_K* was never reached, say).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from collections.abc import Mapping

import pandas as pd
from pandas.io.formats.style import Styler

__all__ = ["MISSING", "number", "table"]

MISSING = "—"


def table(
    df: pd.DataFrame,
    digits: int | Mapping[str, int] = 2,
    caption: str | None = None,
    index: bool = False,
) -> Styler:
    """``df`` as a styled HTML table.

    ``digits``: decimals for float columns, one number for all or a mapping column -> decimals
    (integer columns print as integers; missing values, ``NaN``/``<NA>``/``None``, as "—").
    ``index``: show the index (off by default: chapter tables carry their keys as columns).
    """
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"table: df must be a pandas DataFrame, got {type(df).__name__}")
    per_col = dict(digits) if isinstance(digits, Mapping) else {}
    unknown = set(per_col) - set(df.columns)
    if unknown:
        raise ValueError(f"table: digits names columns not in the table: {sorted(unknown)}")
    fmt: dict[str, object] = {}
    for col in df.columns:
        s = df[col]
        if pd.api.types.is_bool_dtype(s):
            continue
        if pd.api.types.is_integer_dtype(s):
            fmt[col] = "{:d}"
        elif pd.api.types.is_float_dtype(s):
            d = per_col.get(col, digits if isinstance(digits, int) else 2)
            # floats that are whole numbers (counts with a gap) print without decimals
            whole = s.dropna().map(float.is_integer).all() if s.notna().any() else False
            fmt[col] = "{:.0f}" if whole and col not in per_col else f"{{:.{d}f}}"
    styler = df.style.format(fmt, na_rep=MISSING)
    # text columns (a preset, a claim, a reason) read left-aligned, long ones wrap in a column wide enough to
    # read; numbers stay right-aligned on one line (book/_static/rgr.css: td.text, td.long)
    text = [c for c in df.columns if _is_text(df[c])]
    if text and len(df):
        classes = pd.DataFrame("", index=df.index, columns=df.columns)
        for c in text:
            classes[c] = "text long" if df[c].dropna().str.len().max() > LONG_TEXT else "text"
        styler = styler.set_td_classes(classes)
    if not index:
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(caption)
    # a stable element id (not pandas' random one), so executed notebooks compare equal under nbval
    uid = hashlib.sha256(f"{caption}|{list(df.columns)}|{df.shape}".encode()).hexdigest()[:8]
    return styler.set_uuid(uid).set_table_attributes('class="rgr-table"')


LONG_TEXT = 40  # characters: a text column with a longer entry wraps (in a column at least 20em wide)


def _is_text(s: pd.Series) -> bool:
    """A column of strings (a missing value aside), not numbers stored as objects."""
    if not (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
        return False
    present = s.dropna()
    return len(present) > 0 and all(isinstance(v, str) for v in present)


def number(x: object, digits: int = 2) -> str:
    """``x`` rounded for prose (an integer as an integer), or "—" when it is missing (None, NaN, <NA>):
    what a chapter glues where a reading may lack data (the smoke preset, a checkout with no tables)."""
    if x is None or x is pd.NA or (isinstance(x, numbers.Real) and math.isnan(float(x))):
        return MISSING
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return f"{float(x):.{digits}f}"
