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


def _uniform_numpy(key: int, index: np.ndarray, n_slots: int) -> np.ndarray:
    """The module docstring's uniforms in unsigned 64-bit numpy: splitmix64's finalizer of the key plus the mixed
    index, plus each slot times a constant, mixed again; its top 53 bits."""
    golden, c2 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0x94D049BB133111EB)
    with np.errstate(over="ignore"):
        base = _mix_numpy(np.uint64(key & (2**64 - 1)) + _mix_numpy(index.astype(np.uint64) * golden))
        words = _mix_numpy(base[:, None] + np.arange(n_slots, dtype=np.uint64) * c2)
    return (words >> np.uint64(11)).astype(np.float64) * 2.0**-53


def test_uniform_matches_unsigned_reference():
    index = np.array([0, 1, 2, 12345, 2**40, 2**62], dtype=np.int64)
    keys = [rng.stream_key(s, stream) for s in (0, 1, 7, 2**40) for stream in ("train", "value", 9)]
    assert any(k < 0 for k in keys) and any(k > 0 for k in keys)  # both halves of the signed int64 keys
    for key in keys:
        got = rng.uniform(torch.tensor([key]), torch.from_numpy(index)[None], 5)[0].numpy()
        assert np.array_equal(got, _uniform_numpy(key, index, 5))


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
