"""The template's blocks (rgr.theory.template): bipartite edge colouring with exactly Delta colours, and the packing
into matchings (Lemma B.8)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rgr.task.graphs import regular_graph
from rgr.theory.template import bipartite_edge_coloring, matching_blocks, max_degree


def is_matching(edges: np.ndarray) -> bool:
    """No two edges share a source, no two a target."""
    e = np.asarray(edges).reshape(-1, 2)
    return len(np.unique(e[:, 0])) == len(e) and len(np.unique(e[:, 1])) == len(e)


@st.composite
def digraphs(draw):
    """Random loop-free directed edge sets; half of them get a hub with a skewed degree."""
    m = draw(st.integers(2, 24))
    pairs = [(i, j) for i in range(m) for j in range(m) if i != j]
    edges = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=min(len(pairs), 120), unique=True))
    if draw(st.booleans()):  # a hub: many out- and in-edges at one vertex
        hub = draw(st.integers(0, m - 1))
        extra = [(hub, j) for j in range(m) if j != hub] + [(i, hub) for i in range(m) if i != hub]
        keep = draw(st.lists(st.sampled_from(extra), max_size=len(extra), unique=True))
        edges = list(dict.fromkeys(edges + keep))
    return np.array(edges, dtype=np.int64)


@settings(max_examples=150, deadline=None)
@given(digraphs())
def test_colouring_is_proper_with_exactly_delta_colours(e):
    colour = bipartite_edge_coloring(e)
    delta = max_degree(e)
    assert colour.shape == (len(e),)
    assert set(colour.tolist()) == set(range(delta))  # exactly Delta classes, none empty
    for c in range(delta):
        assert is_matching(e[colour == c])


@settings(max_examples=150, deadline=None)
@given(digraphs(), st.integers(1, 9))
def test_blocks_are_small_matchings_partitioning_E(e, bs):
    blocks = matching_blocks(e, bs)
    assert all(is_matching(b) and 1 <= len(b) <= bs for b in blocks)
    union = np.concatenate(blocks)
    assert len(union) == len(e)  # disjoint ...
    assert {tuple(x) for x in union.tolist()} == {tuple(x) for x in e.tolist()}  # ... and covering E
    assert len(blocks) <= math.ceil(len(e) / bs) + max_degree(e)  # Lemma B.8's head count


def test_regular_graph_classes_are_perfect_matchings():
    g = regular_graph(64, 6, seed=3)
    colour = bipartite_edge_coloring(g.edges)
    assert np.bincount(colour).tolist() == [64] * 6
    assert len(matching_blocks(g.edges, 16)) == 6 * 4  # = m'/d_model exactly


def test_star_needs_delta_colours():
    e = np.array([(0, j) for j in range(1, 10)])
    assert sorted(bipartite_edge_coloring(e).tolist()) == list(range(9))


def test_bad_input_fails_loudly():
    with pytest.raises(ValueError, match="repeated"):
        bipartite_edge_coloring([(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="block_size"):
        matching_blocks([(0, 1)], 0)
    with pytest.raises(ValueError, match="shape"):
        bipartite_edge_coloring(np.zeros((3, 3), dtype=int))
    assert bipartite_edge_coloring(np.zeros((0, 2), dtype=int)).size == 0
