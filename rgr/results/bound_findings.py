"""What the chapter *lower bounds* reads off its tables (issue 13 item 2: findings in the package)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

__all__ = ["BoundsFinding", "bounds_finding"]


@dataclass(frozen=True)
class BoundsFinding:
    """The regime table's fit to the exact count, and the constructions' distance from the bit bound.

    ``form_ratio``: per regime, (min, max) over m of bound / regime form (flat: the form has the
    bound's growth); ``inside_entropy``: the exact count lies in its entropy bracket on every row;
    ``gap_lo``/``gap_hi``: explicit D_K / bit bound over the cells with a construction; ``largest_bound``:
    per b, the largest bit bound over the table's cells; ``rank_one_share``: share of cells whose
    cheapest construction is one rank-one head per edge (D_K = m').
    """

    form_ratio: dict[str, tuple[float, float]]
    inside_entropy: bool
    gap_lo: float
    gap_hi: float
    largest_bound: dict[float, float]
    rank_one_share: float


def bounds_finding(reg: pd.DataFrame, gap: pd.DataFrame, bnd: pd.DataFrame) -> BoundsFinding:
    """Read :func:`rgr.theory.bounds.regime_table`, :func:`~rgr.theory.bounds.gap_table` and
    :func:`~rgr.theory.bounds.bound_rows` (see :class:`BoundsFinding`)."""
    ratio = reg.groupby("regime").form_ratio.agg(["min", "max"])
    g = gap.dropna(subset=["best_D_K"])
    return BoundsFinding(
        form_ratio={str(k): (float(r["min"]), float(r["max"])) for k, r in ratio.iterrows()},
        inside_entropy=bool(((reg.entropy_lo <= reg.log2_count) & (reg.log2_count <= reg.entropy_hi)).all()),
        gap_lo=float(g.best_over_bound.min()) if len(g) else math.nan,
        gap_hi=float(g.best_over_bound.max()) if len(g) else math.nan,
        largest_bound={float(b): float(s.bound_DK.max()) for b, s in bnd.groupby("b")},
        rank_one_share=float((g.best_D_K == g.m_edges).mean()) if len(g) else math.nan,
    )
