"""What the chapter *Choosing heads* pastes into its prose, as frozen findings glued by field name
(:func:`rgr.chapters.display.glue_finding`): the rows behind the rule, the held-out cells, the F1 check and the
real layers (the tables themselves come from :mod:`.checks`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields

import pandas as pd

from ...experiments.futility import futile_stops
from ..findings import listed, nan_if_none
from ..stats import TIE_ALPHA, h_star_compared, seeds_per_cell
from ..thresholds import law_fits, thresholds
from .checks import REAL_LAYERS, head_count_reading, refit_note

EXPERIMENTS = ("base", "lambda32", "lambda8", "design_check")  # the chapter's sweeps: the rule's rows, then held out


@dataclass(frozen=True)
class _RuleBasis:
    """The rows behind the rule: the law's slope through the origin on the precondition cells of the base grid
    (NaN with fewer than 2 thresholds), the preset the rule was fitted on, and the seeds of each sweep; and where
    one head does as well as several, over every measured cell with m > d_model and a threshold (each sweep's,
    a cell counted once), judged on paired seeds at the cell's D_K* (:func:`rgr.results.stats.h_star_compared`,
    h = 1 against h*): the cells where one head is h* (``one_head_best``), where it is tied with h*
    (``one_head_tied``, with p and seeds), where no budget tried brings one head to the target (``n_no_one_head``,
    all with d_model <= ``no_one_head_d_max``; NaN when there are none), where it reaches the target but was
    rejected against h* (``one_head_worse``, with p and seeds), and where it reaches the target only at a larger
    budget with no run near D_K* to compare (``one_head_later``), of ``n_compressed``; "no cell" where there is
    none."""

    ls_slope: float
    rule_preset: str
    seeds_base: int
    seeds_lambda32: int
    seeds_lambda8: int
    seeds_design_check: int
    n_compressed: int
    one_head_best: str  # "(64, 32), (128, 64) and (256, 64)"; "no cell" when there is none
    one_head_tied: str  # "(2048, 256) (p = 0.13, 3 seeds) and (4096, 512) (p = 0.16, 3 seeds)"
    n_no_one_head: int
    no_one_head_d_max: float
    one_head_worse: str  # "(128, 32) (p = 0.049, 10 seeds) and (1024, 128) (p < 0.001, 10 seeds)"
    one_head_later: str


def _p_words(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


def rule_basis(runs: Mapping[str, pd.DataFrame], preset: str) -> _RuleBasis:
    """:class:`_RuleBasis` from the runs of each of :data:`EXPERIMENTS` (chapter ``choosing_heads.ipynb``)."""
    if set(runs) != set(EXPERIMENTS):
        raise ValueError(f"runs must name exactly {EXPERIMENTS}, got {sorted(runs)}")
    per = {name: thresholds(runs[name]) for name in EXPERIMENTS}  # each sweep's cells once ("base" among them)
    cells = per["base"]
    ls = law_fits(cells).origin_pre if cells["D_K_star"].notna().sum() >= 2 else None
    seeds = {f"seeds_{name}": int(r["seed"].nunique()) for name, r in runs.items()}
    every = pd.concat([per[name].assign(sweep=name) for name in EXPERIMENTS])
    every = every.drop_duplicates(["m", "d_model"])
    every = every[(every["m"] > every["d_model"]) & every["D_K_star"].notna()].sort_values(["m", "d_model"])
    groups: dict[str, list[str]] = {"best": [], "tied": [], "never": [], "worse": [], "later": []}
    never_d = []
    for c in every.itertuples():
        cell = _cell(int(c.m), int(c.d_model))
        if int(c.h_star) == 1:
            groups["best"].append(cell)
            continue
        r = runs[c.sweep]
        at = r[(r["m"] == c.m) & (r["d_model"] == c.d_model) & (r["r"] == c.r)]
        p = h_star_compared(at, int(c.D_K_star), int(c.h_star)).get(1)
        said = f"{cell} ({_p_words(p)}, {int(c.n_seeds)} seeds)" if p is not None else cell
        if p is not None and p > TIE_ALPHA:
            groups["tied"].append(said)
        elif pd.isna(c.D_K_star_h1):
            groups["never"].append(cell)
            never_d.append(float(c.d_model))
        else:
            groups["worse" if p is not None else "later"].append(said)
    words = {k: listed(v) if v else "no cell" for k, v in groups.items()}
    return _RuleBasis(ls_slope=math.nan if ls is None else float(ls.slope), rule_preset=preset, **seeds,
                      n_compressed=len(every), one_head_best=words["best"], one_head_tied=words["tied"],
                      n_no_one_head=len(groups["never"]), no_one_head_d_max=max(never_d) if never_d else math.nan,
                      one_head_worse=words["worse"], one_head_later=words["later"])


@dataclass(frozen=True)
class _HeldOut:
    """One held-out cell's prediction against its measurement (NaN and "—" where its table is too thin)."""

    D_K_pred: float
    D_K_lo: float
    D_K_hi: float
    D_K_star: float
    ratio: float
    h: float
    h_lo: float
    h_hi: float
    h_star: float
    inside: str  # "inside" / "outside": the measured D_K* against the predicted interval
    h_inside: str  # the measured h* against the predicted interval (:func:`.checks.head_count_reading`)


# the cell of each held-out sweep the chapter's prose names (a paper preset holds more; the table shows them all)
_NAMED_CELLS: dict[str, tuple[int, int]] = {"lambda32": (1024, 32), "lambda8": (1024, 128), "design_check": (384, 48)}


@dataclass(frozen=True)
class _ValidationReading:
    """The held-out cells as the chapter words them (fields ``lambda32_D_K_pred``, ... once glued): each sweep's
    named cell (:data:`_NAMED_CELLS`), and how many of all the held-out rows made before their result there are
    and how many of them hold the measured D_K* inside the predicted interval."""

    refit_note: str  # the preregistered cell under a rule refitted after the fact ("" when there is none)
    lambda8_cells: str  # lambda8's held-out cells, "(1024, 128)" or "(1024, 128), (2048, 256) and (4096, 512)"
    further_cells: str  # a sentence on the held-out cells past the named ones ("" when there are none)
    lambda32: _HeldOut
    lambda8: _HeldOut
    design_check: _HeldOut
    n_held: int
    n_held_inside: int
    lambda8_h_point: str  # lambda8's point prediction of h against each of its cells' measured h* interval
    futile_lambda32: int  # runs futility stopping ended early at lambda32's named cell (a rule not in the protocol)
    runs_lambda32: int
    futile_lambda8: int
    runs_lambda8: int


def _held_out(r, heads_run: pd.Series) -> _HeldOut:
    nums = ("D_K_pred", "D_K_lo", "D_K_hi", "D_K_star", "ratio", "h", "h_lo", "h_hi", "h_star")
    if r is None:
        return _HeldOut(**{k: math.nan for k in nums}, inside="—", h_inside="—")
    return _HeldOut(**{k: nan_if_none(getattr(r, k)) for k in nums}, inside="inside" if r.inside else "outside",
                   h_inside=head_count_reading(r.h_lo, r.h_hi, r.h_star, heads_run))


def _h_point(rows: list, runs: pd.DataFrame) -> str:
    """The point prediction of h at each of ``rows`` (one held-out sweep's cells) against the cell's measured
    h* and its interval (:func:`rgr.results.thresholds.thresholds`): a sentence, "" without a measured h*. A
    predicted h outside the interval counts as a miss only where it was compared with h* and rejected
    (:func:`rgr.results.stats.h_star_compared`); one with no run near D_K* was not compared, and is said so."""
    if not rows:
        return ""
    measured = thresholds(runs).set_index(["m", "d_model"])
    said, inside, misses, untested, n_measured = [], [], [], [], 0
    for r in sorted(rows, key=_at):
        t = measured.loc[_at(r)]
        if pd.isna(t["h_star"]):
            said.append(f"{_cell(*_at(r))}: h = {r.h} against no measured h*")
            continue
        n_measured += 1
        lo, hi = int(t["h_lo"]), int(t["h_hi"])
        words = f"h = {r.h} against h* = {int(t['h_star'])} [{lo}, {hi}]"
        said.append(f"{_cell(*_at(r))}: {words}")
        if lo <= r.h <= hi:
            inside.append(said[-1])
            continue
        at = runs[(runs["m"] == r.m) & (runs["d_model"] == r.d_model)]
        compared = h_star_compared(at, int(t["D_K_star"]), int(t["h_star"]))
        if int(r.h) in compared:
            misses.append(said[-1])
        else:
            untested.append(f"{_cell(*_at(r))} ({words})")
    if not n_measured:
        return ""
    gap = ("" if not untested else
           f" At {listed(untested)} the predicted h has no run within 10% of the cell's D_K*, so it was not compared "
           "with h*: there the data cannot say.")
    if not misses:
        where = "every measured cell" if not untested else f"{len(inside)} of the {n_measured} measured cells"
        head = (f"The point prediction lies inside the measured h* interval at {where} "
                f"({listed(said if not untested else inside)})." if inside else "")
        return (head + gap).strip()
    every = "every one of these cells" if len(misses) == n_measured else f"{len(misses)} of these {n_measured} cells"
    return (f"As a point prediction of the head count the rule fails at {every}, where the predicted "
            f"h was compared with h* and rejected ({listed(misses)}); why is unexplained.{gap}")


def _futile(runs: pd.DataFrame, cell: tuple[int, int]) -> tuple[int, int]:
    """(futile-stopped runs, runs) at ``cell`` of ``runs``."""
    at = runs[(runs["m"] == cell[0]) & (runs["d_model"] == cell[1])] if len(runs) else runs
    stops = futile_stops(at)
    return stops.stopped, stops.runs


def validation_reading(val: pd.DataFrame, runs: Mapping[str, pd.DataFrame]) -> _ValidationReading:
    """:class:`_ValidationReading` from the table of :func:`.checks.validation` (a cell's row made before its result:
    rows predicted "after the fact" are left out) and each held-out sweep's runs (its head counts)."""
    before = [r for r in val.itertuples() if not r.prediction.endswith("after the fact")]
    held = {r.experiment: r for r in before if (int(r.m), int(r.d_model)) == _NAMED_CELLS.get(r.experiment)}
    cells = {name: _held_out(held.get(name), runs[name]["h"]) for name in _NAMED_CELLS}
    lambda8 = sorted({_at(r) for r in before if r.experiment == "lambda8"}) or [_NAMED_CELLS["lambda8"]]
    further = [r for r in before if r.experiment in _NAMED_CELLS and _at(r) != _NAMED_CELLS[r.experiment]]
    futile = {name: _futile(runs[name], _NAMED_CELLS[name]) for name in ("lambda32", "lambda8")}
    lambda8_rows = [r for r in before if r.experiment == "lambda8"]
    return _ValidationReading(refit_note=refit_note(val), lambda8_cells=listed([_cell(m, d) for m, d in lambda8]),
                             further_cells=_further(further, runs), **cells, n_held=len(before),
                             n_held_inside=sum(bool(r.inside) for r in before),
                             lambda8_h_point=_h_point(lambda8_rows, runs["lambda8"]),
                             futile_lambda32=futile["lambda32"][0], runs_lambda32=futile["lambda32"][1],
                             futile_lambda8=futile["lambda8"][0], runs_lambda8=futile["lambda8"][1])


def _at(r) -> tuple[int, int]:
    return int(r.m), int(r.d_model)


def _cell(m: int, d_model: int) -> str:
    return f"({m}, {d_model})"


def _further(rows: list, runs: Mapping[str, pd.DataFrame]) -> str:
    """One sentence per held-out sweep on its cells past the named one: prediction [interval] against the measured
    D_K*, inside or not, and the seeds each cell ran."""
    said = []
    for name in _NAMED_CELLS:
        mine = sorted((r for r in rows if r.experiment == name), key=lambda r: (r.m, r.d_model))
        if not mine:
            continue
        n_seeds = seeds_per_cell(runs[name])
        seeds = [int(n_seeds.get(_at(r), 0)) for r in mine]
        each = [f"at {_cell(int(r.m), int(r.d_model))} it predicted {r.D_K_pred:.0f} ({r.D_K_lo:.0f}–{r.D_K_hi:.0f}) "
                f"against " + ("no threshold (no budget tried reached the target)" if pd.isna(r.D_K_star)
                               else f"a measured {r.D_K_star:.0f}") + f" ({'inside' if r.inside else 'outside'})"
                for r in mine]
        if len(mine) == 1:
            ran = f"this cell ran {seeds[0]} seed{'s' if seeds[0] != 1 else ''}"
        elif len(set(seeds)) == 1:
            ran = f"these cells ran {seeds[0]} seed{'s' if seeds[0] != 1 else ''} each"
        else:
            ran = "these cells ran " + listed([str(n) for n in seeds]) + " seeds"
        lam = round(mine[0].m / mine[0].d_model)
        said.append(f"Further along the m/d_model = {lam} diagonal ({name}), " + listed(each) + f"; {ran}.")
    return " ".join(said)


@dataclass(frozen=True)
class _F1Reading:
    """How many of the preregistered F1 predictions the measurement falls inside."""

    f1_n_inside: int
    f1_n: int


def f1_reading(f1: pd.DataFrame) -> _F1Reading:
    """:class:`_F1Reading` from the table of :func:`.checks.f1_check`."""
    return _F1Reading(f1_n_inside=int(f1["inside"].sum()), f1_n=len(f1))


@dataclass(frozen=True)
class _RealLayer:
    """One real layer's row of :func:`.checks.real_layers` (NaN where the rule could not be fitted)."""

    m_cap: float
    lam_cap: float
    h_rule: float
    d_k_rule: float
    h: float
    d_k: float


@dataclass(frozen=True)
class _RealLayersReading:
    """The layers of :data:`.checks.REAL_LAYERS` in order (fields ``real0_m_cap``, ... once glued)."""

    real0: _RealLayer
    real1: _RealLayer
    real2: _RealLayer


def real_layers_reading(real: pd.DataFrame) -> _RealLayersReading:
    """:class:`_RealLayersReading` from the table of :func:`.checks.real_layers` (empty: every number NaN)."""
    names = [f.name for f in fields(_RealLayersReading)]
    if len(names) != len(REAL_LAYERS) or len(real) not in (0, len(REAL_LAYERS)):
        raise ValueError(f"real must have 0 or {len(names)} rows (one per REAL_LAYERS), got {len(real)}")
    rows = list(real.itertuples())
    keys = [f.name for f in fields(_RealLayer)]
    return _RealLayersReading(**{name: _RealLayer(**{k: float(getattr(rows[i], k)) if rows else math.nan for k in keys})
                                for i, name in enumerate(names)})
