import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rgr.task.graphs import graph_from_edges, permutation_graph, regular_graph


@given(m=st.integers(2, 300), seed=st.integers(0, 2**31 - 1))
def test_permutation_graph_is_a_derangement(m, seed):
    g = permutation_graph(m, seed)
    assert g.m_edges == m
    assert np.all(g.out_degree == 1) and np.all(g.in_degree == 1)
    assert not np.any(g.pi == np.arange(m))
    assert np.array_equal(np.sort(g.pi), np.arange(m))
    s = g.stats()
    assert (s.m_edges, s.delta, s.avg_out) == (m, 1, 1.0)


def test_permutation_graph_is_seeded():
    assert np.array_equal(permutation_graph(64, 3).pi, permutation_graph(64, 3).pi)
    assert not np.array_equal(permutation_graph(64, 3).pi, permutation_graph(64, 4).pi)


@given(m=st.integers(3, 80), data=st.data())
def test_regular_graph_degrees(m, data):
    r = data.draw(st.integers(1, m - 1))
    seed = data.draw(st.integers(0, 10_000))
    g = regular_graph(m, r, seed)
    assert g.m_edges == r * m
    assert np.all(g.out_degree == r) and np.all(g.in_degree == r)
    assert not np.any(g.edges[:, 0] == g.edges[:, 1])
    assert len({tuple(e) for e in g.edges}) == g.m_edges
    assert np.array_equal(regular_graph(m, r, seed).edges, g.edges)


def test_general_graph_from_edges_and_stats():
    g = graph_from_edges(5, [(0, 1), (0, 2), (0, 3), (4, 0)])
    s = g.stats()
    assert (s.m_edges, s.max_out, s.max_in, s.delta) == (4, 3, 1, 3)
    assert g.out.shape == (5, 3)
    assert set(g.out[0]) == {1, 2, 3} and list(g.out[1]) == [-1, -1, -1]
    assert g.adjacency().sum() == 4


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: permutation_graph(1, 0), "m"),
        (lambda: permutation_graph(10, -1), "seed"),
        (lambda: regular_graph(10, 10, 0), "r"),
        (lambda: regular_graph(10, 0, 0), "r"),
        (lambda: graph_from_edges(3, [(0, 0)]), "self-loops"),
        (lambda: graph_from_edges(3, [(0, 1), (0, 1)]), "repeated"),
        (lambda: graph_from_edges(3, [(0, 3)]), "edges"),
    ],
)
def test_bad_input_names_the_parameter(call, word):
    with pytest.raises(ValueError, match=word):
        call()
