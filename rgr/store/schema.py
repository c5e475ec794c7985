"""Typed columns, table schemas and provenance: what a row of data/ must hold (ground wing; see :mod:`rgr.store`)."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Sequence

import pandas as pd
import torch

from .. import __version__
from ..paths import repo_root

_DTYPES = {"int": "int64", "float": "float64", "str": "object", "bool": "bool", "json": "object"}


class TableError(ValueError):
    """A table in data/ is missing, truncated or malformed."""


class TableBusy(RuntimeError):
    """Another process is running a sweep into the same table."""


@dataclass(frozen=True)
class Column:
    """One column: its type, what it means, where it may be empty and which values are valid.

    ``nullable``: empty values allowed; ``null_when=(column, values)`` narrows that to the rows
    whose ``column`` is one of ``values``. ``low``/``high``: the closed range of valid values.
    ``since``: when the column was added (a date); a table written before it may lack the
    column, which then reads as empty (so it must be nullable) and is written on the next merge.
    """

    name: str
    dtype: str  # int | float | str | bool | json
    doc: str
    nullable: bool = False
    low: float | None = None
    high: float | None = None
    null_when: tuple[str, tuple[str, ...]] | None = None
    since: str | None = None
    choices: tuple[str, ...] | None = None  # the values a str column may take (None: any)

    def __post_init__(self) -> None:
        if self.dtype not in _DTYPES:
            raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {self.dtype!r}")
        if self.null_when is not None and not self.nullable:
            raise ValueError(f"column {self.name!r}: null_when needs nullable=True")
        if self.since is not None and not self.nullable:
            raise ValueError(f"column {self.name!r}: since needs nullable=True (older tables read it as empty)")

    def describe(self) -> str:
        """Type and constraints in words, for the schema doc."""
        parts = [self.dtype]
        if self.low is not None or self.high is not None:
            lo = "-inf" if self.low is None else f"{self.low:g}"
            hi = "inf" if self.high is None else f"{self.high:g}"
            parts.append(f"in [{lo}, {hi}]")
        if self.nullable:
            parts.append("(may be empty" + (f" where {self.null_when[0]} is {'/'.join(self.null_when[1])})"
                                             if self.null_when else ")"))
        if self.choices is not None:
            parts.append("one of " + " | ".join(self.choices))
        if self.since is not None:
            parts.append(f"(added {self.since}; empty in rows written before)")
        return " ".join(parts)


PROVENANCE: tuple[Column, ...] = (
    Column("rgr_version", "str", "version of the rgr package that produced the row"),
    Column("git_commit", "str", "git commit of the repository (suffix +dirty if rgr/ had uncommitted changes)"),
    Column("torch_version", "str", "torch version"),
    Column("device_name", "str", "the device the run trained on (GPU name, or the CPU)"),
    Column("preset", "str", "preset of the experiment: smoke, book or paper; gpt2 also compressive (E7 at "
           "m / d_model = 8 on a CPU) and compressive_pilot (its pilot); settled also wide (its (4096, 512) cell)",
           choices=("smoke", "book", "paper", "compressive", "compressive_pilot", "wide")),
    Column("date", "str", "UTC date and time the row was written (ISO 8601)"),
)


@dataclass(frozen=True)
class RowKey:
    """How a table's ``run_key`` follows from the row's own ``columns``: ``of(df)`` gives the key of each row of the
    typed table. The loader recomputes it, so a row edited under its old key is refused (:func:`rgr.store.load_table`).

    The store does not know how a table is keyed: the module that declares a table's schema passes this in.
    """

    columns: tuple[str, ...]  # the columns the key is computed from (named when a row's key disagrees)
    of: Callable[[pd.DataFrame], Sequence[str | None]]

    @classmethod
    def per_row(cls, columns: Sequence[str], key_of: Callable[[dict], str]) -> "RowKey":
        """A key from one row at a time: ``key_of`` gets a dict of ``columns``' values (empty ones as None). A row
        whose values make no valid config (``key_of`` raises ValueError or TypeError) has no key, so it is refused.
        One call per row: for tables of a few hundred rows (a sweep's thousands want a vectorised ``of``)."""
        names = tuple(columns)

        def of(df: pd.DataFrame) -> list[str | None]:
            return [_key_or_none(key_of, dict(zip(names, (None if pd.isna(v) else v for v in values))))
                    for values in zip(*(df[c].tolist() for c in names))]

        return cls(names, of)


def _key_or_none(key_of: Callable[[dict], str], row: dict) -> str | None:
    try:
        return key_of(row)
    except (ValueError, TypeError):
        return None


@dataclass(frozen=True)
class Schema:
    """The columns of one experiment's table (the run key first, the provenance columns appended).

    ``key``: how ``run_key`` is computed from the row (:class:`RowKey`), checked on every load and write; every
    table of data/ declares one. ``None`` (toy tables of the tests) skips that check.
    """

    name: str
    columns: tuple[Column, ...]
    checks: tuple[tuple[str, Callable[[pd.DataFrame], pd.Series]], ...] = ()  # (what must hold, rows where it fails)
    key: RowKey | None = None

    def renamed(self, name: str) -> "Schema":
        """The same columns, checks and key for the table called ``name``."""
        return Schema(name, self.columns, self.checks, self.key)

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return (Column("run_key", "str", "hash of the run's config and preset; unique per row"), *self.columns,
                *PROVENANCE)

    def markdown(self) -> str:
        """The schema as a markdown table, for data/'s schema doc."""
        lines = [f"### `{self.name}.csv`", "", "| column | type | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{c.name}` | {c.describe()} | {c.doc} |" for c in self.all_columns]
        return "\n".join(lines) + "\n"


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The commit (``+dirty`` when rgr/ had uncommitted changes) of the code this process loaded.

    Read once, when rgr.store is imported: a long sweep's rows keep naming the code that trains them
    even if the checkout changes under the running process. ``RGR_GIT_COMMIT``, when set, names the commit
    instead: for a copy of the tree whose .git is missing or stale (a rented GPU machine's copy once carried an
    older .git, so its rows named that commit ``+dirty``); ``scripts/gpu_lease.sh`` is run with it.
    """
    if os.environ.get("RGR_GIT_COMMIT"):
        return os.environ["RGR_GIT_COMMIT"]
    fallback = "unknown"
    try:
        root = repo_root()
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return fallback
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "rgr"], cwd=root, capture_output=True, text=True,
                               timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError, FileNotFoundError):
        return fallback


code_version()  # pin the version at import time (see the docstring)


def _device_name(device: torch.device | str) -> str:
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.machine()}, {os.cpu_count()} cores)"


def provenance(preset: str, device: torch.device | str) -> dict[str, str]:
    """The provenance fields of rows written now, by this code, on ``device``."""
    return {
        "rgr_version": __version__,
        "git_commit": code_version(),
        "torch_version": torch.__version__,
        "device_name": _device_name(device),
        "preset": preset,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
