"""The context sampler against its closed forms, drawn live (chapter *the task and the model*), and what the
chapter reads off its draws as one frozen finding (:func:`theory_finding`): the chapter glues
:func:`rgr.results.findings.flatten` of it (its prose names every number ``<part>_<field>``, e.g.
``small_target_present``). The figures are :mod:`rgr.chapters.figures.theory`."""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol import pick_preset
from ..task.contexts import sample
from ..task.graphs import permutation_graph


@dataclass(frozen=True)
class TheoryPreset:
    """Chapter *theory*: how many contexts the sampler check draws (:func:`sampler_rates`; smoke / book / paper)."""

    n_check: int

    @classmethod
    def named(cls, preset: str) -> TheoryPreset:
        return pick_preset(_THEORY, preset, "theory")


_THEORY: dict[str, TheoryPreset] = {
    "smoke": TheoryPreset(n_check=200),
    "book": TheoryPreset(n_check=4000),
    "paper": TheoryPreset(n_check=40000),
}


def _chance_rate(m: int, ell: int) -> float:
    """With rho = 0 a derangement's target is in a context by chance only: ``(ell - 1) / (m - 1)``."""
    if m < 2 or not 1 <= ell <= m:
        raise ValueError(f"need m >= 2 and 1 <= ell <= m, got m={m}, ell={ell}")
    return (ell - 1) / (m - 1)


@dataclass(frozen=True)
class _SamplerRates:
    """Measured on ``n`` validation contexts: share of positions whose target is in the context, and
    the share of designated sources whose target is (1 by construction when rho > 0)."""

    m: int
    ell: int
    rho: float
    n: int
    target_present: float
    served: float


def sampler_rates(m: int, seed: int, n: int, ell: int, rho: float, device: str = "cpu") -> _SamplerRates:
    """:class:`_SamplerRates` of the protocol's sampler on a permutation graph of ``m`` items."""
    g = permutation_graph(m, seed)
    b = sample(g, seed, n=n, ell=ell, rho=rho, stream="val", device=device)
    served = b.labels[b.sources].any(-1).double().mean().item() if bool(b.sources.any()) else float("nan")
    return _SamplerRates(m, ell, float(rho), n, b.labels.any(-1).double().mean().item(), served)


@dataclass(frozen=True)
class _TheoryFinding:
    """The sampler against its closed forms: ``chance`` (rho = 0 at the chapter's m, where a target is in a context
    by chance only, at ``chance_predicted``), and ``small``/``large`` (the chapter's rho at two sizes of m)."""

    chance: _SamplerRates
    chance_predicted: float
    small: _SamplerRates
    large: _SamplerRates


def theory_finding(chance: _SamplerRates, small: _SamplerRates, large: _SamplerRates) -> _TheoryFinding:
    """Put the chapter's sampler checks together (``chance`` must be drawn with rho = 0)."""
    if chance.rho != 0:
        raise ValueError(f"chance must be drawn with rho = 0, got rho = {chance.rho}")
    return _TheoryFinding(chance=chance, chance_predicted=_chance_rate(chance.m, chance.ell), small=small, large=large)
