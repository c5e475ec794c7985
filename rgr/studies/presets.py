"""What the theory chapters compute while the book builds, sized per chapter preset (issue 18; issue 31 item 2).

One frozen preset type per chapter, each with a ``smoke`` (seconds), ``book`` (each computation under about a
CPU-minute) and ``paper`` (more seeds and cells) instance; a chapter takes its own with ``X.named(preset)``:

- :class:`TheoryPreset` (chapter *theory*): the sampler check's context count;
- :class:`ConstructionsPreset` (chapter *constructions*): its sweeps (:mod:`rgr.studies.construction_sweeps`), the
  Theorem 8.1 width sweep (:mod:`rgr.studies.theorem81`) and the checks of :mod:`rgr.studies.theory_checks`;
- :class:`LowerBoundsPreset` (chapter *lower bounds*): the trained margins (:mod:`rgr.studies.margins`) and the
  per-context widths (:mod:`rgr.studies.per_context`).

These presets size live computations; ``auto`` (which picks stored rows) is refused by the chapters before they
get here (:func:`rgr.chapters.params.check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, TypeVar

__all__ = ["TheoryPreset", "ConstructionsPreset", "LowerBoundsPreset", "CONSTRUCTIONS"]

P = TypeVar("P")


def _pick(table: Mapping[str, P], preset: str, chapter: str) -> P:
    if preset not in table:
        raise ValueError(f"preset = {preset!r}; the {chapter} chapter's presets are {', '.join(map(repr, table))}")
    return table[preset]


@dataclass(frozen=True)
class TheoryPreset:
    """Chapter *theory*: how many contexts the sampler check draws (:mod:`rgr.studies.sampler_check`)."""

    n_check: int

    @classmethod
    def named(cls, preset: str) -> TheoryPreset:
        return _pick(_THEORY, preset, "theory")


@dataclass(frozen=True)
class ConstructionsPreset:
    """Chapter *constructions*: the sweeps of section 4 and the checks of the paper's other results."""

    # sweeps (rgr.studies.construction_sweeps)
    onehot_m: tuple[int, ...]  # success rate against C, one-hot inputs
    onehot_seeds: int
    book_cell: tuple[int, int]  # (m, d_model) of a book-grid cell
    theory_cell: tuple[int, int]  # (m, d_model) where the constants of the theory apply
    phase_m: int  # the d_k -> infinity limit against d_model and B
    phase_d: tuple[int, ...]
    leak: tuple[int, int, int]  # (m, d_model, d_k) of the leakage sweep
    leak_seeds: int
    split_D_K: tuple[int, ...]  # equal budget D_K split into h heads
    split_h: tuple[int, ...]
    softmax_m: int  # Algorithm 2 on one-hot inputs
    softmax_h: tuple[int, ...]
    ells: tuple[int, ...]
    gun_cell: tuple[int, int, int]  # (m, d_model, B) of Algorithm 4
    regular_r: int
    # Theorem 8.1 (rgr.studies.theorem81): Algorithm 2's width sweep, first cell = the theory cell
    width_cells: tuple[tuple[int, int], ...]
    width_d_ks: tuple[int, ...]
    repair_cell: tuple[int, int]  # a cell where d_k <= d_model / ln m holds for d_k >= 2 (ln m)^2-ish
    repair_d_ks: tuple[int, ...]
    width_ells: tuple[int, ...]
    width_n: int  # contexts per (cell, d_k, ell)
    # the other checks (rgr.studies.theory_checks)
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

    @classmethod
    def named(cls, preset: str) -> ConstructionsPreset:
        return _pick(CONSTRUCTIONS, preset, "constructions")


@dataclass(frozen=True)
class LowerBoundsPreset:
    """Chapter *lower bounds*: Theorem 9.2 on trained models and the seed paper's per-context width."""

    margin_runs: tuple[tuple[int, int, int, int], ...]  # Theorem 9.2: trained (m, d_model, h, d_k)
    margin_max_steps: int
    context_ms: tuple[int, ...]  # seed paper: per-context width
    context_ells: tuple[int, ...]
    context_d_model: int
    context_n: int
    budget_d_model: int  # the d_model of the all-contexts budget (data/base.csv rows)

    @classmethod
    def named(cls, preset: str) -> LowerBoundsPreset:
        return _pick(_LOWER_BOUNDS, preset, "lower bounds")


def _ratios(lo: float, hi: float, step: float) -> tuple[float, ...]:
    n = int(round((hi - lo) / step))
    return tuple(lo + step * i for i in range(n + 1))


_THEORY: dict[str, TheoryPreset] = {
    "smoke": TheoryPreset(n_check=200),
    "book": TheoryPreset(n_check=4000),
    "paper": TheoryPreset(n_check=40000),
}

CONSTRUCTIONS: dict[str, ConstructionsPreset] = {
    "smoke": ConstructionsPreset(
        onehot_m=(64,), onehot_seeds=2, book_cell=(128, 32), theory_cell=(256, 256), phase_m=64, phase_d=(16, 64),
        leak=(128, 16, 32), leak_seeds=1, split_D_K=(256, 1024), split_h=(1, 2, 4), softmax_m=64, softmax_h=(1, 4),
        ells=(16, 32), gun_cell=(128, 128, 8), regular_r=2,
        width_cells=((256, 128),), width_d_ks=(48, 216, 864), repair_cell=(512, 256), repair_d_ks=(32,),
        width_ells=(16,), width_n=40,
        onset_ms=(64, 256), onset_ratios=_ratios(20, 50, 10), onset_seeds=2,
        prop84_cell=(256, 64), prop84_D_Ks=(256, 1024), prop84_ell=32, rbce_cell=(256, 128), rbce_c_ps=(4.0,),
        rbce_c_Bs=(0.03,), skew_cell=(256, 128), skew_rs=(2,),
    ),
    "book": ConstructionsPreset(
        onehot_m=(64, 256), onehot_seeds=8, book_cell=(256, 32), theory_cell=(1024, 512), phase_m=256,
        phase_d=(16, 32, 64, 128, 256), leak=(256, 32, 64), leak_seeds=2, split_D_K=(1024, 2048, 4096),
        split_h=(1, 2, 8), softmax_m=256, softmax_h=(1, 2, 4, 8, 16), ells=(16, 64), gun_cell=(256, 256, 16),
        regular_r=2,
        width_cells=((1024, 512), (256, 128)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 864), width_ells=(16, 64), width_n=100,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 2.5), onset_seeds=6,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 1024, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(4.0, 8.0), rbce_c_Bs=(0.03, 0.125), skew_cell=(1024, 512), skew_rs=(2, 4),
    ),
    "paper": ConstructionsPreset(
        onehot_m=(64, 256, 1024), onehot_seeds=20, book_cell=(256, 32), theory_cell=(1024, 512), phase_m=512,
        phase_d=(16, 32, 64, 128, 256, 512), leak=(512, 32, 64), leak_seeds=5, split_D_K=(512, 1024, 2048, 4096),
        split_h=(1, 2, 4, 8), softmax_m=512, softmax_h=(1, 2, 4, 8, 16, 32), ells=(16, 64, 128),
        gun_cell=(256, 256, 16), regular_r=4,
        width_cells=((1024, 512), (256, 128), (1024, 256)), width_d_ks=(48, 97, 216, 432, 864, 1728, 3456),
        repair_cell=(4096, 2048), repair_d_ks=(97, 216, 432, 864), width_ells=(16, 64), width_n=200,
        onset_ms=(64, 128, 256, 512, 1024), onset_ratios=_ratios(15, 55, 1.25), onset_seeds=20,
        prop84_cell=(1024, 256), prop84_D_Ks=(256, 512, 1024, 2048, 4096), prop84_ell=64,
        rbce_cell=(1024, 512), rbce_c_ps=(2.0, 4.0, 8.0), rbce_c_Bs=(0.01, 0.03, 0.06, 0.125),
        skew_cell=(1024, 512), skew_rs=(2, 4),
    ),
}

_LOWER_BOUNDS: dict[str, LowerBoundsPreset] = {
    "smoke": LowerBoundsPreset(
        margin_runs=((32, 32, 1, 4),), margin_max_steps=3000, context_ms=(64,), context_ells=(4, 16),
        context_d_model=32, context_n=5, budget_d_model=8,
    ),
    "book": LowerBoundsPreset(
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20)), margin_max_steps=20_000,
        context_ms=(64, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64, context_n=20, budget_d_model=32,
    ),
    "paper": LowerBoundsPreset(
        margin_runs=((64, 64, 1, 4), (64, 32, 1, 6), (64, 16, 2, 10), (128, 32, 1, 20), (128, 64, 1, 7)),
        margin_max_steps=20_000, context_ms=(64, 256, 1024), context_ells=(4, 8, 16, 32, 64), context_d_model=64,
        context_n=50, budget_d_model=32,
    ),
}
