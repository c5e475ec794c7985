"""From a chapter's frozen finding to its prose: :func:`glue_finding`, the one way a chapter glues numbers.

A chapter's Markdown pastes ``{glue:text}`name```; every such name is a field of a frozen dataclass that an
``rgr.results`` function returned (nested fields joined by ``_``, tuples as ``name_0``, ``name_1``, ...; see
:func:`rgr.results.findings.entries`), so a pasted number leads to the function that computed it by its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ..results.findings import entries, glued
from .display import number

__all__ = ["finding_values", "glue_finding", "prose_digits"]


def finding_values(found: Any, digits: Mapping[str, int] | None = None, prefix: str = "") -> dict[str, Any]:
    """What :func:`glue_finding` glues: every field of the dataclass ``found`` under ``prefix`` + its name
    (:func:`rgr.results.findings.entries`); a field named in ``digits`` as prose, rounded to that many decimals,
    "—" where it is missing (:func:`rgr.chapters.display.number`)."""
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
            out[prefix + f.name] = glued(number(value, digits[f.name]))
        else:
            out.update(entries(prefix + f.name, value))
    return out


def glue_finding(found: Any, digits: Mapping[str, int] | None = None, prefix: str = "") -> None:
    """Glue every field of the frozen finding ``found`` under its field name, without displaying it
    (:func:`finding_values` says what is glued)."""
    from myst_nb import glue  # the book's renderer; imported here so that rgr imports without it

    for name, value in finding_values(found, digits, prefix).items():
        glue(name, value, display=False)


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
