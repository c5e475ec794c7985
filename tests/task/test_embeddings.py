import numpy as np
import pytest
import torch

from rgr.task.embeddings import from_array, gaussian_unit, one_hot, random_binary, value_projection


def test_gaussian_unit_norm_and_seeded():
    x = gaussian_unit(100, 16, seed=1)
    assert x.shape == (100, 16) and x.dtype == torch.float32
    assert torch.allclose(x.norm(dim=1), torch.ones(100), atol=1e-6)
    assert torch.equal(x, gaussian_unit(100, 16, seed=1))
    assert not torch.equal(x, gaussian_unit(100, 16, seed=2))
    # isotropic: the mean inner product of distinct rows is ~0 with spread ~1/sqrt(d)
    g = x @ x.T
    off = g[~torch.eye(100, dtype=bool)]
    assert abs(off.mean().item()) < 0.02 and abs(off.std().item() - 16**-0.5) < 0.03


def test_value_projection_is_seeded_and_gives_unit_messages():
    W = value_projection(64, 32, seed=3)
    assert W.shape == (64, 32) and W.dtype == torch.float64
    assert torch.equal(W, value_projection(64, 32, seed=3)) and not torch.equal(W, value_projection(64, 32, seed=4))
    # entries N(0, 1/d_model): a unit-norm item's message has mean squared norm d_msg / d_model
    y = gaussian_unit(2000, 64, seed=1).double() @ W
    assert y.square().sum(1).mean().item() == pytest.approx(32 / 64, rel=0.25)


def test_one_hot_and_binary():
    assert torch.equal(one_hot(4), torch.eye(4))
    b = random_binary(500, 64, seed=0, p=0.25)
    assert set(b.unique().tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - 0.25) < 0.01


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: gaussian_unit(0, 4, 0), "m"),
        (lambda: gaussian_unit(4, 0, 0), "d_model"),
        (lambda: random_binary(4, 4, 0, p=1.5), "p"),
        (lambda: from_array(np.zeros(3)), "2-D"),
        (lambda: from_array(np.array([[0.0, np.nan]])), "finite"),
    ],
)
def test_bad_input(call, word):
    with pytest.raises(ValueError, match=word):
        call()
