"""Frozen item embeddings ``X`` of shape (m, d_model) (chapter *theory*).

Rows are items. The experiments use Gaussian unit-norm embeddings; the
constructions chapter also uses one-hot and random binary (compressive)
families; :func:`from_array` validates a user-given table (for example GPT-2's).
The value channel's items also carry messages ``y = x W_V``, through a frozen projection drawn from the run's
seed (:func:`value_projection`; chapter *value channel*).
"""

from __future__ import annotations

import numpy as np
import torch

from .rng import derive_seed


def _check_dims(m: int, d_model: int) -> None:
    for name, v in (("m", m), ("d_model", d_model)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")


def gaussian_unit(m: int, d_model: int, seed: int) -> torch.Tensor:
    """x_i ~ N(0, I/d_model), then L2-normalized; float32 (m, d_model), seeded."""
    _check_dims(m, d_model)
    g = torch.Generator().manual_seed(derive_seed(seed, "embed"))
    x = torch.randn(m, d_model, generator=g, dtype=torch.float64) / d_model**0.5
    return (x / x.norm(dim=1, keepdim=True)).float()


def value_projection(d_model: int, d_msg: int, seed: int) -> torch.Tensor:
    """The frozen W_V (d_model, d_msg) of protocol E6, float64: entries N(0, 1/d_model), from the run's "value"
    stream (a unit-norm item's message ``x W_V`` has mean squared norm d_msg / d_model)."""
    g = torch.Generator().manual_seed(derive_seed(seed, "value"))
    return torch.randn(d_model, d_msg, generator=g, dtype=torch.float64) * d_model**-0.5


def one_hot(m: int) -> torch.Tensor:
    """The identity: item i is e_i (so d_model = m, no compression)."""
    _check_dims(m, m)
    return torch.eye(m)


def random_binary(m: int, d_model: int, seed: int, p: float = 0.5) -> torch.Tensor:
    """Random binary compressive embeddings: i.i.d. Bernoulli(p) entries in {0, 1}."""
    _check_dims(m, d_model)
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    g = torch.Generator().manual_seed(derive_seed(seed, "embed"))
    x = (torch.rand(m, d_model, generator=g, dtype=torch.float64) < p).double()
    return x.float()


def from_array(x: np.ndarray | torch.Tensor) -> torch.Tensor:
    """Validate a user-given embedding table: 2-D and finite."""
    t = torch.as_tensor(np.asarray(x) if not isinstance(x, torch.Tensor) else x)
    if t.dim() != 2:
        raise ValueError(f"embedding must be a 2-D array (m, d_model), got shape {tuple(t.shape)}")
    if t.shape[0] < 1 or t.shape[1] < 1:
        raise ValueError(f"embedding must have m >= 1 rows and d_model >= 1 columns, got {tuple(t.shape)}")
    if not t.is_floating_point():
        t = t.double()
    if not torch.isfinite(t).all():
        raise ValueError("embedding must be finite (found NaN or inf)")
    return t.float()
