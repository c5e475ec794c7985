"""Glued numbers carry no last bits that vary by CPU (issue 33): nbval compares their repr digit for digit."""

from __future__ import annotations

import inspect
import json
import math
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pytest

from rgr.results.findings import glued
from tests import ROOT

DIGITS = inspect.signature(glued).parameters["digits"].default  # the decimals a glued float keeps

BOOK = ROOT / "book"
CHAPTERS = sorted(BOOK.glob("*.ipynb"))


def test_glued_rounds_floats_only():
    assert DIGITS == 6 and glued(0.1234567891) == 0.123457 and glued(np.float64(1 / 3), 2) == 0.33
    assert type(glued(np.float64(0.5))) is float
    assert glued(True) is True and glued(np.int64(7)) == 7 and glued("0.1234567891") == "0.1234567891"
    assert math.isnan(glued(float("nan"))) and glued(float("inf")) == float("inf")


def _glued_numbers(path: Path) -> list[tuple[str, str]]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            text = "".join(o.get("data", {}).get("application/papermill.record/text/plain", ""))
            if name:
                try:
                    Decimal(text)
                except InvalidOperation:
                    continue  # a string, a figure
                out.append((name, text))
    return out


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_glued_number_carries_more_than_DIGITS_decimals(chapter):
    """A raw float glued (a fit's slope, say) stores 17 digits whose last ones differ between BLAS kernels."""
    numbers = _glued_numbers(chapter)
    long = [(n, t) for n, t in numbers if Decimal(t).is_finite() and Decimal(t).as_tuple().exponent < -DIGITS]
    assert not long, f"glue these through rgr.results.findings.glued: {long}"


def test_glued_text_shows_without_quotes():
    """Issue 30: a glued word read "the paper's value is 'inside'" (myst-nb glues the text repr)."""
    from IPython.lib.pretty import pretty

    from rgr.results.findings import Text

    word = glued("inside")
    assert isinstance(word, Text) and word == "inside"
    assert repr(word) == pretty(word) == "inside" and pretty("inside") == "'inside'"
    assert glued(1.5) == 1.5 and glued(True) is True
