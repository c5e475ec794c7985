"""Can the paper's fits come from its own Table 1? (rgr.results.replication.paper_arithmetic)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rgr.results.replication import reported as rep
from rgr.results.replication.paper_arithmetic import check_words, meet_in_the_middle, printed_half_unit, table1_heads
from rgr.results.stats import fit_line


def test_printed_half_unit():
    assert printed_half_unit("0.966") == pytest.approx(0.0005)
    assert printed_half_unit("1.19") == pytest.approx(0.005)
    assert printed_half_unit("−6.64") == pytest.approx(0.005)
    assert printed_half_unit("11") == 0.5
    with pytest.raises(ValueError):
        printed_half_unit("[5, 24]")


def test_the_papers_head_counts():
    assert table1_heads() == (1, 2, 4, 8, 16, 32, 64) and max(table1_heads()) == rep.PAPER_MAX_HEADS


@pytest.mark.parametrize("intercept", [False, True])
def test_the_meet_in_the_middle_count_equals_brute_force(intercept):
    # five cells, three choices each: every one of the 243 assignments fitted by hand
    rng = np.random.default_rng(7)
    x = rng.uniform(1, 6, 5)
    y = np.outer(rng.integers(2, 9, 5), [1.0, 2.0, 4.0])
    fits = [fit_line(x, y[np.arange(5), list(a)], intercept=intercept) for a in itertools.product(range(3), repeat=5)]
    slopes = np.array([f.slope for f in fits])
    target = fits[17]  # an assignment that exists, so the count is at least 1
    win = (target.slope - 0.05, target.slope + 0.05)
    icpt = (target.intercept - 1.0, target.intercept + 1.0) if intercept else None
    r2_tol = 0.01
    keep = (slopes >= win[0]) & (slopes <= win[1])
    if intercept:
        keep &= np.array([icpt[0] <= f.intercept <= icpt[1] for f in fits])
    hits = keep & np.array([abs(f.r2 - target.r2) <= r2_tol for f in fits])
    n_slope, tallies = meet_in_the_middle(x, y, intercept, win, icpt, target.r2, r2_tol, chunk=7)
    assert n_slope == int(keep.sum()) and tallies["centred"].matches == int(hits.sum()) >= 1
    assert tallies["centred"].nearest[2] == pytest.approx(target.r2, abs=r2_tol)


def test_check_words_without_a_check_say_nothing():
    assert check_words([], "law_pre") == ""


def test_the_papers_table1_against_its_fits():
    # pure arithmetic on the paper's numbers: the precondition fit and the head-count line cannot come from Table 1
    from rgr.results.replication.registry import arithmetic

    checks = arithmetic()
    by = {(c.fit, c.base, c.r2_kind): c for c in checks}
    assert by[("law_pre", "ln", "centred")].assignments == 7 ** 9
    assert by[("heads", "—", "centred")].assignments == 7 ** 12
    for key in (("law_pre", "ln", "centred"), ("law_pre", "log2", "centred"), ("heads", "—", "centred")):
        assert by[key].slope_matches > 0 and not by[key].reproduced, key
    assert "no single assignment reproduces the paper's base-grid fits together" in check_words(list(checks), "heads")
