"""The checks themselves: separation bookkeeping, one scoring path, score decomposition,
limits, searches and the interference measurements."""

import math

import numpy as np
import pytest
import torch

from rgr.cli import main as cli
from rgr.experiments.construction_table import SCHEMA as CONSTRUCTIONS
from rgr.model.attention import head_scores
from rgr.store import load_table
from rgr.studies.construction_search import build, min_dk, smallest_budget
from rgr.studies.construction_sweeps import head_split, leakage_noise, limit_phase
from rgr.theory.checks import (
    all_pair_scores,
    evaluate_contexts,
    limit_scores,
    score_samples,
    score_terms,
    separation,
    separation_from_scores,
)
from tests.studies.synthetic import explicit_table


def test_separation_bookkeeping():
    S = torch.tensor([[0.0, 3.0], [1.5, 0.5]])
    y = torch.tensor([[False, True], [False, False]])
    s = separation_from_scores(S, y, tau=1.0)
    assert (s.min_edge, s.max_non_edge, s.margin, s.slack) == (3.0, 1.5, 1.5, -0.5)
    assert (s.edge_failures, s.non_edge_failures, s.separated) == (0, 1, False)
    assert separation_from_scores(S, y, tau=2.0).separated


def test_context_scores_are_the_all_pairs_submatrix():
    """Max-over-heads is context-free: scoring a context equals restricting the all-pairs matrix (the contexts
    scored afresh and read off the all-pairs matrix give the same counts and the same extremes)."""
    c, g = build("compressive", 64, 16, 1, d_k=12)
    S = all_pair_scores(c, max_elems=5000)  # forces several head chunks
    fresh = evaluate_contexts(c, g, seed=1, n=20, ell=8)
    read = evaluate_contexts(c, g, seed=1, n=20, ell=8, S_all=S)
    assert fresh.f1 == read.f1
    for part in ("present", "absent"):
        a, b = getattr(fresh, part), getattr(read, part)
        assert (a.n_edges, a.n_non_edges, a.edge_failures, a.non_edge_failures) == (
            b.n_edges, b.n_non_edges, b.edge_failures, b.non_edge_failures)
        assert (a.min_edge, a.max_non_edge) == pytest.approx((b.min_edge, b.max_non_edge), abs=1e-4)


def test_score_terms_add_up_to_the_head_score():
    c, _ = build("compressive", 96, 16, 2, d_k=20)
    S = head_scores(c.X[None, None], c.weights.W_Q, c.weights.W_K)[0, 0].double().numpy()
    for k in (0, 3):
        t = score_terms(c, k)
        assert np.allclose(t["score"], S[k], atol=1e-3)
        blk = c.blocks[k]
        # signal = d_k exactly on the block's edges
        assert np.allclose(t["signal"][blk[:, 0], blk[:, 1]], 20)


def test_limit_is_the_wide_head_average():
    c, _ = build("gun", 64, 32, 0, d_k=40000, B=8)
    assert torch.allclose(limit_scores(c), all_pair_scores(c).double() / 40000, atol=0.02)
    c, _ = build("compressive", 64, 32, 0, d_k=1, B=1)  # rank-one heads: limit exact at any width
    assert torch.allclose(limit_scores(c), all_pair_scores(c).double(), atol=1e-5)


def test_min_dk_finds_a_passing_width_and_a_failing_one_below():
    dk, note = min_dk("one-hot-rademacher", 64, 64, [0, 1])
    assert dk is not None and note == ""
    assert all(separation(build("one-hot-rademacher", 64, 64, s, d_k=dk)[0]).separated for s in (0, 1))
    lo = max(1, dk - max(1, dk // 16) - 1)
    assert not all(separation(build("one-hot-rademacher", 64, 64, s, d_k=lo)[0]).separated for s in (0, 1))
    assert min_dk("compressive", 128, 16, [0]) == (None, "limit fails")
    with pytest.raises(ValueError, match="criterion"):
        min_dk("compressive", 64, 16, [0], criterion="f1")


def test_smallest_budget_prunes_but_keeps_the_minimum():
    tab = smallest_budget("compressive", 64, 64, [0], criterion="margin", block_sizes=[1, 2, 4])
    assert tab.loc[0, "D_K"] == 64 and tab.loc[0, "d_k"] == 1  # one rank-one head per edge
    assert tab.D_K.dropna().min() == 64


def test_leakage_fluctuation_scales_like_B_over_d_model():
    """Sec. 5, Eq. (1): the N3 fluctuation grows linearly in B at fixed d_model and d_k."""
    df = leakage_noise(128, 16, 32, [8, 16, 32, 64, 128], [0])
    slope = np.polyfit(np.log(df.B), np.log(df.n3_fluct_rms), 1)[0]
    assert 0.85 < slope < 1.15
    ratio = df.n3_fluct_rms / (df.B / 16 * math.sqrt(32))
    assert ratio.between(0.7, 1.3).all()
    assert (df.n3_fluct_max / df.predicted).between(1.0, 5.0).all()


def test_head_split_and_limit_phase_tables():
    hs = head_split(128, 32, [128, 512], [1, 4], [0], n_contexts=50)
    assert set(hs.columns) >= {"D_K", "h", "d_k", "slack", "limit_slack", "f1", "separated"}
    one, four = (hs[(hs.D_K == 512) & (hs.h == h)].iloc[0] for h in (1, 4))
    assert four.limit_slack > one.limit_slack
    ph = limit_phase("compressive", 64, [16, 64], [1, 64], [0])
    assert len(ph) == 4 and {"slack", "margin"} <= set(ph.columns)


def test_score_samples_for_histograms():
    c, g = build("one-hot", 64, 64, 0)
    df = score_samples(c, max_non_edges=500)
    assert (df.kind == "edge").sum() == 64 and (df.kind == "non-edge").sum() == 500
    c, g = build("softmax-one-hot", 64, 64, 0)
    df = score_samples(c, g, n=20)
    assert set(df.row) == {"target in context", "target absent"}
    with pytest.raises(ValueError, match="graph"):
        score_samples(c)


def test_table_command_writes_csv_with_provenance(tmp_path):
    out = tmp_path / "c.csv"
    assert cli(["constructions", "--preset", "smoke", "--out", str(out), "--no-progress"]) == 0
    df = load_table(out, CONSTRUCTIONS)  # the strict loader, the same provenance as every table
    for col in ("construction", "m", "d_model", "r", "m_edges", "rule", "criterion", "h", "d_k", "D_K", "found",
                "note", "C_eff", "rgr_version", "git_commit", "torch_version", "device_name", "date", "preset"):
        assert col in df.columns
    assert (df.preset == "smoke").all()
    ok = df[df.found]
    assert (ok.D_K == ok.h * ok.d_k).all()
    mem = explicit_table("smoke")
    assert len(mem) == len(df) and set(mem.run_key) == set(df.run_key)


def test_context_check_from_all_pairs_equals_rescoring():
    c, g = build("compressive", 64, 16, 2, d_k=10)
    a = evaluate_contexts(c, g, n=50, seed=2)
    b = evaluate_contexts(c, g, n=50, seed=2, S_all=all_pair_scores(c))
    assert a.f1 == pytest.approx(b.f1)
    assert a.present.max_non_edge == pytest.approx(b.present.max_non_edge, abs=1e-4)
    assert a.absent.max_non_edge == pytest.approx(b.absent.max_non_edge, abs=1e-4)
    cs, gs = build("softmax-one-hot", 32, 32, 0)
    with pytest.raises(ValueError, match="max-over-heads"):
        evaluate_contexts(cs, gs, S_all=torch.zeros(32, 32))
