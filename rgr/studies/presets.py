"""Sizes of the theory checks the chapters *constructions* and *lower bounds* run live (issue 18).

One frozen preset per chapter preset: ``smoke`` (seconds), ``book`` (each computation under about a
CPU-minute), ``paper`` (more seeds and cells). The chapters read ``THEORY_PRESETS[preset]``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TheoryPreset", "THEORY_PRESETS"]


@dataclass(frozen=True)
class TheoryPreset:
    """Grids of the live theory checks; see :mod:`rgr.results.theory_checks` for what each measures."""

    width_cells: tuple[tuple[int, int], ...]  # Algorithm 2 width sweep (Theorem 8.1), first = the theory cell
    width_d_ks: tuple[int, ...]
    repair_cell: tuple[int, int]  # a cell where d_k <= d_model / ln m holds for d_k >= 2 (ln m)^2-ish
    repair_d_ks: tuple[int, ...]
    width_ells: tuple[int, ...]
    width_n: int  # contexts per (cell, d_k, ell)
    onset_ms: tuple[int, ...]  # Algorithm 1 onset
    onset_ratios: tuple[float, ...]  # d_model / ln m
    onset_seeds: int
    prop84_cell: tuple[int, int]
    prop84_D_Ks: tuple[int, ...]
    prop84_ell: int
    rbce_cell: tuple[int, int]  # Corollary B.7 (m > d_model)
    rbce_c_ps: tuple[float, ...]
    rbce_c_Bs: tuple[float, ...]
    skew_cell: tuple[int, int]  # Corollary B.10 (m, d_model)
    skew_rs: tuple[int, ...]
    margin_runs: tuple[tuple[int, int, int, int], ...]  # Theorem 9.2: trained (m, d_model, h, d_k)
    margin_max_steps: int
    context_ms: tuple[int, ...]  # seed paper: per-context width
    context_ells: tuple[int, ...]
    context_d_model: int
    context_n: int
    budget_d_model: int


def _ratios(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(lo + step * i for i in range(n + 1))


THEORY_PRESETS: dict[str, TheoryPreset] = {
    "smoke": TheoryPreset(
        width_cells=((256, 128),), width_d_ks=(48, 216, 864), repair_cell=(512, 256), repair_d_ks=(32,),
        width_ells=(16,), width_n=40, onset_ms=(64, 256), onset_ratios=_ratios(20, 50, 10), onset_seeds=2,
        prop84_cell=(256, 64), prop84_D_Ks=(256, 1024), prop84_ell=32, rbce_cell=(256, 128), rbce_c_ps=(4.0,),
        rbce_c_Bs=(0.03,), skew_cell=(256, 128), skew_rs=(2,), margin_runs=((32, 32, 1, 4),),
        margin_max_steps=3000, context_ms=(64,), context_ells=(4, 16), context_d_model=32, context_n=5,
        budget_d_model=8,
    ),
    "book": TheoryPreset(
        width_cells=((1024, 512), (256, 128)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 864), width_ells=(16, 64), width_n=100,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 2.5), onset_seeds=6,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 1024, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(4.0, 8.0), rbce_c_Bs=(0.03, 0.125),
        skew_cell=(1024, 512), skew_rs=(2, 4),
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20)), margin_max_steps=20_000,
        context_ms=(64, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64, context_n=20,
        budget_d_model=32,
    ),
    "paper": TheoryPreset(
        width_cells=((1024, 512), (256, 128), (1024, 256)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 432, 864), width_ells=(16, 64), width_n=200,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 1.25), onset_seeds=20,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 512, 1024, 2048, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(2.0, 4.0, 8.0), rbce_c_Bs=(0.01, 0.03, 0.06, 0.125),
        skew_cell=(1024, 512), skew_rs=(2, 4),
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20), (128, 64, 1, 7)),
        margin_max_steps=20_000, context_ms=(64, 256, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64,
        context_n=50, budget_d_model=32,
    ),
}
