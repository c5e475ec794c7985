"""The item table of protocol E7 and its labelled stand-in (chapter *GPT-2 block*).

An :class:`ItemTable` holds the ``m`` items (token ids, ordered by descending
count, ties by id), their counts, GPT-2 small's token-embedding rows ``wte`` for
them, and ``NULL = wte[EOS]``. Because the rows are ordered by frequency, the
item set for any smaller ``m`` is a prefix of the table (:meth:`ItemTable.head`).
Where a real table comes from is :mod:`rgr.gpt2.items`' business.

Where no real table is there, a config's ``embeddings="stand-in"`` runs on a
*stand-in* (:func:`stand_in_items`): seeded random vectors with some of GPT-2's geometry — a shared mean
direction, an anisotropic spectrum, row norms of a few units — whose provenance
says ``source = "stand-in (not GPT-2)"``. It is a placeholder so that the
pipeline runs everywhere; results on it are not results about GPT-2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from ..task.embeddings import from_array
from ..task.rng import derive_seed, stream_key, uniform
from .experiment import STAND_IN_SOURCE

N_TOKENS = 10_000_000  # protocol E7: the first 10M GPT-2 tokens of WikiText-103 train


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True, eq=False)
class ItemTable:
    """The m items of E7 with their GPT-2 embedding rows and where they came from.

    ``token_ids`` (m,) int64, ``counts`` (m,) int64 (descending), ``tokens``
    (m,) str, ``embeddings`` (m, d_model) float32, ``null`` (d_model,) float32,
    ``provenance`` a JSON-able dict whose ``source`` names the origin.
    """

    token_ids: np.ndarray
    counts: np.ndarray
    tokens: np.ndarray
    embeddings: np.ndarray
    null: np.ndarray
    provenance: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = self.embeddings.shape[0]
        for name in ("token_ids", "counts", "tokens"):
            if getattr(self, name).shape != (m,):
                raise ValueError(f"{name} must have shape ({m},), got {getattr(self, name).shape}")
        if self.null.shape != (self.embeddings.shape[1],):
            raise ValueError(f"null must have shape ({self.embeddings.shape[1]},), got {self.null.shape}")
        if "source" not in self.provenance:
            raise ValueError("provenance must say its 'source'")

    @property
    def m(self) -> int:
        return int(self.embeddings.shape[0])

    @property
    def d_model(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def source(self) -> str:
        return str(self.provenance["source"])

    @property
    def is_stand_in(self) -> bool:
        return self.source == STAND_IN_SOURCE

    def head(self, m: int) -> "ItemTable":
        """The m most frequent items (a prefix of the table)."""
        if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or not 1 <= m <= self.m:
            raise ValueError(f"m must be an integer in [1, {self.m}] (the table's size), got {m!r}")
        return replace(
            self,
            token_ids=self.token_ids[:m],
            counts=self.counts[:m],
            tokens=self.tokens[:m],
            embeddings=self.embeddings[:m],
            provenance={**self.provenance, "m": int(m)},
        )

    def table(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """E of protocol E7: (m + 1, d_model) float32, the items' rows then NULL (index m)."""
        e = from_array(np.concatenate([self.embeddings, self.null[None]], axis=0).astype(np.float32))
        return e.to(device)


# ----------------------------------------------------------------------------- the stand-in


@dataclass(frozen=True)
class StandInSpec:
    """The stand-in's geometry. Hand-set from the broad shape of GPT-2's ``wte``
    (a common offset shared by all rows, a decaying spectrum, norms of a few
    units); not fitted to GPT-2.
    """

    d_model: int = 768
    norm: float = 3.5  # median row norm
    norm_spread: float = 0.1  # sd of log row norm
    mean_share: float = 0.3  # |mean direction|^2 / E|row|^2 before norming (≈ mean cosine of two rows)
    spectrum_decay: float = 0.5  # variance of the j-th principal direction ∝ (j + 1) ** -decay
    seed: int = 0


_NULL_INDEX = 1 << 40  # the stand-in NULL's counter index: past any item row


def _gaussians(seed: int, index: torch.Tensor, n: int) -> torch.Tensor:
    """Standard normals (len(index), n) float64: row i depends only on (seed, index[i]) (Box–Muller)."""
    keys = torch.tensor([stream_key(seed, "embed")], dtype=torch.int64)
    u = uniform(keys, index[None].to(torch.int64), 2 * n)[0]  # (k, 2n)
    r = torch.sqrt(-2.0 * torch.log1p(-u[:, :n]))
    return r * torch.cos(2 * math.pi * u[:, n:])


def stand_in_items(m: int, spec: StandInSpec = StandInSpec()) -> ItemTable:
    """A seeded stand-in table (NOT GPT-2): rows ``mu + Q diag(sqrt(lam)) z``, then scaled to
    log-normal norms. Row i depends only on (spec, i), so smaller m give prefixes.
    Counts are a synthetic Zipf law; token ids are 0..m-1; tokens read ``<stand-in i>``.
    """
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 1:
        raise ValueError(f"m must be an integer >= 1, got {m!r}")
    d = spec.d_model
    if not isinstance(d, int) or d < 2:
        raise ValueError(f"spec.d_model must be an integer >= 2, got {d!r}")
    if not 0.0 <= spec.mean_share < 1.0:
        raise ValueError(f"spec.mean_share must be in [0, 1), got {spec.mean_share}")
    g = torch.Generator().manual_seed(derive_seed(spec.seed, "embed"))
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))  # (d, d) orthogonal
    mu = torch.randn(d, generator=g, dtype=torch.float64)
    mu = mu / mu.norm() * math.sqrt(spec.mean_share)
    lam = (torch.arange(d, dtype=torch.float64) + 1.0) ** -spec.spectrum_decay
    lam = lam / lam.sum() * (1.0 - spec.mean_share)  # total variance + |mu|^2 = 1

    idx = torch.cat([torch.arange(m, dtype=torch.int64), torch.tensor([_NULL_INDEX])])
    z = _gaussians(spec.seed, idx, d + 1)  # (m+1, d+1): d for the direction, 1 for the norm
    x = mu + (z[:, :d] * lam.sqrt()) @ basis.T  # (m+1, d)
    norms = spec.norm * torch.exp(spec.norm_spread * z[:, d])
    x = x / x.norm(dim=1, keepdim=True) * norms[:, None]

    zipf = 1.0 / np.arange(1, m + 1)
    counts = np.floor(N_TOKENS * zipf / (np.log(50257) + 0.5772)).astype(np.int64)
    prov = {
        "source": STAND_IN_SOURCE,
        "note": "seeded random vectors with GPT-2-like geometry; NOT GPT-2's embeddings; counts are synthetic (Zipf)",
        "how_to_use_gpt2": "python -m rgr gpt2 build  (needs the hub, or RGR_GPT2_DIR with a local copy)",
        "stand_in_spec": {k: getattr(spec, k) for k in spec.__dataclass_fields__},
        "m": int(m),
        "d_model": int(d),
    }
    return ItemTable(
        token_ids=np.arange(m, dtype=np.int64),
        counts=counts,
        tokens=np.array([f"<stand-in {i}>" for i in range(m)]),
        embeddings=x[:m].float().numpy(),
        null=x[m].float().numpy(),
        provenance=prov,
    )


