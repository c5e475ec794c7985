"""Theorem 8.1's explicit bounds (rgr.theory.theorem81) and the finding about the paper's theory
(rgr.results.constructions.paper_theory_finding) that the constructions chapter glues and the intro and the replication
summary paste."""

import math

import pandas as pd
import pytest

from rgr.results.constructions import paper_theory_finding
from rgr.studies.construction_sweeps import ConstructionsPreset
from rgr.studies.theory_checks import algorithm1_onset, theorem81_tables
from rgr.theory.theorem81 import (
    PROOF_C,
    REPAIR_C,
    inside_theorem81,
    repair_smallest_m,
    theorem81_bounds,
    theorem81_widths,
)


def test_bounds_follow_the_proof_constants():
    b = theorem81_bounds(1024, 512)
    assert b.d_k_min == math.ceil(64 * math.log(1024) ** 2)  # gamma = sqrt(C)/2 - 1 >= 3
    assert b.ell_min == 56 and 8 * math.log(1024) < b.ell_min <= 8 * math.log(1024) + 1  # ell > 8 max(h, ln m)
    assert theorem81_bounds(64, 2).ell_min == 8 * 32 + 1  # h = 32 > ln 64: the head count sets the bound
    assert inside_theorem81(1024, 512, b.d_k_min, 56) and not inside_theorem81(1024, 512, b.d_k_min - 1, 56)
    assert not inside_theorem81(1024, 512, b.d_k_min, 16) and not inside_theorem81(1024, 512, b.d_k_min, 2048)
    assert theorem81_widths(1024, 512, 3) == [b.d_k_min, 2 * b.d_k_min, 4 * b.d_k_min]
    with pytest.raises(ValueError, match="divide"):
        theorem81_bounds(1000, 512)
    with pytest.raises(ValueError, match="d_model"):
        theorem81_bounds(1024, 0)


def test_repair_window_opens_late():
    def need(m: int, C: float = PROOF_C) -> float:  # the window C (ln m)^2 <= d_k <= c d_model / ln m is open
        return (C / REPAIR_C) * math.log(m) ** 3

    m = repair_smallest_m()
    assert m / 2 >= need(m) and m / 4 < need(m // 2)  # the first power of two
    m2 = repair_smallest_m(C=2.0)
    assert m2 < m and m2 / 2 >= need(m2, 2.0) and m2 / 4 < need(m2 // 2, 2.0)  # the book's C = 2: far earlier
    assert repair_smallest_m(h=4) == next(2**k for k in range(2, 41) if 2**k / 4 >= need(2**k))
    assert repair_smallest_m(max_log2=4) == -1  # not open below 2^4
    with pytest.raises(ValueError, match="h"):
        repair_smallest_m(h=1)
    with pytest.raises(ValueError, match="C > 0"):
        repair_smallest_m(C=0.0)
    with pytest.raises(ValueError, match="c > 0"):
        repair_smallest_m(c=-1.0)


def _sweep(m, d_model, d_ks, ell, present, no_leak, kappa=5.0, n=10):
    return pd.DataFrame(dict(m=m, d_model=d_model, h=m // d_model, d_k=d_ks, ell=ell, n=n, kappa=kappa,
                             present=present, present_no_leak=no_leak, n_present=1000))


def test_finding_reads_synthetic_tables():
    w = theorem81_widths(1024, 512)
    gap = pd.concat([_sweep(1024, 512, w, 56, [10, 20, 30], [3, 4, 3]),
                     _sweep(1024, 512, w, 256, [5, 9, 12], [0, 1, 0])], ignore_index=True)
    repair = _sweep(4096, 2048, [97, 216, 864], 64, [40, 43, 109], [34, 34, 27], kappa=[0.39, 0.88, 3.5])
    onset = pd.DataFrame(dict(m=[256] * 4, d_model=[150, 150, 180, 180], ratio=[27.0, 27.0, 32.5, 32.5],
                              seed=[0, 1, 0, 1], separated=[False, False, True, False]))
    f = paper_theory_finding(gap, repair, onset)
    assert f.gap_inside and f.gap_ell == 256 and f.gap_ell_short == 56
    assert (f.gap_present_lo, f.gap_present_hi, f.gap_short_present_hi, f.gap_no_leak_max) == (5, 12, 30, 4)
    assert f.gap_rate_hi == pytest.approx(12.0) and f.gap_contexts == 10
    assert f.repair_rows == 2 and f.repair_excess_max == 9 and f.repair_rows_inside == 0
    assert f.onset_lo == 32.5 and math.isnan(f.onset_all_lo)  # half the seeds at 32.5, never every seed
    assert f.gap_trend == "rise" and f.onset_ms == "256" and f.onset_noncompressive_ms == ""
    assert f.onset_fail_max == 32.5 and f.onset_all_ms == ""
    # the crossover's resolution: grid step 5.5, exactly half (1 of 2) at the crossover; with 2 seeds no share can
    # be told from a half (Wilson: 0 of 2 gives [0, 0.66])
    assert f.onset_step == pytest.approx(5.5) and f.onset_half_ms == "256"
    assert (f.onset_unsure_lo, f.onset_unsure_hi) == (27.0, 32.5)
    six = pd.DataFrame(dict(m=256, d_model=[150] * 6 + [180] * 6 + [200] * 6,
                            ratio=[27.0] * 6 + [32.5] * 6 + [36.0] * 6, seed=list(range(6)) * 3,
                            separated=[False] * 6 + [True, False] * 3 + [True] * 5 + [False]))
    h = paper_theory_finding(gap, repair, six)  # 0 of 6 can be told from a half, 3 and 5 of 6 cannot
    assert (h.onset_unsure_lo, h.onset_unsure_hi, h.onset_half_ms, h.onset_step) == (32.5, 36.0, "256", 4.5)
    # every seed first separates at 35 (compressive); a seed fails again at 40; at d_model >= m (300 > 256) the
    # every-seed point is not counted
    more = pd.concat([onset, pd.DataFrame(dict(m=[256] * 6, d_model=[194, 194, 222, 222, 300, 300],
                                               ratio=[35.0, 35.0, 40.0, 40.0, 54.1, 54.1], seed=[0, 1] * 3,
                                               separated=[True, True, True, False, True, True]))])
    g = paper_theory_finding(gap, repair, more)
    assert (g.onset_all_lo, g.onset_all_hi, g.onset_all_ms, g.onset_fail_max) == (35.0, 35.0, "256", 40.0)
    assert paper_theory_finding(gap, repair, more.assign(separated=True)).onset_half_ms == ""  # 2 of 2 at 27
    small = more.assign(m=128)  # the crossover (32.5 at d_model 180 >= 128) is not compressive
    assert paper_theory_finding(gap, repair, small).onset_noncompressive_ms == "128"
    assert math.isnan(paper_theory_finding(gap, repair, small).onset_all_lo)
    flat = gap.assign(present=[10, 9, 30, 5, 9, 12])
    assert paper_theory_finding(flat, repair, onset).gap_trend == "do not rise steadily"
    outside = gap.assign(ell=16)
    assert not paper_theory_finding(outside, repair, onset).gap_inside


def test_finding_refuses_mixed_cells():
    gap = pd.concat([_sweep(1024, 512, [3075], 56, [1], [0]), _sweep(256, 128, [1968], 45, [1], [0])])
    with pytest.raises(ValueError, match="one cell"):
        paper_theory_finding(gap, gap, pd.DataFrame(dict(m=[1])))


def test_smoke_tables_run_inside_the_theorem():
    p = ConstructionsPreset.named("smoke")
    t = theorem81_tables(p)
    f = paper_theory_finding(t.gap, t.repair, algorithm1_onset(list(p.onset_ms), list(p.onset_ratios), [0, 1]))
    assert f.gap_inside and f.gap_d_k_lo >= f.gap_d_k_min and f.gap_ell_short >= f.gap_ell_min
    assert t.sweep.inside.dtype == bool and len(t.sweep) == len(p.width_cells) * len(p.width_d_ks) * len(
        p.width_ells) + len(t.repair)
