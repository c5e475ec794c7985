"""The chapter *lower bounds*' studies (rgr.studies.lower_bounds): Theorem 9.2's normalised margin (issue 18), and the
seed paper's per-context width: exact integer scores, a tie fails (issue 33)."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rgr.experiments.engine.config import RunConfig
from rgr.studies import lower_bounds as lbs
from rgr.studies.lower_bounds import first_separating_width, per_context_table
from rgr.task.embeddings import gaussian_unit
from rgr.theory.bounds import bit_budget_DK, margin_bits, margin_bound_DK


def _tie_case() -> tuple[torch.Tensor, np.ndarray]:
    """ell = 4, d = 4: source 0 -> target 1, and the non-edge (0, 2) scores w_1 . w_2 = 2 = d/2 exactly."""
    y = torch.zeros(4, 4, dtype=torch.bool)
    y[0, 1] = True
    W = np.array([[1, 1, -1, 1], [1, 1, 1, -1], [1, 1, 1, 1], [-1, -1, -1, -1]])  # w_1 . (w_0, w_2, w_3) = 0, 2, -2
    return y, W


def _scores(y: torch.Tensor, W: np.ndarray) -> np.ndarray:
    """The construction's scores ``w_{pi(i)} . w_j`` in exact integers (a row without an in-context target: 0)."""
    Q = np.zeros_like(W)
    rows, cols = np.nonzero(np.asarray(y))
    Q[rows] = W[cols]
    return Q @ W.T


def separates(y: torch.Tensor, W: np.ndarray) -> bool:
    """The construction's test at width d = ``W.shape[1]`` on the exact integer scores: every edge strictly above
    d/2, every non-edge strictly below (a score equal to d/2 fails)."""
    S, y, d = _scores(y, W), np.asarray(y, dtype=bool), W.shape[1]
    return bool((2 * S[y] > d).all() and (2 * S[~y] < d).all())


def _dependent_embeddings(monkeypatch) -> None:
    """Every item embedded as the same vector: no context of two or more items de-embeds."""
    monkeypatch.setattr(lbs, "gaussian_unit", lambda m, d, seed: gaussian_unit(1, d, seed).expand(m, d))


def test_separation_is_decided_on_the_exact_integers_of_the_model_space_scores():
    X = gaussian_unit(16, 16, 0).double()
    y = torch.zeros(8, 8, dtype=torch.bool)
    y[0, 3] = y[2, 5] = y[7, 0] = True
    W = np.where(np.random.default_rng(1).random((8, 40)) < 0.5, 1, -1)
    Xc = X[:8].numpy()
    P = Xc @ np.linalg.pinv(Xc)  # the scores through the model space: (X W_Q)(X W_K)^T, W = X^+ (signatures)
    seen = []
    for d in range(1, 41):
        Q = np.zeros((8, d))
        Q[[0, 2, 7]] = W[[3, 5, 0], :d]
        S = (P @ Q) @ (P @ W[:, :d]).T
        exact = np.rint(S)
        assert np.abs(S - exact).max() < 1e-9 and (exact == _scores(y, W[:, :d])).all()
        assert (exact[1] == 0).all() and exact[0, 3] == d  # no in-context target: 0; an edge scores d
        seen.append(bool((2 * exact[y.numpy()] > d).all() and (2 * exact[~y.numpy()] < d).all()))
    assert set(seen) == {True, False}  # both sides reached
    assert first_separating_width(y, W) == seen.index(True) + 1


def test_a_tie_at_d_over_2_fails_on_every_floating_point_path():
    """The float round trip put a tie at d/2 +- 1e-15, on a side the BLAS kernel chose; the integers cannot."""
    y, W = _tie_case()
    assert _scores(y, W)[0, 2] == 2 == W.shape[1] // 2
    assert not separates(y, W) and first_separating_width(y, W) == 5  # widths 1-3 fail too: none separates
    W_ok = W.copy()
    W_ok[2] = [1, -1, -1, 1]  # w_1 . w_2 = -2 < 2 now: every non-edge strictly below, the edge at 4 > 2
    assert (2 * _scores(y, W_ok)[~y.numpy()] < 4).all()
    assert separates(y, W_ok) and first_separating_width(y, W_ok) <= 4


def test_separation_basic_and_errors():
    y = torch.zeros(8, 8, dtype=torch.bool)
    y[0, 3] = y[2, 5] = True
    W = np.where(np.random.default_rng(0).random((8, 200)) < 0.5, 1.0, -1.0)
    assert separates(y, W) and first_separating_width(y, W) <= 200  # wide signatures always separate
    assert not separates(y, W[:, :1])  # width 1: scores +-1 cannot all sit on the right side of 1/2
    with pytest.raises(ValueError, match="W must hold"):
        first_separating_width(y, 0.5 * W)
    y2 = y.clone()
    y2[0, 4] = True
    with pytest.raises(ValueError, match="labels"):
        first_separating_width(y2, W)
    with pytest.raises(ValueError, match="labels"):
        first_separating_width(y[:4, :4], W)


def test_de_embedding_is_checked_to_the_tolerance(monkeypatch):
    per_context_table([16], [16], 16, [0], n=2)  # square Gaussian: invertible, off the identity by far less than 1e-9
    _dependent_embeddings(monkeypatch)
    with pytest.raises(ValueError, match=r"X_C: .* off the identity by (0\.[1-9]|[1-9])\S* > the tolerance 1e-09"):
        per_context_table([16], [4], 16, [0], n=1)  # rank 1 of 4 rows: off by more than 0.1


@given(st.integers(2, 8), st.integers(1, 60), st.integers(0, 10_000))
def test_first_separating_width_is_the_smallest_width_that_separates(ell, d_max, seed):
    rng = np.random.default_rng(seed)
    W = np.where(rng.random((ell, d_max)) < 0.5, 1, -1)
    y = np.zeros((ell, ell), dtype=bool)
    targets = rng.permutation(ell)
    keep = rng.random(ell) < 0.7
    y[np.arange(ell)[keep], targets[keep]] = True
    widths = [k for k in range(1, d_max + 1) if separates(y, W[:, :k])]
    assert first_separating_width(torch.from_numpy(y), W) == (widths[0] if widths else d_max + 1)


def test_per_context_table():
    t = per_context_table([64], [16], 32, [0], n=4)
    row = t.iloc[0]
    assert t.d_max.dtype.kind == "i" and 1 <= row.d_median <= row.d_max <= 513
    assert per_context_table([64], [16], 32, [0], n=4).equals(t)  # repeatable
    assert row.hoeffding == math.floor(16 * math.log(16)) + 1 and row.ln_ell == math.log(16)
    assert 16 ** 2 * math.exp(-row.hoeffding / 8) < 1  # Hoeffding and the union bound over the ell^2 pairs
    assert 16 ** 2 * math.exp(-(row.hoeffding - 1) / 8) >= 1  # the smallest such width
    assert per_context_table([64, 256], [8, 16], 32, [0], n=2).hoeffding.tolist() == [
        math.floor(16 * math.log(e)) + 1 for e in (8, 16, 8, 16)]
    with pytest.raises(ValueError, match="ell"):
        per_context_table([64], [16], 8, [0], n=1)


def test_a_context_wider_than_the_signatures_needs_d_max_plus_one():
    y = torch.zeros(16, 16, dtype=torch.bool)
    y[np.arange(16), np.roll(np.arange(16), 1)] = True  # 16 items, one target each
    W = np.where(np.random.default_rng(0).random((16, 4)) < 0.5, 1, -1)
    assert first_separating_width(y, W) == 5  # too narrow for 16 items: d_max + 1


def test_margin_bound_is_bit_bound_at_log2_12_over_gamma():
    assert margin_bits(1.0) == pytest.approx(math.log2(12))
    assert margin_bound_DK(64, 64, 32, 0.01) == pytest.approx(bit_budget_DK(64, 64, 32, math.log2(1200)))
    # a smaller margin costs more bits: a weaker bound
    assert margin_bound_DK(64, 64, 32, 0.001) < margin_bound_DK(64, 64, 32, 0.01)
    with pytest.raises(ValueError, match="gamma"):
        margin_bits(0.0)


def test_normalised_margin_closed_form(monkeypatch):
    """trained_margins on a model whose margin is known exactly: one-hot embeddings, one head with
    W_Q W_K^T = 2 A - 1 (scaled); training and the task stand in as that model and its graph."""
    m = 4
    A = np.zeros((m, m), dtype=bool)
    A[0, 1] = A[1, 2] = A[2, 3] = A[3, 0] = True
    W_Q = torch.eye(m).unsqueeze(0)
    W_K = torch.from_numpy(np.where(A, 1.0, -1.0).T).float().unsqueeze(0)  # S = X W_Q (X W_K)^T = +-1
    graph = SimpleNamespace(adjacency=lambda: A, m_edges=m)
    monkeypatch.setattr(lbs, "build_task", lambda cfg: (graph, torch.eye(m)))

    def rows(sign: float) -> pd.Series:
        run = SimpleNamespace(weights={"W_Q": W_Q, "W_K": sign * W_K}, tau=0.0, steps=1, test_f1=1.0)
        monkeypatch.setattr(lbs, "train_run", lambda cfg, **kw: run)
        return lbs.trained_margins([RunConfig(m=m, d_model=m, h=1, d_k=m, ell=2)]).iloc[0]

    mg = rows(1.0)
    assert mg.pair_errors == 0 and mg.gamma == pytest.approx(1.0 / (2.0 * 4.0))  # raw margin 1, ||W_Q|| ||W_K|| = 8
    assert mg.bits == margin_bits(mg.gamma) and mg.bound_DK == margin_bound_DK(m, m, m, mg.gamma)
    bad = rows(-1.0)
    assert bad.gamma == pytest.approx(-1.0 / 8.0) and bad.pair_errors == m * (m - 1) and math.isnan(bad.bound_DK)


def test_hoeffding_width():
    w = per_context_table([64], [16], 32, [0], n=1).hoeffding.iloc[0]
    assert w == math.floor(16 * math.log(16)) + 1
    assert 16 ** 2 * math.exp(-w / 8) < 1
    assert 16 ** 2 * math.exp(-(w - 1) / 8) >= 1  # the smallest such width
    with pytest.raises(ValueError, match="ell"):
        per_context_table([64], [1], 32, [0], n=1)
