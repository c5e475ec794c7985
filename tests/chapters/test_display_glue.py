"""rgr.chapters.display: a finding glued by field name, formatted where the chapter says so."""

import math
from dataclasses import dataclass

import pytest

from rgr.results.findings import Text, glued, listed
from tests.glued import finding_values

MISSING = "—"  # what a reader sees for a missing value


@dataclass(frozen=True)
class _Inner:
    a: int
    b: float


@dataclass(frozen=True)
class _Found:
    n: int
    ratio: float
    cell: int | None
    words: str
    heads: tuple[int, ...]
    inner: _Inner


def test_fields_by_name_digits_as_prose_and_missing_as_a_dash():
    f = _Found(n=3, ratio=1.23456789, cell=None, words="8, 8", heads=(1, 2), inner=_Inner(a=1, b=1 / 3))
    v = finding_values(f, digits={"ratio": 2, "cell": 0})
    assert list(v) == ["n", "ratio", "cell", "words", "heads_0", "heads_1", "inner_a", "inner_b"]
    assert v["ratio"] == "1.23" and isinstance(v["ratio"], Text) and v["cell"] == MISSING
    assert v["words"] == "8, 8" and not isinstance(v["words"], Text)  # "8, 8" would paste as the tuple (8, 8)
    assert v["inner_b"] == pytest.approx(0.333333) and v["heads_1"] == 2
    assert finding_values(f, prefix="x_")["x_n"] == 3
    assert finding_values(_Found(1, math.nan, 4, "ok", (), _Inner(1, 0.0)), digits={"ratio": 1})["ratio"] == MISSING


def test_bad_findings_and_digits():
    with pytest.raises(TypeError, match="dataclass instance"):
        finding_values({"n": 1})
    with pytest.raises(ValueError, match="no field"):
        finding_values(_Inner(1, 2.0), digits={"c": 1})


def test_what_pastes_as_itself():
    """glued gives a string as Text (no quotes) only where myst-nb's literal_eval reads it back as itself."""

    def pastes_as_itself(text: str) -> bool:
        return isinstance(glued(text), Text)

    assert pastes_as_itself("inside") and pastes_as_itself("0.33") and pastes_as_itself("1.21 (95% noise interval)")
    assert not pastes_as_itself("8, 8") and not pastes_as_itself("0.960") and not pastes_as_itself("[1,2]")
    assert pastes_as_itself("(1, 2)")  # reads back as itself


def test_a_list_as_prose_words_it():
    assert listed(["a"]) == "a" and listed(["a", "b"]) == "a and b" and listed(["a", "b", "c"]) == "a, b and c"
    with pytest.raises(ValueError, match="words"):
        listed([])
