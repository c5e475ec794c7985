"""How chapters show what they read: tables (HTML with headers, sensible rounding and readable missing values),
glued findings and links to their data.

Every chapter shows its tables through :func:`table` (never ``print(df)``), so a reader sees a
rendered HTML table with a header row in words (:func:`_column_label`, the one home of the book's column
labels: the data keep their code names, a reader sees "key width D_K*" for ``D_K_star``), numbers
rounded to what the experiment supports, and "—" where a value does not exist (a cell whose D_K* was
never reached, say).

**Glued findings.** :func:`glue_finding` is the one way a chapter glues numbers, from its frozen finding to its
prose.

A chapter's Markdown pastes ``{glue:text}`name```; every such name is a field of a frozen dataclass that an
``rgr.results`` function returned (nested fields joined by ``_``, tuples as ``name_0``, ``name_1``, ...; see
:func:`rgr.results.findings.entries`), so a pasted number leads to the function that computed it by its name.

**Figures**: :func:`show_figure`.

**Downloads.** Each chapter's tables, downloadable from its page (:func:`download_links`, in a code cell below its
results). The links are relative (``../data/<file>``): in the built site they point to the copies that the
book's Sphinx extension (book/_ext/rgr_site.py) puts into ``_build/html/data/``, and in Jupyter, where
a chapter runs in book/, to the repository's data/ folder itself.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import html
import math
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from IPython.display import HTML
from pandas.io.formats.style import Styler

from ..paths import data_dir
from ..protocol import TABLES
from ..results.findings import entries, glued

if TYPE_CHECKING:
    from matplotlib.figure import Figure

_MISSING = "—"


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
    df, folded = _fold_intervals(df, per_col, digits if isinstance(digits, int) else 2)
    df, same = _fold_constants(df)
    if same:  # what every row shares is said once, under the caption
        caption = f"{caption.rstrip('. ') + '. ' if caption else ''}In every row: {same}"
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
    styler = df.style.format(fmt, na_rep=_MISSING)
    # text columns (a preset, a claim, a reason) read left-aligned, long ones wrap in a column wide enough to
    # read; numbers stay right-aligned on one line (book/_static/rgr.css: td.text, td.long)
    text = [c for c in df.columns if _is_text(df[c])]
    if text and len(df):
        classes = pd.DataFrame("", index=df.index, columns=df.columns)
        for c in text:
            classes[c] = "text long" if df[c].dropna().str.len().max() > _LONG_TEXT else "text"
        styler = styler.set_td_classes(classes)
    styler = styler.format_index(lambda c: _column_label(c) + (" [low, high]" if c in folded else ""), axis=1)
    if not index:
        styler = styler.hide(axis="index")
    if caption:
        styler = styler.set_caption(caption)
    # a stable element id (not pandas' random one), so executed notebooks compare equal under nbval
    uid = hashlib.sha256(f"{caption}|{list(df.columns)}|{df.shape}".encode()).hexdigest()[:8]
    # a long table is folded into a box of about _LONG_ROWS rows that scrolls (book/_static/screens.css)
    return styler.set_uuid(uid).set_table_attributes(f'class="rgr-table{" rgr-long" if len(df) > _LONG_ROWS else ""}"')


def _fold_intervals(df: pd.DataFrame, per_col: Mapping[str, int], default: int) -> tuple[pd.DataFrame, set]:
    """Columns ``X_lo`` and ``X_hi`` shown inside column ``X`` as "x [lo, hi]" (or as "[lo, hi]" in a new
    column ``X`` where there is none): one column where there were three, so tables fit the text column."""
    folded: set = set()
    for lo in [c for c in df.columns if isinstance(c, str) and c.endswith("_lo")]:
        base, hi = lo[:-3], lo[:-3] + "_hi"
        parts = [c for c in (base, lo, hi) if c in df.columns]
        if hi not in df.columns or not all(pd.api.types.is_numeric_dtype(df[c]) for c in parts):
            continue
        d = per_col.get(lo, per_col.get(base, default))
        whole = all(df[c].dropna().map(float).map(float.is_integer).all() for c in parts)
        cell = lambda v: _number(v if not whole or pd.isna(v) else int(v), d)  # noqa: E731
        interval = [f"[{cell(a)}, {cell(b)}]" for a, b in zip(df[lo], df[hi])]
        at = list(df.columns).index(base if base in df.columns else lo)
        text = [f"{cell(v)} {i}" for v, i in zip(df[base], interval)] if base in df.columns else interval
        df = df.drop(columns=[c for c in parts]).copy()
        df.insert(at if base in parts else min(at, len(df.columns)), base, text)
        folded.add(base)
    return df, folded


def _fold_constants(df: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """In a table of more than :data:`_WIDE_COLUMNS` columns and at least 2 rows, the numeric columns with
    one value in every row, dropped and said once ("m = 1024, d_model = 512"), so it fits the text column."""
    if df.shape[1] <= _WIDE_COLUMNS or len(df) < 2:
        return df, ""
    same = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
            and df[c].notna().all() and df[c].nunique() == 1]
    said = ", ".join(f"{_column_label(c)} = {_number(df[c].iloc[0], 3)}" for c in same)
    return df.drop(columns=same), said


_WIDE_COLUMNS = 10  # columns: a wider table says its constant columns once instead of in every row
_LONG_ROWS = 20  # rows: a longer table is shown folded (scrolls in its own box)
_LONG_TEXT = 40  # characters: a text column with a longer entry wraps (in a column at least 20em wide)


def _is_text(s: pd.Series) -> bool:
    """A column of strings (a missing value aside), not numbers stored as objects."""
    if not (pd.api.types.is_object_dtype(s) or pd.api.types.is_string_dtype(s)):
        return False
    present = s.dropna()
    return len(present) > 0 and all(isinstance(v, str) for v in present)


def _number(x: object, digits: int = 2) -> str:
    """``x`` rounded for prose (an integer as an integer), or "—" when it is missing (None, NaN, <NA>):
    what a chapter glues where a reading may lack data (the smoke preset, a checkout with no tables)."""
    if x is None or x is pd.NA or (isinstance(x, numbers.Real) and math.isnan(float(x))):
        return _MISSING
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return f"{float(x):.{digits}f}"


_DK, _DM, _dk = "D<sub>K</sub>", "d<sub>model</sub>", "d<sub>k</sub>"
# what a reader sees for a table's column (HTML); the data and the chapters' code keep the names on the left.
# Widths and counts are in dimensions / items / runs; a column not listed shows its name with spaces for "_".
_COLUMN_LABELS: dict[str, str] = {
    "m": "items m", "d_model": f"model width {_DM}", "h": "heads h", "d_k": f"head width {_dk}",
    "D_K": f"key width {_DK} = h·{_dk}", "r": "edges per item r", "ell": "context length ℓ", "tau": "threshold τ",
    "m_edges": "edges", "seed": "seed", "seeds": "seeds", "n_seeds": "seeds", "runs": "runs", "steps": "steps",
    "max_steps": "step budget", "f1": "F1", "test_f1": "test F1", "F1": "F1", "B": "block size B",
    "D_K_star": f"{_DK}* (key width at the F1 target)", "D_K*": f"{_DK}*", "D_K_lo": f"{_DK} low",
    "D_K_hi": f"{_DK} high", "D_K_opt": f"{_DK}* optimistic", "D_K_cons": f"{_DK}* conservative",
    "D_K_pred": f"predicted {_DK}", "D_K_star_soft": f"{_DK}* softmax", "D_K_star_max": f"{_DK}* max-over-heads",
    "best_D_K": f"best {_DK}", "bound_DK": f"lower bound on {_DK}", "bound_DK_b32": f"lower bound on {_DK} (b = 32)",
    "h_star": "best heads h*", "h*": "best heads h*", "h_lo": "h low", "h_hi": "h high",
    "h_star_soft": "h* softmax", "h_star_max": "h* max-over-heads", "h_best": "best h", "h_bound": "h bound",
    "h_rule": "h by the rule", "h_inside": "h inside interval", "h0": "h₀", "d_k_rule": f"{_dk} by the rule",
    "max_best_h": "max-over-heads F1, best h", "max_one_head": "best single head", "d_median": "median degree",
    "d_max": "largest degree", "d_model_cross": f"{_DM} where they cross", "m_prime": "m′",
    "m_cap": "capacity m", "m_cap_lo": "capacity m low", "m_cap_hi": "capacity m high", "lam": "λ",
    "lam_cap": "λ capacity",
    "ln_m": "ln m", "ln_ell": "ln ℓ", "log2_count": "log₂ count", "kappa": "κ", "gamma": "γ", "delta": "δ",
    "c_p": "c<sub>p</sub>", "c_B": "c<sub>B</sub>", "p_B": "p<sub>B</sub>", "C_eff": "effective capacity C",
    "r2": "R²", "nearest_r2": "nearest R²", "f1_pred": "predicted F1", "f1_measured": "measured F1",
    "f1_lo": "F1 low", "f1_hi": "F1 high", "best_f1_one_soft_head": "best F1, one softmax head",
    "best_over_bound": "best / bound", "predicted_ratio": "predicted ratio", "ratio_cross": "ratio where they cross",
    "form_ratio": "ratio of forms", "regime_form": "regime's form", "general_form": "general form",
    "slope_matches": "slope agrees", "verdict_reading": "verdict (reading)", "reading_inside": "reading inside",
    "paper_inside": "paper inside", "read_for": "read for", "in_domain": "in domain", "skew_ok": "skew within limit",
    "limit_slack": "slack at limit", "limit_separated": "separated at limit", "min_edge": "smallest edge score",
    "max_non_edge": "largest non-edge score", "leak_sd": "leakage s.d.", "leak_sd_predicted": "predicted leakage s.d.",
    "present_rate": "present: rate", "present_non_owner": "present: non-owner",
    "present_no_leak": "present: no leakage",
    "present_failures": "present: failures", "absent_no_leak": "absent: no leakage", "absent_max": "absent: largest",
    "absent_false_positives": "absent: false positives", "pair_errors": "pair errors", "ones_per_row": "ones per row",
    "largest_block": "largest block", "entropy_lo": "entropy low", "entropy_hi": "entropy high",
    "m/d_model": f"m / {_DM}", "test_acc": "test accuracy",
}


def _column_label(name: object) -> str:
    """What a reader sees as the header of column ``name``: :data:`_COLUMN_LABELS`, else the name with
    spaces for underscores (a label already in words passes through)."""
    text = str(name)
    return _COLUMN_LABELS.get(text, text.replace("_", " "))


# --------------------------------------------------------------------------------- a finding glued by field name


def _finding_values(found: Any, digits: Mapping[str, int] | None = None, prefix: str = "") -> dict[str, Any]:
    """What :func:`glue_finding` glues: every field of the dataclass ``found`` under ``prefix`` + its name
    (:func:`rgr.results.findings.entries`); a field named in ``digits`` as prose, rounded to that many decimals,
    "—" where it is missing (:func:`_number`)."""
    if not dataclasses.is_dataclass(found) or isinstance(found, type):
        raise TypeError(f"found must be a dataclass instance, got {type(found).__name__}")
    digits = dict(digits or {})
    unknown = set(digits) - {f.name for f in dataclasses.fields(found)}
    if unknown:
        raise ValueError(f"digits names no field of {type(found).__name__}: {sorted(unknown)}")
    out: dict[str, Any] = {}
    for f in dataclasses.fields(found):
        value = getattr(found, f.name)
        if f.name in digits:
            out[prefix + f.name] = glued(_number(value, digits[f.name]))
        else:
            out.update(entries(prefix + f.name, value))
    return out


def glue_finding(found: Any, digits: Mapping[str, int] | None = None, prefix: str = "") -> None:
    """Glue every field of the frozen finding ``found`` under its field name, without displaying it
    (:func:`_finding_values` says what is glued)."""
    from myst_nb import glue  # the book's renderer; imported here so that rgr imports without it

    for name, value in _finding_values(found, digits, prefix).items():
        glue(name, value, display=False)


def show_figure(name: str, fig: Figure) -> None:
    """Glue ``fig`` under ``name`` without showing it in the code cell (the chapter's Markdown places it with
    ``{glue:figure}`name```), then close it: the one way a chapter shows a figure, instead of
    ``glue(name, fig, display=False); plt.close(fig)``."""
    import matplotlib.pyplot as plt
    from myst_nb import glue  # the book's renderer; imported here so that rgr imports without it

    glue(name, fig, display=False)
    plt.close(fig)


def prose_digits(found: Any, default: int = 2, **exact: int) -> dict[str, int]:
    """:func:`glue_finding`'s ``digits`` for the frozen finding ``found``: every field holding a float or None
    (shown "—") at ``default`` decimals, or at ``exact[field]``."""
    if not dataclasses.is_dataclass(found) or isinstance(found, type):
        raise TypeError(f"found must be a dataclass instance, got {type(found).__name__}")
    names = {f.name for f in dataclasses.fields(found)}
    unknown = set(exact) - names
    if unknown:
        raise ValueError(f"exact names no field of {type(found).__name__}: {sorted(unknown)}")
    return {name: exact.get(name, default) for name in names
            if getattr(found, name) is None or isinstance(getattr(found, name), float)}


# ------------------------------------------------------------- each chapter's tables, downloadable from its page


_SITE_DATA = "../data"  # data/ as seen from a chapter's page (book/<chapter>.html) or notebook (book/)


def _rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)


def download_links(names: Sequence[str], root: Path | None = None) -> HTML:
    """HTML links to the tables ``names`` (with their row counts) and to data/SCHEMA.md.

    A table this checkout does not have (a chapter running on smoke data) is named as missing, not linked.
    """
    if isinstance(names, str) or not len(names):
        raise ValueError(f"names must be a non-empty list of table names, got {names!r}")
    known = set(TABLES)
    unknown = [n for n in names if n.removesuffix(".csv") not in known]
    if unknown:
        raise ValueError(f"names: no table called {unknown} (the tables of data/ are {sorted(known)})")
    files = [data_dir(root) / (n if n.endswith(".csv") else f"{n}.csv") for n in names]
    items = [f'<a href="{_SITE_DATA}/{html.escape(p.name)}" download>{html.escape(p.name)}</a> ({_rows(p):,} rows)'
             for p in files if p.is_file()]
    items += [f"{html.escape(p.name)} (not in this checkout)" for p in files if not p.is_file()]
    schema = f'<a href="{_SITE_DATA}/SCHEMA.md">SCHEMA.md</a>'
    return HTML(
        '<div class="rgr-downloads">The data behind this chapter: '
        + ", ".join(items)
        + f"; what each column means: {schema}.</div>"
    )
