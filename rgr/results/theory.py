"""What the chapter *the task and the model* (book/theory.ipynb) reads off its live draws, as one frozen finding.

The chapter draws everything from its seed (:mod:`rgr.studies.sampler_check`); :class:`TheoryFinding` holds the
sampler check it quotes, and the chapter glues :func:`rgr.results.findings.flatten` of it (its prose names every
number ``<part>_<field>``, e.g. ``small_target_present``). The figures are :mod:`rgr.chapters.figures.theory`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..studies.sampler_check import SamplerRates, chance_rate

__all__ = ["TheoryFinding", "theory_finding"]


@dataclass(frozen=True)
class TheoryFinding:
    """The sampler against its closed forms: ``chance`` (rho = 0 at the chapter's m, where a target is in a context
    by chance only, at ``chance_predicted``), and ``small``/``large`` (the chapter's rho at two sizes of m)."""

    chance: SamplerRates
    chance_predicted: float
    small: SamplerRates
    large: SamplerRates


def theory_finding(chance: SamplerRates, small: SamplerRates, large: SamplerRates) -> TheoryFinding:
    """Put the chapter's sampler checks together (``chance`` must be drawn with rho = 0)."""
    if chance.rho != 0:
        raise ValueError(f"chance must be drawn with rho = 0, got rho = {chance.rho}")
    return TheoryFinding(chance=chance, chance_predicted=chance_rate(chance.m, chance.ell), small=small, large=large)
