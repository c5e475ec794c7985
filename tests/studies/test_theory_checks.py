"""Issue 18: Algorithm 2's leakage term, Algorithm 1's onset, Prop. 8.4, Cor. B.7/B.10 (rgr.studies.theory_checks;
their readings: tests/results/; Theorem 9.2 and the per-context width:
tests/studies/test_lower_bounds.py)."""

import math
from dataclasses import replace

import pandas as pd
import pytest
import torch

from rgr.results.constructions import onset_crossover, softmax_width_finding
from rgr.studies import theory_checks as tc
from rgr.studies.construction_sweeps import ConstructionsPreset
from rgr.task.embeddings import gaussian_unit
from rgr.task.graphs import permutation_graph
from rgr.theory.constructions import construct_softmax
from rgr.theory.theorem81 import kappa, leakage_logit_sd, repaired_dk_window


def test_leakage_sd_closed_form():
    assert leakage_logit_sd(64, 128, 128) == pytest.approx(math.sqrt(64 * 128) / 128)
    # grows like sqrt(d_k): quadrupling the width doubles it
    assert leakage_logit_sd(400, 50, 100) == pytest.approx(2 * leakage_logit_sd(100, 50, 100))
    with pytest.raises(ValueError, match="d_model"):
        leakage_logit_sd(4, 4, 0)


def test_kappa_and_window():
    assert kappa(100, 1024, 512) == pytest.approx(100 * math.log(1024) / 512)
    lo, hi = repaired_dk_window(1024, 512, C=2, c=0.5)
    assert lo == pytest.approx(2 * math.log(1024) ** 2) and hi == pytest.approx(0.5 * 512 / math.log(1024))
    # the window is non-empty exactly when d_model >= (C/c) (ln m)^3
    m = 1024
    d_edge = 4 * math.log(m) ** 3
    assert repaired_dk_window(m, math.ceil(d_edge), 2, 0.5)[0] <= repaired_dk_window(m, math.ceil(d_edge), 2, 0.5)[1]
    lo, hi = repaired_dk_window(m, math.floor(d_edge) - 1, 2, 0.5)
    assert lo > hi
    with pytest.raises(ValueError, match="m >= 2"):
        repaired_dk_window(1, 4)


def test_leakage_logits_match_signature_average():
    """The leakage mean is the signature average of the logit minus the planted signal (Monte Carlo over seeds)."""
    m, d, dk = 32, 16, 8
    g, X = permutation_graph(m, 0), gaussian_unit(m, d, 0)
    items = torch.arange(8).view(1, 8)
    acc = torch.zeros(2, 8, 8, dtype=torch.float64)
    n = 400
    for s in range(n):
        c = construct_softmax(g, X, d_k=dk, h=2, seed=s)
        S = torch.einsum("ld,hdk,ne,hek->hln", X[items[0]].double(), c.weights.W_Q[0].double(), X[items[0]].double(),
                         c.weights.W_K[0].double())
        acc += S / math.sqrt(dk)
    c0 = construct_softmax(g, X, d_k=dk, h=2, seed=0)
    planted = torch.zeros(2, 8, 8, dtype=torch.float64)
    for k, blk in enumerate(c0.blocks):
        for s_, t_ in blk:
            if s_ < 8 and t_ < 8:
                planted[k, s_, t_] = math.sqrt(dk)
    mean = acc / n - planted
    L = tc.leakage_logits(c0, items)[0]
    assert torch.allclose(mean, L, atol=0.35)  # Monte Carlo error ~ sd / sqrt(n)
    assert float((mean - L).abs().mean()) < 0.08


def test_leakage_sd_measured_matches_and_grows():
    p = replace(ConstructionsPreset.named("smoke"), width_cells=((256, 128),), width_d_ks=(32, 512), width_ells=(16,),
                width_n=30, repair_cell=(64, 32), repair_d_ks=(8,))
    sweep = tc.theorem81_tables(p, n_widths=1).sweep
    df = sweep[sweep.m == 256].drop(columns="inside").reset_index(drop=True)
    assert df.d_k.tolist() == [32, 512]
    assert ((df.leak_sd / df.leak_sd_predicted - 1).abs() < 0.1).all()
    ratio = df.leak_sd.iloc[1] / df.leak_sd.iloc[0]
    assert ratio == pytest.approx(4.0, rel=0.1)  # sqrt(512 / 32)
    # wide heads fail more, and removing the leakage mean removes the growth
    assert df.present.iloc[1] > df.present.iloc[0]
    assert df.present_no_leak.iloc[1] < df.present.iloc[1] / 2
    f = softmax_width_finding(df, (256, 128), 16)
    assert f.sd_slope == pytest.approx(0.5, abs=0.05) and (f.cell, f.ell) == ((256, 128), 16)
    # one cell and length here: the slice is the whole sweep
    assert f.non_owner_percent_all == pytest.approx(f.non_owner_percent)
    two = pd.concat([df, df.assign(ell=64, present=df.present * 3, present_non_owner=0)], ignore_index=True)
    g = softmax_width_finding(two, (256, 128), 16)
    assert g.non_owner_percent == pytest.approx(f.non_owner_percent)
    assert g.non_owner_percent_all == pytest.approx(100 * df.present_non_owner.sum() / (4 * df.present.sum()))


def test_softmax_failures_one_hot_has_no_leakage():
    g = permutation_graph(64, 0)
    c = construct_softmax(g, torch.eye(64), h=4, seed=0)
    f = tc.softmax_failures(c, g, n=30, ell=16)
    assert f.present == f.present_no_leak and f.absent == f.absent_no_leak  # X X^T = I: no leakage mean
    with pytest.raises(ValueError, match="softmax"):
        from rgr.theory.constructions import construct_compressive
        tc.softmax_failures(construct_compressive(g, gaussian_unit(64, 16, 0), d_k=8), g)


def test_onset_and_crossover():
    df = tc.algorithm1_onset([64], [10.0, 60.0], [0, 1])
    assert not df[df.ratio < 20].separated.any() and df[df.ratio > 50].separated.all()
    cr = onset_crossover(df)
    assert cr.ratio_cross.iloc[0] > 50 and not bool(cr.compressive.iloc[0])  # 60 ln 64 > 64
    synth = pd.DataFrame(dict(m=[8] * 4, d_model=[2, 2, 4, 4], ratio=[1.0, 1.0, 2.0, 2.0], seed=[0, 1, 0, 1],
                              separated=[False, True, True, True]))
    assert onset_crossover(synth).ratio_cross.iloc[0] == 1.0 and onset_crossover(synth).seeds_separating.iloc[0] == 1
    assert onset_crossover(synth.assign(separated=False)).seeds_separating.iloc[0] == -1
    assert math.isnan(onset_crossover(synth.assign(separated=False)).ratio_cross.iloc[0])


def test_prop84_and_tables():
    p = tc.prop84_table(128, 32, [64, 256], n=20, ell=16)
    assert set(p.h) == {1, 4} and (p.d_k * p.h == p.D_K).all()
    assert p.predicted_ratio.iloc[0] == pytest.approx(4 / math.log(128))
    s = tc.bounded_skew_table(128, [2], 32, [0], d_k_max=64)
    assert s.n_seeds.tolist() == [1]
    assert s.h0.iloc[0] == math.ceil(256 / 32) and s.h_bound.iloc[0] == s.h0.iloc[0] + s.delta.iloc[0]
    assert bool(s.skew_ok.iloc[0]) == (s.delta.iloc[0] <= 256 / 32)
    b = tc.sparse_binary_table(256, 128, [4.0], [0.03], [0], d_k_max=64)
    assert b.p_B.iloc[0] == pytest.approx(4 * math.log(256) / 128) and b.p_B.iloc[0] < 0.5
    with pytest.raises(ValueError, match="m > d_model"):
        tc.sparse_binary_table(64, 64, [1.0], [1.0], [0])
