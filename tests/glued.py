"""What a chapter glues, read back in tests through the public :func:`rgr.chapters.display.glue_finding` (the book's
renderer's ``glue`` replaced by a recorder), so tests check the pasted values without reaching a private helper."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from unittest import mock

from rgr.chapters.display import glue_finding


def finding_values(found: Any, digits: Mapping[str, int] | None = None, prefix: str = "") -> dict[str, Any]:
    """Every name :func:`glue_finding` glues for ``found``, with its value, in the order glued."""
    out: dict[str, Any] = {}

    def record(name: str, value: Any, display: bool = True) -> None:
        assert not display, "glue_finding glues without displaying"
        out[name] = value

    with mock.patch("myst_nb.glue", record):
        glue_finding(found, digits, prefix)
    return out


def prose(x: object, digits: int = 2) -> str:
    """``x`` as a chapter's prose pastes it with ``digits`` decimals (a finding's field named in ``digits``)."""
    from dataclasses import make_dataclass

    one = make_dataclass("One", [("x", object)], frozen=True)
    return str(finding_values(one(x), {"x": digits})["x"])
