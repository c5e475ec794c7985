"""Findings of chapter *denser graphs* on synthetic E4 tables whose answers are known by construction."""

import math

import pandas as pd
import pytest

from rgr.results.denser_graphs import denser_findings, forms_table
from rgr.results.findings import flatten
from rgr.results.thresholds import thresholds

LADDER = [2**k for k in range(1, 11)]


def _runs(threshold, rs=(1, 2, 4, 8, 16, 32), m=128, d=32, heads=(1, 4, 16)):
    rows = []
    for r in rs:
        for h in heads:
            for dk in [x for x in LADDER if x >= h]:
                for s in range(3):
                    ok = dk >= threshold(r) and h > 1
                    rows.append(dict(m=m, d_model=d, r=r, h=h, D_K=dk, seed=s, test_f1=1.0 if ok else 0.1))
    return pd.DataFrame(rows)


def test_a_law_in_r_m_log2_m_is_flat_in_its_own_form():
    # D_K* = 2^ceil(log2(r)) * 8: exactly proportional to x = (r m / d) log2 m for powers of two
    cells = thresholds(_runs(lambda r: 8 * r), law="regular")
    found = denser_findings(cells, 16)
    f = found.log2m_all  # every r of the table
    assert (f.form, f.r_max, f.n) == ("log2m", 32, 6)
    assert f.spread == pytest.approx(1.0) and f.r2 == pytest.approx(1.0) and f.one_constant.startswith("one constant")
    assert f.c == pytest.approx(8 / (128 / 32 * 7))
    b = found.bound_all
    assert b.spread == pytest.approx(7 / 2)  # log2(m / r) runs from 7 (r = 1) to 2 (r = 32)
    assert found.flatter_all == "the log2 m form" and found.log2m_16.n == 5 and found.log2m_all.n == 6
    assert found.bound_16.spread == pytest.approx(7 / 3)  # r <= 16: log2(m / r) from 7 to 3


def test_a_law_in_the_bound_form_is_flat_there():
    cells = thresholds(_runs(lambda r: r * math.log2(128 / r) * 4, rs=(1, 2, 4, 8, 16, 32)), law="regular")
    f = denser_findings(cells, 16)
    assert f.bound_all.spread < f.log2m_all.spread and f.flatter_all == "the lower bound's form"
    assert f.h_max == 16 and (f.r_first, f.r_last) == (1, 32) and f.fold == 32
    assert (denser_findings(cells, 16, 3).n_seeds, denser_findings(cells, 16, 3).n_heads) == (3, 3)


def test_heads_and_the_ratio_to_the_trend():
    cells = thresholds(_runs(lambda r: 8 * r), law="regular")
    f = denser_findings(cells, 16)
    # h* = 4 at small budgets (16 only where D_K >= 16 is needed and ties break to the larger mean, then smaller h)
    assert f.h_first == 4 and f.h_ratio_min == pytest.approx(min(
        h / (r * 128 / 32) for r, h in zip(cells.r, cells.h_star.astype(float))))
    assert "D_K* / x (log2 m)" in forms_table(cells)
    assert f.h_ratio_spread == pytest.approx(f.h_ratio_max / f.h_ratio_min) and f.h_factor == 2.0


def test_head_counts_against_the_papers_within_about_2x():
    cells = thresholds(_runs(lambda r: 8 * r), law="regular")
    trend = cells.r * cells.m / cells.d_model
    exact = denser_findings(cells.assign(h_star=trend.astype(int)), 4096)  # h* = r m / d_model everywhere
    assert exact.h_ratio_spread == pytest.approx(1.0) and exact.n_h_within == exact.n_reached == 6
    assert exact.h_proportional.startswith("the proportionality holds")
    flat = denser_findings(cells.assign(h_star=2), 4096)  # h* = 2 while r m / d_model runs 4 ... 128
    assert flat.h_ratio_spread == pytest.approx(32.0) and flat.n_h_within == 1  # only r = 1: 2 vs 4
    assert "fails here, for a reason unexplained" in flat.h_proportional
    assert denser_findings(cells.iloc[:0], 16).h_proportional == "—"


def test_no_threshold_gives_a_note():
    cells = thresholds(_runs(lambda r: math.inf, rs=(1, 2)), law="regular")
    f = denser_findings(cells, 16)
    assert f.n_reached == 0 and "got 0" in f.notes and math.isnan(f.log2m_16.c)
    assert flatten(f)["flatter_16"].startswith("neither")
