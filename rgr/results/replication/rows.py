"""What every reader of the verdict table shares (chapter *Does it replicate?*): one experiment's runs
(:class:`Source`), one claim's row (:class:`ClaimRow`) and a reading beside it (:class:`Reading`), the basis of a
number (:func:`basis`), a row that cannot be read (:func:`untestable`) and one fitted constant's row (:func:`fit_row`).

The readers themselves are listed per claim key in :data:`rgr.results.replication.registry.READERS`.

Two readers take rows of a run made for them: ``value_d32_best`` the decision run ``value_long``
(:func:`deciding_runs`, :func:`long_source`), the GPT-2 rows the ``compressive`` preset (:func:`gpt2_source`); why
each ran, declared before it did: README, *Choices the paper left open*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...catalog import load, load_if_present, preset_completeness, resolve_preset
from ...experiments.futility import futile_stops
from ...protocol import law_x
from ...store import TableError
from .. import reported as rep
from .seed_bootstrap import Draws, Noise, fit_stats, noise
from .verdicts import Verdict, fit_interval, noise_verdict

_NAN = math.nan


_FIT = {"slope": 0, "intercept": 1, "r2": 2}


@dataclass(frozen=True)
class Source:
    """One experiment's runs and the preset they belong to."""

    name: str
    preset: str
    runs: pd.DataFrame


@dataclass(frozen=True)
class Reading:
    """A reading of a claim shown beside the verdict, deciding nothing: its name, the book's value, its 95% noise
    interval and whether the paper's value lies in it (None where there is no interval)."""

    name: str
    value: float
    lo: float
    hi: float
    holds: bool | None
    edge: bool = False  # the paper's rounding window straddles an end of the interval (:func:`place`)

    def words(self, paper: float) -> str:
        if self.holds is None:
            return f"{self.name}: {self.value:.3g} (no interval)"
        return (f"{self.name}: {self.value:.3g} [{self.lo:.3g}, {self.hi:.3g}], the paper's {paper:.3g} "
                + (EDGE if self.edge else "inside" if self.holds else "outside"))


EDGE = "at the edge (within the paper's rounding)"


def paper_window(key: str) -> tuple[float, float]:
    """The values the paper's printed number of claim ``key`` stands for: "1.19" is [1.185, 1.195] (its last digit
    rounded); a claim printed otherwise, its value alone."""
    c = rep.claim(key)
    text = c.paper.replace("−", "-").strip()
    try:
        float(text)
    except ValueError:
        return float(c.value), float(c.value)
    half = 0.5 * 10.0 ** -(len(text.split(".")[1]) if "." in text else 0)
    return float(c.value) - half, float(c.value) + half


def place(window: tuple[float, float], lo: float, hi: float) -> str:
    """Where the paper's rounding ``window`` lies against the interval [lo, hi]: "inside" (all of it), "outside" (none
    of it) or :data:`EDGE` (it straddles an end, so the printed number cannot say which)."""
    a, z = window
    if lo <= a and z <= hi:
        return "inside"
    if z < lo or a > hi:
        return "outside"
    return EDGE


@dataclass(frozen=True)
class Longer:
    """A row read again with a longer step budget (the settled extension, not the protocol;
    :mod:`~rgr.results.replication.second_readings`):
    the budget (a multiple of the protocol's cutoff), the book's value and
    interval there, the status that reading would get and its reason's first clause, whether it is settled (few
    runs at the new D_K* still cut), the runs at each cell's D_K* still cut, and D_K* per cell from 1x to it."""

    budget: int
    book: str
    interval: str
    status: str
    said: str
    settled: bool
    cut: str
    moved: str
    reason: str = ""  # the measured effect of the cutoff on the row's claim, where the row offered it as a reason


@dataclass(frozen=True)
class ClaimRow:
    """The book's side of one reported claim: ``interval`` is always the 95% noise interval (or the rule's reading of
    the seeds' noise), ``cells`` the bootstrap over cells of a fitted constant, shown beside it; ``preset`` the preset
    of the rows read (set by :func:`rgr.results.replication.registry.evaluate`)."""

    key: str
    book: str
    interval: str
    basis: str
    verdict: Verdict
    value: float = _NAN
    lo: float = _NAN
    hi: float = _NAN
    cells: str = "—"
    readings: tuple[Reading, ...] = ()
    preset: str = ""
    cells_lo: float = _NAN  # the bootstrap over cells, as numbers (NaN where the row has none)
    cells_hi: float = _NAN
    base_ruled_out: bool = False  # the paper's own Table 1 reproduces its fit in the law's base only (law rows)
    longer: Longer | None = None  # the row read with a longer step budget (rgr.results.replication.second_readings)


def seeds_per_point(runs: pd.DataFrame) -> int:
    """The most seeds behind one (cell, h, D_K) point of ``runs`` (0 without rows)."""
    if not len(runs):
        return 0
    return int(runs.groupby([c for c in ("m", "d_model", "r", "h", "D_K") if c in runs])["seed"].nunique().max())


def cutoffs(runs: pd.DataFrame) -> str:
    """The step cutoffs of ``runs``: "20k" or "20k–80k" (what a threshold was trained to)."""
    if not len(runs) or "max_steps" not in runs:
        return "?"
    lo, hi = int(runs["max_steps"].min()), int(runs["max_steps"].max())
    k = lambda v: f"{v / 1000:g}k"  # noqa: E731
    return k(lo) if lo == hi else f"{k(lo)}–{k(hi)}"


def basis(src: Source) -> str:
    """Preset, seeds, head counts and step cutoffs behind a number, beside the paper's (protocol E2–E7), and how many
    of its runs futility stopping ended (:func:`rgr.experiments.futility.futile_stops`), a rule the protocol lacks."""
    r = src.runs
    text = f"{src.preset}: {seeds_per_point(r)} seeds (paper {rep.PAPER_SEEDS.get(src.name, '?')})"
    if src.name != "gpt2" and len(r):
        text += (
            f", h ≤ {int(r['h'].max())} (paper ≤ {rep.PAPER_MAX_HEADS if src.name not in ('value', 'gpt2') else 16})"
        )
        text += f", cutoff {cutoffs(r)} steps" + futility_words(r)
    return text


def futility_words(runs: pd.DataFrame) -> str:
    """How many of ``runs`` futility stopping ended (:func:`rgr.experiments.futility.futile_stops`), a rule the
    protocol lacks, as "; n of N runs stopped by futility stopping (...)" ("" when none)."""
    stops = futile_stops(runs)
    if not stops.stopped:
        return ""
    return (f"; {stops.stopped:,} of {stops.runs:,} runs stopped by futility stopping (not in the protocol; "
            f"{stops.false} of them where a sibling seed reached the target)")


def untestable(key: str, why: str, b: str, cause: str = "no_data") -> ClaimRow:
    """The row of a claim these data cannot read: ``why`` in words, ``cause`` one of the causes of
    :func:`rgr.results.replication.verdicts.cause_of`."""
    return ClaimRow(key, "—", "—", b, Verdict("not testable", why, cause=cause))


def fmt_iv(lo: float, hi: float, nd: int = 2) -> str:
    """An interval as "[lo, hi]" to ``nd`` decimals, "—" when either end is missing."""
    return "—" if not (math.isfinite(lo) and math.isfinite(hi)) else f"[{lo:.{nd}f}, {hi:.{nd}f}]"


def reached(draws: Draws) -> Draws:
    """The draws of the cells whose D_K* the book reached."""
    return draws.subset(draws.cells["D_K_star"].notna().to_numpy())


def _fit_noise(draws: Draws, x: str, on: str, intercept: bool, what: str, factor: float = 1.0) -> Noise:
    """:class:`~rgr.results.replication.seed_bootstrap.Noise` of a fit's ``what`` ("slope", "intercept", "r2"): column
    ``x`` of the
    cells (times ``factor``, a log base) against D_K* (``on="dk"``) or h* (``on="h"``)."""
    xs = draws.cells[x].to_numpy(float) * factor
    k = _FIT[what]
    return noise(draws, lambda dk, h: fit_stats(xs, dk if on == "dk" else h, intercept)[k])


def _cells_iv(draws: Draws, x: str, on: str, intercept: bool, what: str, factor: float = 1.0) -> tuple[float, float]:
    """The 95% bootstrap interval over cells of a fitted constant (how it depends on the cells chosen)."""
    y = draws.cells["D_K_star" if on == "dk" else "h_star"].astype(float)
    return fit_interval(draws.cells[x].to_numpy(float) * factor, y, intercept=intercept)[what]


def reading(name: str, n: Noise, paper: float, key: str = "") -> Reading:
    """A :class:`Reading` of ``n`` against ``paper``; with the claim ``key``, marked where the paper's rounding window
    straddles an end of the interval (:func:`place`)."""
    ok = math.isfinite(n.lo) and math.isfinite(n.hi)
    edge = ok and bool(key) and place(paper_window(key), n.lo, n.hi) == EDGE
    return Reading(name, n.value, n.lo, n.hi, n.holds(paper) if ok else None, edge)


def fit_row(key: str, d: Draws, spec: tuple[str, str, bool, str, float], b: str, others: list[tuple[str, Draws, float]],
            arithmetic: str = "", caveat: str = "", paper_reproduced: bool | None = None,
            base_ruled_out: bool = False, extra: tuple[Reading, ...] = ()) -> ClaimRow:
    """One fitted constant, ``spec`` = (x column, "dk" or "h", intercept, what, factor of x): verdict on its noise
    interval; ``others`` (name, draws, factor) shown beside as :class:`Reading`; ``arithmetic`` (what Table 1 allows)
    appended; ``extra``: readings computed otherwise, shown after them; the bootstrap over cells in ``cells``.
    ``paper_reproduced`` False (no head assignment of the paper's
    Table 1 gives its fit) makes that the cause of a deviation."""
    x, on, intercept, what, factor = spec
    paper = rep.claim(key).value
    n = _fit_noise(d, x, on, intercept, what, factor)
    if not math.isfinite(n.value):
        return untestable(key, f"the fit's {what} is undefined on these {len(d.cells)} cells (all equal)", b)
    v = noise_verdict(paper, n.value, n.lo, n.hi, n.lo99, n.hi99)
    readings = tuple(reading(name, _fit_noise(od, x, on, intercept, what, f), paper, key) for name, od,
                     f in others if len(od.cells) >= 3) + tuple(extra)
    said = v.detail + f" (interval from: {n.parts()})" + "".join(f"; {r.words(paper)}" for r in readings)
    said += (f". {caveat}" if caveat and v.status == "deviates" else "") + (f". {arithmetic}" if arithmetic else "")
    cause = "paper_table1" if v.status == "deviates" and paper_reproduced is False else v.cause
    c_lo, c_hi = _cells_iv(d, x, on, intercept, what, factor)
    return ClaimRow(key=key, book=f"{n.value:.3g} (n = {len(d.cells)})", interval=n.words(), basis=b,
                    verdict=Verdict(v.status, said, v.near_miss, cause), value=n.value, lo=n.lo, hi=n.hi,
                    cells=fmt_iv(c_lo, c_hi), readings=readings, cells_lo=c_lo, cells_hi=c_hi,
                    base_ruled_out=base_ruled_out)


LONG = "value_long"


def deciding_runs(long: Source | None, d_model: int = 32) -> pd.DataFrame | None:
    """``long``'s rows at ``d_model`` when its table is complete and has that width; None otherwise (the verdict
    then reads ``value`` as before)."""
    if long is None or (preset_completeness(LONG, long.preset, done=long.runs) or 0.0) < 1.0:
        return None
    rows = long.runs[long.runs.d_model == d_model]
    return rows.reset_index(drop=True) if len(rows) else None


def long_basis(long: Source, rows: pd.DataFrame) -> str:
    """What decided the row, for its basis: table, preset, seeds, heads, budgets and the cutoff, named as a
    deviation."""
    dks = f"D_K {int(rows.D_K.min())}–{int(rows.D_K.max())}"
    return (f"{LONG} {basis(Source('value', long.preset, rows))}, {dks}, {len(rows)} runs at d_model = "
            f"{int(rows.d_model.iloc[0])} (the protocol's cutoff is 20k: a longer one, declared before the run, to "
            "settle this comparison; data/README.md)")


def long_source(requested: str = "auto", root: Path | None = None) -> Source:
    """``value_long``'s rows at the preset ``requested`` resolves to; no rows when data/ has none (no smoke run)."""
    preset = resolve_preset([LONG], requested, root)
    return Source(LONG, preset, load_if_present(LONG, preset, root))


COMPRESSIVE_PRESET = "compressive"


def paper_dk_at(D_K_paper: float, m: int, d_model: int) -> float:
    """The budget of a task (m, d_model) at the x of the paper's E7 budget ``D_K_paper`` (m = 6144, d_model = 768)."""
    x = law_x(1, D_K_paper, rep.GPT2_D_MODEL, rep.GPT2_M)
    return x * m * math.log(m) / d_model


def gpt2_source(loaded: Source, requested: str = "auto", root: Path | None = None) -> Source:
    """The rows the GPT-2 verdicts read: ``loaded`` unless the chapter asked for ``auto``, the paper preset is
    incomplete and the compressive preset complete (the book preset is m / d_model = 0.33, where the capacity
    argument says nothing; the chapter's own ``auto`` reads the paper preset once complete; rows that cannot test the
    claims say why)."""
    if requested != "auto" or loaded.preset == "paper":
        return loaded
    if (preset_completeness("gpt2", COMPRESSIVE_PRESET, root) or 0.0) < 1.0:
        return loaded
    try:
        return Source("gpt2", COMPRESSIVE_PRESET, load("gpt2", COMPRESSIVE_PRESET, root))
    except TableError:
        return loaded
