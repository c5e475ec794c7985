"""Can the paper's fits come from its own Table 1? (rgr.results.replication.paper_arithmetic).

The law's constant read three ways (rgr.results.replication.paper_arithmetic), the base Table 1 leaves the paper,
and the "weighting" cause of a law row."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from rgr.results import reported as rep
from rgr.results.replication.paper_arithmetic import (
    ArithmeticCheck,
    check_words,
    law_constant_values,
    law_constants,
    meet_in_the_middle,
    printed_half_unit,
    table1_base,
)
from rgr.results.replication.rows import ClaimRow, Reading
from rgr.results.replication.seed_bootstrap import seed_draws
from rgr.results.replication.verdicts import LOG_SPACE, Verdict, cause_of
from rgr.results.stats import fit_line
from rgr.theory.bounds import scaling_x


def test_printed_half_unit():
    assert printed_half_unit("0.966") == pytest.approx(0.0005)
    assert printed_half_unit("1.19") == pytest.approx(0.005)
    assert printed_half_unit("−6.64") == pytest.approx(0.005)
    assert printed_half_unit("11") == 0.5
    with pytest.raises(ValueError):
        printed_half_unit("[5, 24]")


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
    assert 2 ** (7 - 1) == rep.PAPER_MAX_HEADS  # seven head counts: 1, 2, 4, ..., 64, the paper's largest
    for key in (("law_pre", "ln", "centred"), ("law_pre", "log2", "centred"), ("heads", "—", "centred")):
        assert by[key].slope_matches > 0 and not by[key].reproduced, key
    assert "no single assignment reproduces the paper's base-grid fits together" in check_words(list(checks), "heads")


def _check(fit: str, base: str, matches: int) -> ArithmeticCheck:
    return ArithmeticCheck(fit, base, "centred", 12, 100, matches, matches, None)


def test_table1_leaves_the_paper_the_one_base_that_reproduces_a_law_fit():
    assert table1_base([_check("law_all", "ln", 5), _check("law_all", "log2", 0), _check("law_pre", "ln", 0),
                        _check("law_pre", "log2", 0)]) == "ln"
    assert table1_base([_check("law_all", "ln", 0), _check("law_pre", "log2", 2)]) == "log2"
    assert table1_base([_check("law_all", "ln", 0), _check("law_all", "log2", 0)]) == ""  # cannot tell
    assert table1_base([_check("law_all", "ln", 1), _check("law_pre", "log2", 1)]) == ""  # both: cannot tell
    assert table1_base([_check("heads", "—", 3)]) == ""  # the head-count line says nothing about the log


def _runs(c: float, seeds=(0, 1, 2), doubled: tuple[int, int] | None = None) -> pd.DataFrame:
    """Max-over-heads runs on the base grid whose h = 2 reaches F1 1 from D_K = c x (ln) upward, rounded up (twice
    that in the cell ``doubled``)."""
    rows = []
    for m in (64, 128, 256, 512):
        for d in (16, 32, 64):
            star = math.ceil(c * float(scaling_x(m, d))) * (2 if (m, d) == doubled else 1)
            for D_K in (star // 2, star, 2 * star):
                for s in seeds:
                    rows.append(dict(m=m, d_model=d, r=1, h=2, D_K=D_K, d_k=D_K / 2, seed=s,
                                     test_f1=1.0 if D_K >= star else 0.3, max_steps=20000))
    return pd.DataFrame(rows)


def test_the_three_readings_on_an_exact_law():
    checks = [_check("law_all", "ln", 5), _check("law_all", "log2", 0), _check("law_pre", "ln", 0),
              _check("law_pre", "log2", 0)]
    frame = law_constants(seed_draws(_runs(2.0)), checks)
    assert list(frame["cells"]) == ["all"] * 3 + ["pre"] * 3 and list(frame["n"]) == [12] * 3 + [9] * 3
    by = frame.set_index(["cells", "reading"])["value"]
    for cells in ("all", "pre"):
        assert by[(cells, "ln, least squares")] == pytest.approx(2.0, rel=0.02)  # ceil: just above 2
        assert by[(cells, LOG_SPACE)] == pytest.approx(2.0, rel=0.02)
        assert by[(cells, "log2, least squares")] == pytest.approx(by[(cells, "ln, least squares")] * math.log(2))
    assert not frame["inside"].any()  # 2.0 and 1.39 are far from 1.19 / 0.966, and the seeds do not move them
    assert list(frame["table1"].astype("Float64").fillna(-1)) == [5, 0, -1, 0, 0, -1]
    words = law_constant_values(frame, checks, rows=[])
    assert words.t1_base == "ln" and words.c_all.t1_ln == "5" and words.c_pre.ln.inside == "outside"
    assert words.cause_all == "no row"


@pytest.mark.parametrize("c", [0.5, 7.0])
def test_the_log_space_constant_of_an_exact_law_is_its_constant(c):
    frame = law_constants(seed_draws(_runs(c)), [])
    runs = _runs(c).query("test_f1 == 1").groupby(["m", "d_model"]).D_K.min()  # D_K* per cell, c x rounded up
    x = np.array([float(scaling_x(m, d)) for m, d in runs.index])
    expected = math.exp(np.mean(np.log(runs.to_numpy() / x)))  # exp(mean ln(D_K* / x)): every cell alike
    assert frame.set_index(["cells", "reading"]).loc[("all", LOG_SPACE), "value"] == pytest.approx(expected)
    assert expected == pytest.approx(c, rel=0.25)


def test_log_space_weighs_every_cell_alike_where_least_squares_follows_the_largest():
    def read(runs: pd.DataFrame) -> pd.Series:
        return law_constants(seed_draws(runs), []).set_index(["cells", "reading"])["value"]["all"]

    base, doubled = read(_runs(2.0)), read(_runs(2.0, doubled=(512, 16)))  # the largest x: D_K* twice the line
    assert doubled[LOG_SPACE] / base[LOG_SPACE] == pytest.approx(2 ** (1 / 12))  # one cell in twelve
    assert doubled["ln, least squares"] / base["ln, least squares"] > 1.3  # least squares follows the largest cell


def _law_row(readings: tuple[Reading, ...], cause: str = "", cells: tuple[float, float] = (math.nan, math.nan)):
    return ClaimRow("law_slope_all", "1.77", "[1.71, 2.23]", "b", Verdict("deviates", "far", cause=cause), value=1.77,
                    lo=1.71, hi=2.23, readings=readings, cells_lo=cells[0], cells_hi=cells[1])


def test_a_log_space_reading_that_holds_the_papers_value_is_the_cause_weighting():
    paper = rep.claim("law_slope_all").value
    holds = Reading(LOG_SPACE, 1.13, 1.06, 1.22, True)
    misses = Reading(LOG_SPACE, 1.5, 1.4, 1.6, False)
    assert cause_of(_law_row((holds,))) == "weighting"
    assert cause_of(_law_row((misses,))) == "unexplained"
    # the paper's value inside the bootstrap over cells is no cause: the book fits the cells the paper names
    assert cause_of(_law_row((misses,), cells=(1.0, 2.0))) == "unexplained"
    assert cause_of(_law_row((holds,), cells=(1.0, 2.0))) == "weighting"
    assert cause_of(_law_row((holds,), cause="paper_table1")) == "paper_table1"  # what the reader found comes first
    assert 1.0 < paper < 2.0
