import numpy as np
import torch

from rgr.task import rng


def _mix_numpy(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.uint64)
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def test_mix_matches_unsigned_reference():
    vals = np.array([0, 1, 2, 12345, -5, 2**62, -(2**63)], dtype=np.int64)
    got = rng.mix(torch.from_numpy(vals)).numpy().view(np.uint64)
    assert np.array_equal(got, _mix_numpy(vals.view(np.uint64)))


def test_uniform_range_and_moments():
    keys = torch.tensor([rng.stream_key(s, "train") for s in range(4)])
    u = rng.uniform(keys, torch.arange(5000).repeat(4, 1), 8)
    assert u.shape == (4, 5000, 8)
    assert float(u.min()) >= 0.0 and float(u.max()) < 1.0
    assert abs(u.mean().item() - 0.5) < 0.005 and abs(u.var().item() - 1 / 12) < 0.002
    # neighbouring slots, indices and seeds are uncorrelated
    flat = u.reshape(-1, 8)
    c = np.corrcoef(flat.T.numpy())
    assert np.abs(c[np.triu_indices(8, 1)]).max() < 0.02


def test_randint_bounds():
    u = torch.tensor([0.0, 0.5, 1 - 2**-53])
    assert rng.randint(u, 10).tolist() == [0, 5, 9]
