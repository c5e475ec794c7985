"""Which cells a chapter's figure shows, as its caption pastes them: the paper's choice where the table has it,
else a stated fallback (chapters *permutation sweeps*, Fig. 1's cell, and *denser graphs*, Fig. 11's out-degrees).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from .findings import listed

__all__ = ["shown_cell", "shown_degrees"]


@dataclass(frozen=True)
class _ShownCell:
    """The (m, d_model) cell the chapter's F1-against-budget figure shows."""
    fig1_cell: str  # "(m, d_model)", as the caption pastes it
    fig1_m: int
    fig1_d_model: int


def shown_cell(runs: pd.DataFrame, wanted: tuple[int, int]) -> _ShownCell:
    """The paper's Fig. 1 cell ``wanted`` where ``runs`` (columns m, d_model) has it, else the middle cell
    (``permutation_sweeps.ipynb``, the F1 figure)."""
    present = sorted({(int(m), int(d)) for m, d in runs[["m", "d_model"]].itertuples(index=False)})
    if not present:
        raise ValueError("runs has no (m, d_model) cell to show")
    m, d = tuple(wanted) if tuple(wanted) in present else present[len(present) // 2]
    return _ShownCell(fig1_cell=f"({m}, {d})", fig1_m=m, fig1_d_model=d)


@dataclass(frozen=True)
class _ShownDegrees:
    """The out-degrees the chapter's F1 figure shows (the paper's Fig. 11 ones that the table has)."""
    fig11_r: str  # "r = 2 and r = 4", as the figure's caption pastes it
    degrees: tuple[int, ...]


def shown_degrees(runs: pd.DataFrame, wanted: tuple[int, ...]) -> _ShownDegrees:
    """The out-degrees of ``wanted`` present in ``runs`` (a column ``r``), else its two smallest
    (``denser_graphs.ipynb``, the F1 figure)."""
    if "r" not in runs:
        raise ValueError("runs must have a column 'r' (the out-degree)")
    present = sorted({int(r) for r in runs["r"]})
    show = [int(r) for r in wanted if r in present] or present[:2]
    return _ShownDegrees(fig11_r=listed([f"r = {r}" for r in show]), degrees=tuple(show))
