"""Constructions against their theorems (App. B, Sec. 4, 8): where the constants are met they
separate every pair on every seed; where the theory says they must fail, they fail."""

import math

import numpy as np
import pytest
import torch

from rgr.model.attention import QKWeights, head_scores
from rgr.studies.construction_search import build
from rgr.studies.construction_sweeps import success_rate
from rgr.task.embeddings import gaussian_unit
from rgr.task.graphs import graph_from_edges, permutation_graph, regular_graph
from rgr.theory.bounds import dk_from_C, theorem_B1_C
from rgr.theory.checks import evaluate_contexts, limit_separation, separation
from rgr.theory.constructions import (
    DEFAULT_C,
    binary_family,
    construct_compressive,
    construct_general_embedding,
    construct_general_graph,
    construct_one_hot,
    construct_softmax,
    gaussian_family,
)
from rgr.theory.template import signatures


def test_weights_have_the_trained_models_form_and_metadata():
    g, X = permutation_graph(128, 0), gaussian_unit(128, 32, 0)
    c = construct_compressive(g, X, d_k=24)
    w = c.weights
    assert isinstance(w, QKWeights) and w.W_Q.shape == (1, 4, 32, 24) and w.W_K.shape == (1, 4, 32, 24)
    assert w.W_Q.dtype == X.dtype and float(w.tau[0]) == 12.0
    i = c.info
    assert (i.h, i.d_k, i.D_K, i.B, i.mu, i.signature) == (4, 24, 96, 32, 1.0, "rademacher")
    c2 = construct_compressive(g, X, C=2.0)
    assert c2.info.d_k == math.ceil(2 * math.log(128))
    with pytest.raises(Exception):
        c.info.h = 3  # frozen


def test_template_is_Xinv_times_one_hot_templates():
    """W_Q^k = X_inv W'_Q^k with W'_Q row i = w_{pi(i)} on the block's sources (Algorithm 1/4)."""
    g = permutation_graph(24, 1)
    fam = binary_family(24, 8, seed=1, c_p=2.0, c_B=1.0)
    c = construct_general_embedding(g, fam, d_k=7, B=5)
    W = c.signatures
    X_inv = fam.X.double().numpy().T / fam.mu
    for k, blk in enumerate(c.blocks):
        Wq = np.zeros((24, 7))
        Wk = np.zeros((24, 7))
        Wq[blk[:, 0]] = W[blk[:, 1]]
        Wk[blk[:, 1]] = W[blk[:, 1]]
        assert np.allclose(c.weights.W_Q[0, k].double().numpy(), X_inv @ Wq, atol=1e-5)
        assert np.allclose(c.weights.W_K[0, k].double().numpy(), X_inv @ Wk, atol=1e-5)
    assert c.info.tau == pytest.approx((0.05 + 0.05**2) / 2 * 7)
    assert c.info.h == math.ceil(24 / 5) == c.info.h_bound


def test_one_hot_scores_are_signature_dot_products():
    g = permutation_graph(40, 2)
    c = construct_one_hot(g, d_k=16, seed=5)
    S = head_scores(torch.eye(40)[None, None], c.weights.W_Q, c.weights.W_K)[0, 0, 0].double().numpy()
    W = c.signatures
    assert np.allclose(S, W[g.pi] @ W.T)
    assert set(np.unique(W)) <= {0.0, 1.0}


def test_signatures_are_nested_in_width():
    assert np.array_equal(signatures(50, 30, 4)[:, :12], signatures(50, 12, 4))
    assert set(np.unique(signatures(50, 30, 4))) == {-1.0, 1.0}
    with pytest.raises(ValueError, match="p in"):
        signatures(5, 3, 0, "bernoulli")


@pytest.mark.parametrize("signature", ["bernoulli", "rademacher"])
def test_theorem_B1_zero_failures_once_C_is_large(signature):
    """Construction I at the calibrated C separates all pairs on every one of 16 seeds."""
    df = success_rate("one-hot" if signature == "bernoulli" else "one-hot-rademacher", 128, 128,
                      [DEFAULT_C["one-hot" if signature == "bernoulli" else "one-hot-rademacher"]], range(16))
    assert df.success.all()
    assert (df.slack > 0).all()


def test_theorem_B1_fails_at_small_width():
    df = success_rate("one-hot", 128, 128, [4.0], range(8))  # d_k = 20: Binomial tails too heavy
    assert not df.success.any()
    assert theorem_B1_C(0.25) == pytest.approx(3 / (0.25 * 0.75**2 / 8))  # the proof's constant: 170.7


def test_separation_implies_F1_one_on_every_sampled_context():
    """Monotonicity under context restriction."""
    c, g = build("one-hot-rademacher", 128, 128, 3)
    assert separation(c).separated
    chk = evaluate_contexts(c, g, seed=3, n=300)
    assert chk.f1 == 1.0 and chk.present.separated and chk.absent.separated


def test_theorem_41_at_large_d_model():
    """Algorithm 1 with h = m / d_model heads, d_model = 512 (about 74 ln m), C = 160."""
    c, g = build("compressive", 1024, 512, 0)
    assert (c.info.h, c.info.B) == (2, 512) and c.info.d_k == dk_from_C(160, 1024)
    sep = separation(c)
    assert sep.separated and sep.min_edge > c.info.tau > sep.max_non_edge
    assert evaluate_contexts(c, g, n=200).f1 == 1.0


def test_compressive_fails_at_book_scale_at_any_width():
    """d_model = 32 << c0 ln m: de-embedding leakage leaves non-edges above tau even as d_k -> inf."""
    c, _ = build("compressive", 256, 32, 0, d_k=1)
    lim = limit_separation(c)
    assert lim.max_non_edge > lim.tau
    c, _ = build("compressive", 256, 32, 0, d_k=2048)
    assert not separation(c).separated


def test_small_width_fails_even_at_large_d_model():
    c, _ = build("compressive", 1024, 512, 0, C=4.0)
    assert not separation(c).separated


def test_single_head_is_worse_than_multi_head_at_equal_budget():
    """Sec. 5 within the template: at D_K = 2048, h = 2 separates, h = 1 does not."""
    g, X = permutation_graph(1024, 0), gaussian_unit(1024, 512, 0)
    one = construct_compressive(g, X, d_k=2048, h=1)
    two = construct_compressive(g, X, d_k=1024, h=2)
    assert not separation(one).separated and separation(two).separated
    assert limit_separation(one).slack < limit_separation(two).slack


def test_softmax_on_one_hot_inputs_matches_theorem_81_background():
    """Rows whose target is in the context: owner head puts ~1 on it; each other head adds 1/ell."""
    g = permutation_graph(256, 0)
    for h, ell in [(1, 16), (4, 16), (8, 64)]:
        c = construct_softmax(g, torch.eye(256), h=h, C=DEFAULT_C["softmax"])
        assert c.info.aggregation == "softmax" and c.info.tau == 0.5
        p = evaluate_contexts(c, g, n=200, ell=ell).present
        assert p.separated
        assert p.max_non_edge == pytest.approx((h - 1) / ell, abs=0.02)
    # too many heads for the context: the background alone exceeds tau
    c = construct_softmax(g, torch.eye(256), h=16, C=DEFAULT_C["softmax"])
    assert not evaluate_contexts(c, g, n=200, ell=16).present.separated


def test_softmax_needs_contexts_for_its_check():
    c = construct_softmax(permutation_graph(64, 0), gaussian_unit(64, 16, 0), d_k=8)
    with pytest.raises(ValueError, match="context"):
        separation(c)


def test_algorithm_4_gaussian_family_separates_and_binary_family_fails_at_book_scale():
    c, _ = build("gun", 256, 256, 0, B=16)
    assert (c.info.signature, c.info.p, c.info.h) == ("bernoulli", 0.05, 16)
    assert separation(c).separated
    fam = binary_family(256, 32, 0)
    assert fam.mu == pytest.approx(32 * fam.p_B) and fam.B == round(32 / math.log(256))
    c, _ = build("rbce", 256, 32, 0, d_k=1)
    assert limit_separation(c).slack < 0


def test_algorithm_5_general_graph():
    g = regular_graph(1024, 2, seed=0)
    c = construct_general_graph(g, gaussian_unit(1024, 512, 0))
    assert c.info.h <= c.info.h_bound == math.ceil(2048 / 512) + 2 and c.info.delta == 2
    assert c.info.B <= 512
    assert separation(c).separated


def test_algorithm_5_on_a_permutation_is_algorithm_1():
    g, X = permutation_graph(96, 4), gaussian_unit(96, 16, 4)
    a = construct_compressive(g, X, d_k=9, seed=4)
    b = construct_general_graph(g, X, d_k=9, seed=4)
    assert torch.equal(a.weights.W_Q, b.weights.W_Q) and torch.equal(a.weights.W_K, b.weights.W_K)


def test_algorithm_5_on_a_skewed_graph_covers_every_edge_once():
    rng = np.random.default_rng(0)
    hub = [(0, j) for j in range(1, 60)] + [(j, 0) for j in range(1, 60, 2)]
    rest = {(int(i), int(j)) for i, j in rng.integers(0, 60, (300, 2)) if i != j and i and j}
    g = graph_from_edges(60, hub + sorted(rest))
    c = construct_general_graph(g, gaussian_unit(60, 8, 0), d_k=4)
    assert c.info.delta == 59 and c.info.h <= c.info.h_bound
    assert np.array_equal(c.adjacency(), g.adjacency())
    assert len(c.edges) == g.m_edges


def test_bad_input_fails_loudly():
    g = regular_graph(32, 2, seed=0)
    with pytest.raises(ValueError, match="permutation graph"):
        construct_compressive(g, gaussian_unit(32, 8, 0), d_k=4)
    pg = permutation_graph(32, 0)
    with pytest.raises(ValueError, match="d_k"):
        construct_compressive(pg, gaussian_unit(32, 8, 0), d_k=0)
    with pytest.raises(ValueError, match="rows"):
        construct_compressive(pg, gaussian_unit(31, 8, 0), d_k=4)
    with pytest.raises(ValueError, match="h must"):
        construct_compressive(pg, gaussian_unit(32, 8, 0), d_k=4, h=33)
    with pytest.raises(ValueError, match="C must"):
        dk_from_C(0, 10)
    with pytest.raises(ValueError, match="name"):
        build("nope", 8, 4, 0, d_k=1)
    assert gaussian_family(32, 8, 0).B == 8
