"""What the chapter *lower bounds* reads off its tables (issue 13 item 2: findings in the package)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from .findings import glued
from .theory_checks import MarginFinding, SeedPaperFinding

__all__ = ["BoundsFinding", "bounds_finding", "MARGIN_DIGITS", "chapter_values"]


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


# decimals the chapter shows of the trained models' margins: training takes a different float path on each
# CPU (its matmul kernels), which moves gamma by about 1e-6 of itself, so nothing finer is glued
MARGIN_DIGITS = {"gamma": 5, "bits": 1, "ratio": 2}


def chapter_values(found: BoundsFinding, fm: MarginFinding, fs: SeedPaperFinding, budget_d_model: int) -> dict[str, object]:
    """The numbers the chapter's prose glues, by name: the margins rounded to :data:`MARGIN_DIGITS`, every other
    float to :data:`rgr.results.findings.DIGITS` decimals (their last bits vary by CPU)."""
    g, b, r = (MARGIN_DIGITS[k] for k in ("gamma", "bits", "ratio"))
    noisy = dict(mg_g0=(fm.gamma_min, g), mg_g1=(fm.gamma_max, g), mg_b0=(fm.bits_min, b), mg_b1=(fm.bits_max, b),
                 mg_r0=(fm.bound_over_DK_min, r), mg_r1=(fm.bound_over_DK_max, r), mg_c1=(fm.best_case_over_DK_max, r))
    values: dict[str, object] = dict(
        gap_lo=found.gap_lo, gap_hi=found.gap_hi, rank_one=100 * found.rank_one_share,
        inside="holds" if found.inside_entropy else "fails", mg_n=fm.n,
        mg_all="every" if fm.all_recovered else "not every", pc_l0=fs.ell_lo, pc_l1=fs.ell_hi, pc_d0=fs.d_lo,
        pc_d1=fs.d_hi, pc_spread=fs.m_spread, pc_slope=fs.slope_ln_ell, pc_ref=fs.d_ref, pc_lref=fs.ell_ref,
        bu_m0=fs.m_lo, bu_m1=fs.m_hi, bu_0=fs.budget_lo, bu_1=fs.budget_hi, bu_d=budget_d_model)
    return {**{k: glued(v) for k, v in values.items()}, **{k: glued(v, d) for k, (v, d) in noisy.items()}}
