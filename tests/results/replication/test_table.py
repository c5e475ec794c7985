"""The chapter-level words of :mod:`rgr.results.replication.table`."""

import pandas as pd

from rgr.results.replication.paper_arithmetic import arithmetic_summary
from rgr.results.replication.table import arithmetic, chapter_words
from rgr.results.replication.verdicts import CONVENTION, LAW_BASE


def test_chapter_words_read_the_base_rows_and_the_arithmetic():
    runs = pd.DataFrame([dict(h=h, seed=s) for h in (1, 8) for s in range(3)])
    words = chapter_words(runs, arithmetic())
    assert (words.convention, words.law_base) == (CONVENTION, LAW_BASE)
    assert "h = 8 with 3 seeds" in words.t1_basis
    assert words.arith_summary == arithmetic_summary(list(arithmetic())) != ""
    assert chapter_words(runs.iloc[:0], ()).t1_basis == "No base rows are read here."
