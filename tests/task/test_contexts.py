import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rgr.task.contexts import graph_table, sample, sample_stacked
from rgr.task.graphs import permutation_graph, regular_graph
from rgr.task.rng import stream_key


def _in_context_edges(graph, items):
    adj = torch.from_numpy(graph.adjacency())
    return adj[items.unsqueeze(-1), items.unsqueeze(-2)]


@given(m=st.integers(16, 400), ell=st.integers(2, 16), rho=st.floats(0, 1), seed=st.integers(0, 10**6))
def test_permutation_contexts(m, ell, rho, seed):
    g = permutation_graph(m, seed)
    b = sample(g, seed, n=64, ell=ell, rho=rho)
    assert b.items.shape == (64, ell) and b.labels.shape == (64, ell, ell)
    assert int(b.items.min()) >= 0 and int(b.items.max()) < m
    assert all(len(set(row.tolist())) == ell for row in b.items)  # distinct
    assert torch.equal(b.labels, _in_context_edges(g, b.items))  # exactly the in-context edges
    assert not b.labels.diagonal(dim1=-2, dim2=-1).any()
    assert b.labels[b.sources].any(-1).all()  # every source's target is in context


@given(m=st.integers(8, 64), data=st.data())
def test_regular_contexts(m, data):
    r = data.draw(st.integers(1, min(8, m - 1)))
    ell = data.draw(st.integers(2, min(16, m)))
    g = regular_graph(m, r, seed=data.draw(st.integers(0, 1000)))
    b = sample(g, seed=7, n=32, ell=ell, rho=0.5)
    assert all(len(set(row.tolist())) == ell for row in b.items)
    assert torch.equal(b.labels, _in_context_edges(g, b.items))
    assert b.labels[b.sources].any(-1).all()  # each source has an out-neighbour in context


def test_seeded_and_independent_of_blocks_and_stacking():
    gs = [permutation_graph(m, s) for s, m in enumerate([32, 64, 128])]
    a = sample(gs[1], seed=1, n=100, ell=16, rho=0.5)
    assert torch.equal(a.items, sample(gs[1], seed=1, n=100, ell=16, rho=0.5).items)
    assert not torch.equal(a.items, sample(gs[1], seed=2, n=100, ell=16, rho=0.5).items)
    tail = sample(gs[1], seed=1, n=40, ell=16, rho=0.5, start=60)
    assert torch.equal(a.items[60:], tail.items)
    keys = torch.tensor([stream_key(s, "train") for s in range(3)])
    stacked = sample_stacked(graph_table(gs), keys, torch.arange(100).repeat(3, 1), 16, 0.5)
    assert torch.equal(stacked.items[1], a.items) and torch.equal(stacked.labels[1], a.labels)
    assert int(stacked.items[0].max()) < 32  # per-run m is respected


def test_streams_differ():
    g = permutation_graph(64, 0)
    tr, va = (sample(g, 0, 50, stream=s).items for s in ("train", "val"))
    assert not torch.equal(tr, va)


def test_rate_without_sources_is_chance():
    """rho = 0: the fraction of positions whose target is present is (ell-1)/(m-1)."""
    m, ell = 64, 16
    g = permutation_graph(m, 0)
    lab = sample(g, 0, n=20_000, ell=ell, rho=0.0).labels
    rate = lab.any(-1).double().mean().item()
    assert abs(rate - (ell - 1) / (m - 1)) < 0.01


@pytest.mark.parametrize("rho", [0.25, 0.5])
def test_rate_matches_design(rho):
    """Large m: positions with their target in context ~ served sources ~ rho (ell=16)."""
    m, ell = 4096, 16
    b = sample(permutation_graph(m, 1), 1, n=5000, ell=ell, rho=rho)
    rate = b.labels.any(-1).double().mean().item()
    assert abs(rate - rho) < 0.06
    assert abs(b.sources.double().mean().item() - rho) < 0.06


@pytest.mark.parametrize(
    "kw, word",
    [
        (dict(ell=17), "ell"),
        (dict(ell=1), "ell"),
        (dict(rho=1.5), "rho"),
        (dict(rho=-0.1), "rho"),
        (dict(n=0), "n"),
    ],
)
def test_bad_input(kw, word):
    g = permutation_graph(16, 0)
    args = dict(n=4, ell=4, rho=0.5) | kw
    with pytest.raises(ValueError, match=word):
        sample(g, 0, **args)
