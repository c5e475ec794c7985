"""The context sampler against its closed forms, drawn live (chapter *the task and the model*; read by
:mod:`rgr.results.theory`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..task.contexts import sample
from ..task.graphs import permutation_graph

__all__ = ["SamplerRates", "chance_rate", "sampler_rates"]


def chance_rate(m: int, ell: int) -> float:
    """With rho = 0 a derangement's target is in a context by chance only: ``(ell - 1) / (m - 1)``."""
    if m < 2 or not 1 <= ell <= m:
        raise ValueError(f"need m >= 2 and 1 <= ell <= m, got m={m}, ell={ell}")
    return (ell - 1) / (m - 1)


@dataclass(frozen=True)
class SamplerRates:
    """Measured on ``n`` validation contexts: share of positions whose target is in the context, and
    the share of designated sources whose target is (1 by construction when rho > 0)."""

    m: int
    ell: int
    rho: float
    n: int
    target_present: float
    served: float


def sampler_rates(m: int, seed: int, n: int, ell: int, rho: float, device: str = "cpu") -> SamplerRates:
    """:class:`SamplerRates` of the protocol's sampler on a permutation graph of ``m`` items."""
    g = permutation_graph(m, seed)
    b = sample(g, seed, n=n, ell=ell, rho=rho, stream="val", device=device)
    served = b.labels[b.sources].any(-1).double().mean().item() if bool(b.sources.any()) else float("nan")
    return SamplerRates(m, ell, float(rho), n, b.labels.any(-1).double().mean().item(), served)
