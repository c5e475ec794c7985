"""The claim registry of *Does it replicate?*: one reader per claim key, in the claims' order; evaluate walks it and
reads every claim of it (rgr.results.replication.registry.read refuses a row of another reader's claim)."""

import pandas as pd
import pytest

from rgr import catalog
from rgr.results import reported as rep
from rgr.results.replication.registry import READERS, evaluate
from rgr.results.replication.rows import ClaimRow, Source
from rgr.results.replication.verdicts import Verdict


def test_every_claim_has_one_reader_in_the_claims_order():
    assert list(READERS) == [c.key for c in rep.CLAIMS]


def test_evaluate_reads_every_claim_of_the_registry_on_the_committed_tables():
    names = ("base", "lambda8", "lambda32", "regular", "softmax", "value", "gpt2")
    assert {r.key for r in evaluate({n: Source(n, "book", catalog.load(n, "book")) for n in names})} == set(READERS)


def test_a_row_of_another_readers_claim_is_refused(monkeypatch):
    """evaluate takes each claim's row from its own reader: a reader that returns another's row stops it."""
    stray = ClaimRow("gpt2_best", "-", "-", "-", Verdict("not testable", "stray", cause="no_data"))

    def quiet(ins) -> list:
        return []

    for key in READERS:
        monkeypatch.setitem(READERS, key, quiet)
    sources = {n: Source(n, "book", pd.DataFrame()) for n in ("base", "lambda8", "regular", "softmax", "value", "gpt2")}
    assert evaluate(sources) == []  # every reader read, none gives a row
    monkeypatch.setitem(READERS, "law_slope_all", lambda ins: [stray])
    with pytest.raises(ValueError, match="gave the row of 'gpt2_best'"):
        evaluate(sources)
