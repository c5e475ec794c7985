"""What the chapter *constructions* reads off its tables (rgr.results.constructions)."""

import math

import pandas as pd
import pytest

from rgr.results.constructions import checks_finding, finding_rows, sweeps_finding


def test_sweeps_finding_rows():
    success = pd.DataFrame(dict(label=["a"] * 4, C=[1, 1, 2, 2], success=[True, False, True, True]))
    table = pd.DataFrame(dict(m=[64], d_model=[16], rule=["prescribed"], criterion=["tau"], found=[False],
                              construction=["compressive"], d_k=[None], C_eff=[None], D_K=[None], n_seeds=[3]))
    phase = pd.DataFrame(dict(construction="compressive", m=64, B=[8, 16, 32], d_model=[8, 16, 32],
                              slack=[-2.0, -1.0, 0.2]))
    # two seeds: the RMS (slope 1) and the conditional mean (slope 1/2) agree; the largest fluctuation does not
    # (slopes log2 3 and 0 per seed, 1 on the seeds' mean); B = 2 lies below the fitted range
    leak = pd.DataFrame(dict(B=[2, 4, 8] * 2, seed=[0] * 3 + [1] * 3, n3_fluct_rms=[9.0, 1.0, 2.0] * 2,
                             n3_mean_max=[9.0, 1.0, 2 ** 0.5] * 2, n3_fluct_max=[9.0, 2.0, 6.0, 9.0, 2.0, 2.0],
                             predicted=[0.5, 1.0, 2.0] * 2))
    split = pd.DataFrame(dict(h=[1, 4], D_K=[64, 32], separated=[False, True]))
    bg = pd.DataFrame(dict(m=64, h=[1, 4], ell=16, d_k=62, max_non_edge=[0.1, 0.3], predicted=[0.0, 0.25],
                           absent_false_positives=[2, 5]))
    # one head on one-hot inputs (d_model = m = 64) inside Theorem 8.1: d_k >= 64 (ln 64)^2 = 1108, ell > 8 ln 64 = 33.3
    inside = pd.DataFrame(dict(m=64, h=1, ell=[34, 64], d_k=1108, absent_false_positives=[1, 0]))
    f = sweeps_finding(success, table, phase, leak, split, bg, (64, 16), bg_inside=inside)
    assert f.smallest_C == {"a": 2.0} and f.theory_d_k == -1 and f.grid_found == 0 and f.grid_cells == 1
    assert f.limit_first_ratio == pytest.approx(32 / math.log(64)) and f.n3_slope == pytest.approx(1.0)
    assert f.n3_mean_slope == pytest.approx(0.5) and (f.n3_ratio_lo, f.n3_ratio_hi) == (2.0, 2.0)
    assert f.n3_max_slope == pytest.approx(1.0) and f.n3_seeds == 2 and f.n3_by_seed[1] == "1.58, 0.00"
    assert (f.n3_by_seed[0], f.n3_by_seed[2]) == ("1.00, 1.00", "0.50, 0.50") and f.table_seeds == 3
    assert f.limit_last_negative == pytest.approx(16 / math.log(64))  # the onset lies between the two grid points
    assert f.first_D_K_by_h == {4: 32} and f.background_dev == pytest.approx(0.1)
    assert f.absent_fp_inside == 1 and f.absent_inside_ells == "34, 64" and f.absent_inside_d_k == 1108
    assert f.limit_m == 64 and f.absent_ell_min == 34  # ell > 8 ln 64 = 33.3
    rows = finding_rows(f)
    assert len(rows) == 11 and set(rows.kind) == {"evidence", "sanity check"}
    assert rows.kind[rows.quantity.str.contains("non-owner|uniform|max non-edge")].eq("sanity check").all()
    outside = inside.assign(ell=[16, 64])  # ell = 16 <= 8 ln 64: the theorem says nothing there
    with pytest.raises(ValueError, match="outside Theorem 8.1"):
        sweeps_finding(success, table, phase, leak, split, bg, (64, 16), bg_inside=outside)


def test_checks_finding():
    p84 = pd.DataFrame(dict(h=[1, 1, 4, 4], D_K=[64, 256, 64, 256], present_failures=[9, 7, 3, 5],
                            f1=[0.5, 0.9, 0.6, 0.8]))
    rbce = pd.DataFrame(dict(limit_separated=[False, True]))
    skew = pd.DataFrame(dict(d_k=[12.0, None], C_eff=[30.0, float("nan")], n_seeds=[1, 1]))
    f = checks_finding(p84, rbce, skew)
    assert f.rbce_verdict == "separates every pair for some"
    assert (f.skew_found, f.skew_n, f.skew_C_lo, f.skew_C_hi) == (1, 2, 30.0, 30.0)
    assert (f.skew_d_k_lo, f.skew_d_k_hi, f.skew_seeds) == (12, 12, 1)
    g = checks_finding(p84[p84.h == 1], rbce.assign(limit_separated=False), skew)
    assert g.rbce_verdict == "separates every pair for no"
    none = checks_finding(p84, rbce, skew.drop(columns="n_seeds").assign(d_k=None))
    assert (none.skew_found, none.skew_d_k_lo, none.skew_seeds) == (0, -1, -1)
    assert f.p84_by_budget == ("at D_K = 64, 3 failures (F1 0.600) with 4 heads against 9 (F1 0.500) with one: "
                               "4 heads ahead on both; at D_K = 256, 5 failures (F1 0.800) with 4 heads against 7 "
                               "(F1 0.900) with one: fewer failures with 4 heads, higher F1 with one head")
    assert g.p84_by_budget == "no budget with both designs"
    tie = checks_finding(p84.assign(present_failures=[3, 7, 3, 5], f1=[0.6, 0.9, 0.6, 0.8]), rbce, skew)
    assert tie.p84_by_budget.startswith("at D_K = 64, 3 failures (F1 0.600) with 4 heads against 3 (F1 0.600) "
                                        "with one: equal failures, equal F1;")
