"""The per-context width of the seed paper (rgr.studies.per_context): exact integer scores, a tie fails (issue 33)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from rgr.studies.per_context import (
    DE_EMBED_TOL,
    context_separates,
    de_embedding_error,
    first_separating_width,
    per_context_dk,
    signature_scores,
)
from rgr.task.embeddings import gaussian_unit


def _tie_case() -> tuple[torch.Tensor, np.ndarray]:
    """ell = 4, d = 4: source 0 -> target 1, and the non-edge (0, 2) scores w_1 . w_2 = 2 = d/2 exactly."""
    y = torch.zeros(4, 4, dtype=torch.bool)
    y[0, 1] = True
    W = np.array([[1, 1, -1, 1], [1, 1, 1, -1], [1, 1, 1, 1], [-1, -1, -1, -1]])  # w_1 . (w_0, w_2, w_3) = 0, 2, -2
    return y, W


def _rotations(n: int, d_model: int) -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    return [torch.linalg.qr(torch.randn(d_model, d_model, dtype=torch.float64, generator=gen))[0] for _ in range(n)]


def test_signature_scores_are_the_exact_integers_of_the_model_space_scores():
    X = gaussian_unit(16, 16, 0).double()
    y = torch.zeros(8, 8, dtype=torch.bool)
    y[0, 3] = y[2, 5] = y[7, 0] = True
    W = np.where(np.random.default_rng(1).random((8, 40)) < 0.5, 1, -1)
    S = signature_scores(y, W)
    assert S.dtype == np.int64
    Q = np.zeros((8, 40))
    Q[[0, 2, 7]] = W[[3, 5, 0]]
    Xc = X[:8].numpy()
    P = Xc @ np.linalg.pinv(Xc)  # the scores through the model space: (X W_Q)(X W_K)^T, W = X^+ (signatures)
    assert np.abs((P @ Q) @ (P @ W).T - S).max() < 1e-9
    assert (S[1] == 0).all()  # a source without an in-context target scores 0
    assert S[0, 3] == 40  # an edge scores d


def test_a_tie_at_d_over_2_fails_on_every_floating_point_path():
    """The float round trip put a tie at d/2 +- 1e-15, on a side the BLAS kernel chose; the integers cannot."""
    y, W = _tie_case()
    assert signature_scores(y, W)[0, 2] == 2 == W.shape[1] // 2
    X = gaussian_unit(4, 8, 0).double()
    for R in _rotations(40, 8):  # the same context in rotated model spaces: the same exact scores, other float noise
        for scale in (1.0, 3.0, 1e-3):
            assert not context_separates(scale * X @ R, y, W)
    W_ok = W.copy()
    W_ok[2] = [1, -1, -1, 1]  # w_1 . w_2 = -2 < 2 now: every non-edge strictly below, the edge at 4 > 2
    assert (2 * signature_scores(y, W_ok)[~y.numpy()] < 4).all()
    assert all(context_separates(X @ R, y, W_ok) for R in _rotations(5, 8))


def test_context_separates_basic_and_errors():
    X = gaussian_unit(8, 8, 0)
    y = torch.zeros(8, 8, dtype=torch.bool)
    y[0, 3] = y[2, 5] = True
    W = np.where(np.random.default_rng(0).random((8, 200)) < 0.5, 1.0, -1.0)
    assert context_separates(X, y, W)  # wide signatures always separate
    assert not context_separates(X, y, W[:, :1])  # width 1: scores +-1 cannot all sit on the right side of 1/2
    with pytest.raises(ValueError, match="X_C"):
        context_separates(torch.cat([X[:7], X[:1]]), y, W)  # two equal rows: no exact de-embedding
    with pytest.raises(ValueError, match="W must hold"):
        context_separates(X, y, 0.5 * W)
    y2 = y.clone()
    y2[0, 4] = True
    with pytest.raises(ValueError, match="labels"):
        context_separates(X, y2, W)
    with pytest.raises(ValueError, match="labels"):
        context_separates(X, y[:4, :4], W)


def test_de_embedding_error():
    X = gaussian_unit(16, 16, 0)
    assert de_embedding_error(X) < DE_EMBED_TOL  # square Gaussian: invertible
    assert de_embedding_error(torch.cat([X[:3], X[:1]])) > 0.1  # rank 3 of 4 rows


@given(st.integers(2, 8), st.integers(1, 60), st.integers(0, 10_000))
def test_first_separating_width_is_the_smallest_width_that_separates(ell, d_max, seed):
    rng = np.random.default_rng(seed)
    W = np.where(rng.random((ell, d_max)) < 0.5, 1, -1)
    y = np.zeros((ell, ell), dtype=bool)
    targets = rng.permutation(ell)
    keep = rng.random(ell) < 0.7
    y[np.arange(ell)[keep], targets[keep]] = True
    X = gaussian_unit(ell, ell, seed)
    widths = [k for k in range(1, d_max + 1) if context_separates(X, torch.from_numpy(y), W[:, :k])]
    assert first_separating_width(torch.from_numpy(y), W) == (widths[0] if widths else d_max + 1)


def test_per_context_dk():
    d = per_context_dk(64, 32, 16, 0, n=4)
    assert d.dtype.kind == "i" and (d >= 1).all() and (d <= 512).all()
    assert (per_context_dk(64, 32, 16, 0, n=4) == d).all()
    assert (per_context_dk(64, 32, 16, 0, n=4, d_max=4) == 5).all()  # too narrow for 16 items: d_max + 1
    with pytest.raises(ValueError, match="ell"):
        per_context_dk(64, 8, 16, 0, n=1)
