"""What the chapter *lower bounds* reads off its tables (rgr.results.lower_bounds)."""

import dataclasses
import math

import pandas as pd
import pytest

from rgr.results import lower_bounds as lb
from rgr.theory.bounds import margin_bound_DK


def _bounds():
    reg = pd.DataFrame(dict(regime=["dense", "dense"], form_ratio=[1.0, 1.2], entropy_lo=[1, 2], log2_count=[2, 3],
                            entropy_hi=[3, 4]))
    gap = pd.DataFrame(dict(best_D_K=[10.0, None, 64.0], best_over_bound=[5.0, None, 20.0], m_edges=[64, 64, 64]))
    bnd = pd.DataFrame(dict(b=[1.0, 1.0, 8.0], bound_DK=[3.0, 4.0, 0.5]))
    return lb.bounds_finding(reg, gap, bnd, bits=1.0, table=pd.DataFrame(dict(n_seeds=[3, 3, 2])))


def _seed_paper():
    pc = pd.DataFrame(dict(m=[64, 64, 1024, 1024], ell=[4, 16, 4, 16], seed=0, d_median=[8.0, 20.0, 8.0, 22.0]))
    bud = pd.DataFrame(dict(m=[64, 512], d_model=32, D_K=[6.0, 128.0], source="trained D_K* (F1 >= 0.99)"))
    return lb.seed_paper_finding(pc, bud, budget_d_model=32)


def test_bounds_finding_synthetic():
    f = _bounds()
    assert f.form_ratio["dense"] == (1.0, 1.2) and (f.gap_lo, f.gap_hi) == (5.0, 20.0)
    assert f.largest_bound == {1.0: 4.0, 8.0: 0.5} and f.rank_one_percent == 50.0
    assert f.entropy_bracket == "holds" and f.bits == 1.0 and f.table_seeds == 2  # the fewest any row ran on


def test_margin_finding_synthetic():
    df = pd.DataFrame(dict(gamma=[0.01, 0.001], bits=[10.0, 13.0], bound_DK=[0.5, 0.2], D_K=[4, 8]))
    f = lb.margin_finding(df)
    assert f.recovered == "every" and f.gamma_min == 0.001
    assert f.bound_over_DK_max == round(0.5 / 4, 2)  # rounded to what the chapter shows
    assert math.isnan(f.best_case_over_DK_max)  # no m, d_model: not computed
    g = lb.margin_finding(df.assign(m=[64, 128], d_model=[64, 32]))
    best = max(margin_bound_DK(64, 64, 64, 1.0) / 4, margin_bound_DK(128, 128, 32, 1.0) / 8)
    assert g.best_case_over_DK_max == pytest.approx(best, abs=0.005)  # rounded to the chapter's 2 decimals
    assert best > f.bound_over_DK_max  # gamma = 1: the largest bound


def test_seed_paper_finding_synthetic():
    f = _seed_paper()
    assert f.m_spread == 2.0 and f.d_ref == 21.0 and f.budget_hi == 128.0 and f.budget_d_model == 32
    assert f.slope_ln_ell == pytest.approx(13 / math.log(4))


def test_margin_finding_rounds_to_what_the_chapter_shows():
    """Training takes a different float path per CPU: the finding keeps only the decimals the chapter shows (gamma 5,
    bits 1, the ratios 2)."""
    df = pd.DataFrame(dict(gamma=[0.000171565638881, 0.00040084117529], bits=[16.093914241066, 14.869644167294],
                           bound_DK=[0.3187113663536, 0.3524093685864], D_K=[4, 8]))
    f = lb.margin_finding(df)
    assert f.gamma_min == round(0.000171565638881, 5) == 0.00017
    assert f.bits_max == round(16.093914241066, 1)
    assert f.bound_over_DK_max == round(0.3187113663536 / 4, 2)


def test_lower_bounds_glue_names_are_field_names():
    from rgr.results.findings import flatten

    found = dataclasses.replace(_bounds(), form_ratio={}, gap_lo=3.069505285921, gap_hi=53.87711135806,
                                largest_bound={}, rank_one_percent=100 * 18 / 19)
    fm = lb.margin_finding(pd.DataFrame(dict(gamma=[0.01], bits=[10.2], bound_DK=[0.5], D_K=[4])))
    fs = dataclasses.replace(_seed_paper(), ell_hi=64, d_lo=5.0, d_hi=45.75, m_spread=4.0,
                             slope_ln_ell=15.292567433423, budget_hi=144.0, d_ref=23.0)
    v = flatten(lb.LowerBoundsFinding(bounds=found, margins=fm, contexts=fs))
    assert v["bounds_rank_one_percent"] == round(100 * 18 / 19, 6) and v["bounds_entropy_bracket"] == "holds"
    assert v["margins_recovered"] == "every" and v["contexts_budget_d_model"] == 32 and v["contexts_ell_hi"] == 64
    assert v["margins_gamma_min"] == 0.01 and v["bounds_bits"] == 1.0
