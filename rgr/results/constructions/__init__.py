"""Chapter *constructions* (book/constructions.ipynb): from its live tables to one frozen finding.

- :mod:`.findings`: the sweeps (:class:`~.findings.SweepsFinding`), Algorithm 5's packing, Algorithm 2's width
  sweep, Algorithm 1's onset and the other checks;
- :mod:`.paper_theory`: the book's findings about the paper's theory (Theorem 8.1's gap, Algorithm 1's onset),
  which the intro and *Does it replicate?* paste.

:class:`ConstructionsFinding` holds them all; the chapter glues :func:`rgr.results.findings.flatten` of it, so
every number in its prose is named ``<part>_<field>`` (e.g. ``paper_gap_present_lo``). The tables come from
:mod:`rgr.studies` (sized by :class:`rgr.studies.construction_sweeps.ConstructionsPreset`); the figures are
:mod:`rgr.chapters.figures.constructions`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import ChecksFinding, ColoringSummary, SoftmaxWidthFinding, SweepsFinding
from .paper_theory import PaperTheoryFinding

__all__ = ["ConstructionsFinding"]


@dataclass(frozen=True)
class ConstructionsFinding:
    """Everything the chapter's prose quotes, by part: ``sweeps``, ``coloring``, ``width`` (Algorithm 2 against d_k),
    ``paper`` (the findings about the paper's theory) and ``checks`` (Proposition 8.4, Corollaries B.7, B.10)."""

    sweeps: SweepsFinding
    coloring: ColoringSummary
    width: SoftmaxWidthFinding
    paper: PaperTheoryFinding
    checks: ChecksFinding
