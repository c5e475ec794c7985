"""Each chapter's tables, downloadable from its page: :func:`download_links`.

A chapter calls ``download_links(["base", "constructions"])`` in a code cell below its results; the
output is a line of links to the CSV files behind its figures and to data/SCHEMA.md (what every column
means). The links are relative (``../data/<file>``): in the built site they point to the copies that the
book's Sphinx extension (book/_ext/rgr_site.py) puts into ``_build/html/data/``, and in Jupyter, where
a chapter runs in book/, to the repository's data/ folder itself.
"""

from __future__ import annotations

import csv
import html
from collections.abc import Sequence
from pathlib import Path

from IPython.display import HTML

from ..catalog import NAMES
from ..paths import data_dir

__all__ = ["SITE_DATA", "table_files", "download_links"]

SITE_DATA = "../data"  # data/ as seen from a chapter's page (book/<chapter>.html) or notebook (book/)


def table_files(names: Sequence[str], root: Path | None = None) -> list[Path]:
    """The CSV files of data/ named by ``names`` (``"base"`` or ``"base.csv"``), in the given order."""
    if isinstance(names, str) or not len(names):
        raise ValueError(f"names must be a non-empty list of table names, got {names!r}")
    folder = data_dir(root)
    files = []
    for name in names:
        path = folder / (name if name.endswith(".csv") else f"{name}.csv")
        if not path.is_file():
            raise FileNotFoundError(f"names: no table {path.name} in {folder}")
        files.append(path)
    return files


def _rows(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as f:
        return max(sum(1 for _ in csv.reader(f)) - 1, 0)


def download_links(names: Sequence[str], root: Path | None = None) -> HTML:
    """HTML links to the tables ``names`` (with their row counts) and to data/SCHEMA.md.

    A table this checkout does not have (a chapter running on smoke data) is named as missing, not linked.
    """
    if isinstance(names, str) or not len(names):
        raise ValueError(f"names must be a non-empty list of table names, got {names!r}")
    known = set(NAMES)
    unknown = [n for n in names if n.removesuffix(".csv") not in known]
    if unknown:
        raise ValueError(f"names: no table called {unknown} (the tables of data/ are {sorted(known)})")
    folder = data_dir(root)
    present = [n for n in names if (folder / (n if n.endswith(".csv") else f"{n}.csv")).is_file()]
    items = [
        f'<a href="{SITE_DATA}/{html.escape(p.name)}" download>{html.escape(p.name)}</a> ({_rows(p):,} rows)'
        for p in (table_files(present, root) if present else [])
    ]
    items += [f"{html.escape(n if n.endswith('.csv') else n + '.csv')} (not in this checkout)"
              for n in names if n not in present]
    schema = f'<a href="{SITE_DATA}/SCHEMA.md">SCHEMA.md</a>'
    return HTML(
        '<div class="rgr-downloads">The data behind this chapter: '
        + ", ".join(items)
        + f"; what each column means: {schema}.</div>"
    )
