"""Property tests: counter-based randomness (rgr.task.rng) and the bit-budget bounds (rgr.theory.bounds)."""

import math

import pandas as pd
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from rgr.task import rng
from rgr.theory import bounds

seeds = st.integers(min_value=0, max_value=2**40)
streams = st.sampled_from(["embed", "graph", "init", "test", "train", "val", "value"])  # a run's named streams


@given(st.lists(seeds, min_size=1, max_size=6, unique=True), st.data(), streams, st.integers(1, 6))
def test_a_runs_draws_do_not_depend_on_its_stack(stack_seeds, data, stream, n_slots):
    """The draws of a run are the same alone and at any position of any stack (of any other runs)."""
    pos = data.draw(st.integers(0, len(stack_seeds) - 1))
    n = data.draw(st.integers(1, 20))
    index = torch.arange(n, dtype=torch.int64) * data.draw(st.integers(1, 1000))
    keys = torch.tensor([rng.stream_key(s, stream) for s in stack_seeds])
    stacked = rng.uniform(keys, index.repeat(len(stack_seeds), 1), n_slots)
    alone = rng.uniform(keys[pos : pos + 1], index[None], n_slots)
    assert torch.equal(stacked[pos], alone[0])


@given(seeds, streams)
def test_uniforms_are_uniform(seed, stream):
    """Kolmogorov-Smirnov against U[0, 1) at a loose level (a property, not a statistical study)."""
    u = rng.uniform(torch.tensor([rng.stream_key(seed, stream)]), torch.arange(2000)[None], 4).flatten()
    assert 0 <= float(u.min()) and float(u.max()) < 1
    assert stats.kstest(u.numpy(), "uniform").pvalue > 1e-4


@given(seeds, st.integers(1, 50))
def test_randint_stays_in_range(seed, high):
    u = rng.uniform(torch.tensor([rng.stream_key(seed, "train")]), torch.arange(200)[None], 3)
    k = rng.randint(u, high)
    assert int(k.min()) >= 0 and int(k.max()) < high


sizes = st.integers(min_value=3, max_value=3000)


@given(sizes, st.integers(1, 512), st.floats(0.5, 64))
def test_bit_budget_grows_with_m_and_falls_with_d_model_and_b(m, d_model, b):
    """More items (m' = m) need more bits; a wider embedding or more bits per parameter need fewer D_K."""
    DK = bounds.bit_budget_DK(m, m, d_model, b)
    assert bounds.bit_budget_DK(m + 1, m + 1, d_model, b) >= DK
    assert bounds.bit_budget_DK(m, m, d_model + 1, b) <= DK
    assert bounds.bit_budget_DK(m, m, d_model, 2 * b) <= DK


@given(sizes, st.data())
def test_graph_count_rises_up_to_half_the_pairs(m, data):
    """log2 binom(N, m') increases in m' up to N/2 (read off the bound at d_model = 1, b = 1: (count - 1) / 2,
    the count being at least log2 N >= 1 bit here), and the entropy bracket holds (a sparse row of the regime
    table at m' = k)."""
    N = bounds.n_pairs(m)
    k = data.draw(st.integers(1, max(1, N // 2 - 1)))
    assert bounds.bit_budget_DK(m, k + 1, 1, 1.0) >= bounds.bit_budget_DK(m, k, 1, 1.0)
    t = bounds.regime_table([m], 1, sparse_exponent=math.log(k) / math.log(m))
    row = t[t.regime == "sparse"].iloc[0]
    assert math.isclose(row.log2_count, 2 * bounds.bit_budget_DK(m, int(row.m_edges), 1, 1.0) + 1, rel_tol=1e-12)
    assert row.entropy_lo - 1e-6 <= row.log2_count <= row.entropy_hi + 1e-6


@given(sizes, st.integers(1, 256), st.floats(0.5, 64))
def test_integer_bound_is_the_smallest_budget_that_holds(m, d_model, b):
    cells = pd.DataFrame(dict(m=[m], m_edges=[m], d_model=[d_model]))
    D = int(bounds.bound_rows(cells, bits=(b,)).bound_min_DK[0])
    t = bounds.regime_table([m], d_model, b)
    bits = float(t[t.regime == "permutation"].log2_count.iloc[0])  # log2 binom(N, m)
    assert b * (2 * d_model * D + 1) >= bits
    assert D == 0 or b * (2 * d_model * (D - 1) + 1) < bits
    assert D >= math.floor(bounds.bit_budget_DK(m, m, d_model, b))
