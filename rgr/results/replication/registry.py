"""The verdict table's claims, each beside the reader that reads it, and the dispatch (chapter *Does it
replicate?*).

- :func:`sources_of` and :data:`GROUPS` — every experiment on its own preset, and each comparison of :data:`JOINT`
  (the diagonal's two tables, softmax against max-over-heads, every configuration tested) at one preset;
- :data:`READERS` — each claim key of :data:`rgr.results.reported.CLAIMS` mapped to its reader (a
  function of :class:`_Inputs`, returning the rows of its claims: one reader per section of the paper), in the
  claims' order; the rows themselves are made in :mod:`~rgr.results.replication.sec61`,
  :mod:`~rgr.results.replication.fig4`, :mod:`rgr.results.denser_graphs` (App. A.3) and
  :mod:`~rgr.results.replication.extensions`;
- :func:`read` walks it, each reader once, and refuses a row its reader does not own; :func:`evaluate` builds the
  inputs, calls :func:`read` and adds the longer budget's second reading.

The frames the chapter only displays live in :mod:`rgr.chapters.verdict_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from ...catalog import load_if_present, preset_completeness
from ...gpt2.experiment import PresetCost, preset_cost
from ...paths import data_dir
from .. import reported as rep
from ..denser_graphs import regular_rows
from ..diagonals import with_cells_of
from ..gpt2_block import LeaseBench, is_stand_in, latest_lease_bench
from ..settled import SETTLED, settled_runs
from ..stats import seeds_per_cell
from .extensions import gpt2_rows, softmax_rows, value_rows
from .fig4 import diag_rows
from .paper_arithmetic import ArithmeticCheck, table1_checks
from .rows import LONG, ClaimRow, Source, cutoffs, deciding_runs, futility_words, gpt2_source, long_source, reached
from .sec61 import SharedBase, sec61_rows
from .second_readings import longer_rows, with_longer
from .seed_bootstrap import Draws, cell_noise, seed_draws
from .verdicts import Verdict, table1


@dataclass(frozen=True)
class _Inputs:
    """What every reader reads: each experiment's :class:`~rgr.results.replication.rows.Source`, the comparisons' groups
    read at one preset (:data:`JOINT`), the draws of every configuration tested and what
    they are (:func:`_every_configuration`), the Table 1 arithmetic, and the base
    grid's seed draws when the caller has them (computed here otherwise; the longer-budget reading reuses them)."""

    sources: dict[str, Source]
    groups: dict[str, dict[str, Source]]
    every: tuple[Draws | None, str]
    checks: tuple[ArithmeticCheck, ...]
    base_draws: Draws | None = None


_Reader = Callable[[_Inputs], list[ClaimRow]]


def _at(rows: list[ClaimRow], preset: str) -> list[ClaimRow]:
    return [replace(r, preset=preset) for r in rows]


def sec61_claims(ins: _Inputs) -> list[ClaimRow]:
    """Sec. 6.1 / App. A.2 on the base grid (none without base runs: :func:`complete_rows` marks them)."""
    base = ins.sources["base"]
    if not len(base.runs):
        return []
    every, said = ins.every
    draws = ins.base_draws if ins.base_draws is not None else seed_draws(base.runs)
    return _at(sec61_rows(SharedBase(base, draws, every, said, list(ins.checks))), base.preset)


def _diagonal_claims(ins: _Inputs) -> list[ClaimRow]:
    """Fig. 4: the lambda = 8 diagonal, base and lambda8 read together."""
    base, lam = ins.groups["diagonal"]["base"], ins.groups["diagonal"]["lambda8"]
    return _at(diag_rows(base, lam), "/".join(sorted({base.preset, lam.preset})))


def _regular_claims(ins: _Inputs) -> list[ClaimRow]:
    """App. A.3: r-regular graphs."""
    return _at(regular_rows(ins.sources["regular"]), ins.sources["regular"].preset)


def _softmax_claims(ins: _Inputs) -> list[ClaimRow]:
    """E4 softmax, with the softmax chapter's group (softmax, linear, base at one preset)."""
    soft, shift = ins.sources["softmax"], ins.groups["shift"]
    read_on = shift.get("softmax", soft)
    return _at(softmax_rows(soft, shift), read_on.preset if len(read_on.runs) else soft.preset)


def _value_claims(ins: _Inputs) -> list[ClaimRow]:
    """E6 value channel; value_d32_best on the decision run's preset when that run decides it."""
    val, long = ins.sources["value"], ins.sources.get("value_long")
    decided = {"value_d32_best": long.preset} if deciding_runs(long, 32) is not None else {}
    return [replace(r, preset=decided.get(r.key, val.preset)) for r in value_rows(val, long)]


def _gpt2_claims(ins: _Inputs) -> list[ClaimRow]:
    """E7, the GPT-2 block."""
    return _at(gpt2_rows(ins.sources["gpt2"]), ins.sources["gpt2"].preset)


_BY_SECTION = dict(zip(rep.SECTIONS, (sec61_claims, _diagonal_claims, _regular_claims, _softmax_claims, _value_claims,
                                     _gpt2_claims)))  # each section of the paper, its reader
READERS: dict[str, _Reader] = {c.key: _BY_SECTION[c.section] for c in rep.CLAIMS}  # claim key -> its reader


def read(ins: _Inputs) -> list[ClaimRow]:
    """Every reader of :data:`READERS` once, in the claims' order, its rows as it gives them; a ValueError names a row
    whose claim belongs to another reader."""
    rows: list[ClaimRow] = []
    done: set[_Reader] = set()
    for reader in READERS.values():
        if reader in done:
            continue
        done.add(reader)
        for r in reader(ins):
            if READERS.get(r.key) is not reader:
                raise ValueError(f"{reader.__name__} gave the row of {r.key!r}, which READERS gives to "
                                 f"{getattr(READERS.get(r.key), '__name__', 'no reader')}")
            rows.append(r)
    return rows


# experiments read together at one preset, per comparison: the diagonal's cells, softmax against max-over-heads,
# and every configuration the book tested with the max-over-heads model on permutation graphs. "shift" is the
# softmax chapter's own group (softmax, linear, base read together), so both softmax rows read exactly the rows that
# chapter shows: one D_K* per cell and model in the book, whichever preset the group resolves to.
JOINT: dict[str, tuple[str, ...]] = {"diagonal": ("base", "lambda8"), "shift": ("softmax", "linear", "base"),
                                     "every": ("base", "lambda8", "lambda32")}


@lru_cache(maxsize=1)
def arithmetic() -> tuple[ArithmeticCheck, ...]:
    """:func:`rgr.results.replication.paper_arithmetic.table1_checks`, computed once (it depends on the paper's numbers
    only)."""
    return tuple(table1_checks())


def _every_configuration(group: dict[str, Source]) -> tuple[Draws | None, str]:
    """Seed draws of every configuration the book tested with max-over-heads on permutation graphs (``group``: base,
    lambda8, lambda32 at one preset; a cell in several tables takes the base grid's runs) and what they are; None and
    the reason when the tables are at different presets or empty."""
    have = {n: s for n, s in group.items() if len(s.runs)}
    if not have:
        return None, "no runs"
    presets = {s.preset for s in have.values()}
    if len(presets) > 1:
        return None, "not read: the tables are at different presets (" + ", ".join(f"{n} {s.preset}" for n,
                                                                                   s in have.items()) + ")"
    base = have.get("base")
    others = [s.runs for n, s in have.items() if n != "base"]
    extra = pd.concat(others, ignore_index=True) if others else None
    runs = base.runs if extra is None else (extra if base is None else with_cells_of(base.runs, extra))
    runs = runs.reset_index(drop=True)
    return seed_draws(runs), f"{presets.pop()}: {', '.join(have)}; cutoff {cutoffs(runs)} steps" + futility_words(runs)


def evaluate(sources: dict[str, Source], joint: dict[str, dict[str, Source]] | None = None,
             checks: tuple[ArithmeticCheck, ...] | None = None) -> list[ClaimRow]:
    """Every claim of :data:`rgr.results.reported.CLAIMS`, once each, in its order.

    ``sources``: base, lambda8, regular, softmax, value, gpt2 (each a :class:`Source`; lambda32, value_long and
    settled optional), each at its own preset; with settled, the rows reading its cells get a second reading with a
    longer budget (:mod:`rgr.results.replication.second_readings`). ``joint``: per comparison of :data:`JOINT`, its
    experiments read at one preset; where missing, the ``sources`` themselves (a comparison across presets is then
    not read). ``checks``: the Table 1 arithmetic
    (computed when None).
    """
    need = {"base", "lambda8", "regular", "softmax", "value", "gpt2"}
    if need - set(sources):
        raise ValueError(f"sources lacks {sorted(need - set(sources))}")
    joint = joint or {}
    groups = {name: joint.get(name) or {n: sources[n] for n in names if n in sources} for name, names in JOINT.items()}
    if not len(sources["base"].runs):  # Sec. 6.1 is not read: nothing of it is computed
        return read(_Inputs(sources, groups, (None, "no runs"), ()))
    draws = seed_draws(sources["base"].runs)  # once: the verdicts and the longer-budget reading share them
    rows = read(_Inputs(sources, groups, _every_configuration(groups["every"]), tuple(checks or arithmetic()), draws))
    settled = sources.get(SETTLED)
    if settled is not None and len(settled.runs):  # the second reading with a longer budget (issue 45)
        rows = with_longer(rows, longer_rows(sources["base"], groups["diagonal"]["lambda8"], settled,
                                             checks or arithmetic(), draws))
    return rows


def complete_rows(rows: list[ClaimRow]) -> list[ClaimRow]:
    """One row per claim of :data:`rgr.results.reported.CLAIMS`, in its order; a claim missing from
    ``rows`` (no data
    at all) is marked not testable. Two rows for one claim, or a row of no claim, are an error."""
    by_key: dict[str, ClaimRow] = {}
    for r in rows:
        rep.claim(r.key)  # a KeyError for a row of no claim
        if r.key in by_key:
            raise ValueError(f"two rows for the claim {r.key!r}: one row per claim")
        by_key[r.key] = r
    return [
        by_key.get(
            c.key, ClaimRow(c.key, "—", "—", "—", Verdict("not testable", "no data for this claim", cause="no_data"))
        )
        for c in rep.CLAIMS
    ]


_OWN = ("base", "lambda8", "regular", "softmax", "value", "gpt2")  # each read on its own preset


GROUPS: dict[str, tuple[str, ...]] = {**{n: (n,) for n in _OWN}, **JOINT}


EXPERIMENTS: tuple[str, ...] = tuple(dict.fromkeys(n for g in GROUPS.values() for n in g))  # every table read


def sources_of(loaded: Mapping[str, Mapping[str, object]],
               root: Path | None = None) -> tuple[dict[str, Source], dict[str, dict[str, Source]]]:
    """From the loaded :data:`GROUPS` (objects with ``name``, ``preset`` and ``runs``, e.g.
    :class:`rgr.chapters.loading.ExperimentData`): the sources each on its own preset, and the joint comparisons.
    With ``base`` loaded, the settled-threshold extension at its preset
    (:func:`rgr.results.settled.settled_runs`);
    with ``value`` loaded, the decision run ``value_long``
    is read from data/ (under ``root``) too, at the preset the chapter asked for and without a smoke fallback
    (:func:`rgr.results.replication.rows.long_source`)."""
    src = lambda d: Source(d.name, d.preset, d.runs)  # noqa: E731
    own = {k: src(g[k]) for k, g in loaded.items() if k not in JOINT}
    joint = {k: {n: src(d) for n, d in g.items()} for k, g in loaded.items() if k in JOINT}
    if "gpt2" in loaded:  # the compressive preset, once complete (rgr.results.replication.rows)
        g = loaded["gpt2"]["gpt2"]
        own["gpt2"] = gpt2_source(own["gpt2"], getattr(g, "requested", "") or g.preset, root)
    if "base" in loaded:  # the settled-threshold extension, at the preset the base grid is read at
        own[SETTLED] = Source(SETTLED, own["base"].preset, settled_runs(own["base"].preset, root))
    if "value" in loaded:  # the decision run, at the preset the chapter asked for (smoke where value fell back to it)
        v = loaded["value"]["value"]
        own[LONG] = long_source("smoke" if v.preset == "smoke" else getattr(v, "requested", "") or v.preset, root)
    return own, joint


def table1_view(base: Source) -> pd.DataFrame:
    """:func:`rgr.results.replication.verdicts.table1` of the base grid's runs, with each cell's 95% noise interval of
    d_k*."""
    if not len(base.runs):
        return table1(pd.DataFrame(columns=["m", "d_model", "r", "D_K_star", "h_star", "d_k_star"]),
                      pd.DataFrame(columns=["m", "d_model", "r", "lo", "hi"]))
    d = reached(seed_draws(base.runs))
    return table1(d.cells, cell_noise(d, "d_k_star"))


_FEW_SEEDS = 3  # at most this many seeds a cell: a seed bootstrap there has few distinct resamples


@dataclass(frozen=True)
class Reduced:
    """One experiment the chapter reads on a preset other than `paper`."""

    name: str
    preset: str
    seeds: int
    h_max: int
    m_max: int
    paper_done: float | None  # the share of the `paper` preset's planned runs in data/ (None: no such rows)


@dataclass(frozen=True)
class FewSeeds:
    """One experiment read on `paper` with at most :data:`_FEW_SEEDS` seeds in some (m, d_model) cells."""

    name: str
    seeds: int  # the fewest seeds of a cell
    where: tuple[int, ...]  # the m of those cells; () when every cell has that few


@dataclass(frozen=True)
class Basis:
    """What the chapter reads on which preset, for its *Where this comparison is limited*: the experiments read on a
    reduced preset (:func:`_basis_of`), those read on `paper` with few seeds somewhere (:func:`_few_seeds_of`), and
    the GPT-2 block's rows (their preset, largest m and d_model, whether a stand-in table) beside its `paper` preset's
    cost (:func:`rgr.gpt2.experiment.preset_cost`), runs done and the last lease's bench (None without one)."""

    reduced: tuple[Reduced, ...]
    few: tuple[FewSeeds, ...]
    gpt2_preset: str
    gpt2_m: int
    gpt2_d_model: int
    gpt2_stand_in: bool
    cost: PresetCost
    paper_done: int = 0
    bench: LeaseBench | None = None


def _basis_of(loaded: Mapping[str, Mapping[str, object]]) -> tuple[Reduced, ...]:
    """Every experiment other than ``gpt2`` that the chapter's loaded groups (objects with ``name``, ``preset`` and
    ``runs``, e.g. :class:`rgr.chapters.loading.ExperimentData`) read on a preset other than `paper`, once, in order:
    its seeds, largest ``h`` and ``m`` as read, and the share of its `paper` preset done
    (:func:`rgr.catalog.preset_completeness`)."""
    out: dict[str, Reduced] = {}
    for group in loaded.values():
        for name, d in group.items():
            if name == "gpt2" or name in out or d.preset == "paper":
                continue
            df = d.runs
            out[name] = Reduced(name, d.preset, int(df["seed"].nunique()), int(df["h"].max()), int(df["m"].max()),
                                preset_completeness(name, "paper"))
    return tuple(out.values())


def _few_seeds_of(loaded: Mapping[str, Mapping[str, object]]) -> tuple[FewSeeds, ...]:
    """Every experiment other than ``gpt2`` that the loaded groups read on `paper` with at most :data:`_FEW_SEEDS`
    seeds in some (m, d_model) cell (the paper's own counts: 3 for softmax, the value channel and the lambda = 8
    diagonal's largest points), once, in order."""
    out: dict[str, FewSeeds] = {}
    for group in loaded.values():
        for name, d in group.items():
            if name == "gpt2" or name in out or d.preset != "paper" or not len(d.runs):
                continue
            per = seeds_per_cell(d.runs)
            if per.min() > _FEW_SEEDS:
                continue
            few = per[per <= _FEW_SEEDS]
            ms = () if len(few) == len(per) else tuple(sorted({int(m) for m in few.index.get_level_values("m")}))
            out[name] = FewSeeds(name, int(per.min()), ms)
    return tuple(out.values())


def chapter_basis(loaded: Mapping[str, Mapping[str, object]], gpt2: Source) -> Basis:
    """:class:`Basis` of the chapter's loaded :data:`GROUPS`: the `paper` sweeps' completeness from data/
    (:func:`rgr.catalog.preset_completeness`), the GPT-2 block's `paper` runs done and last bench, beside ``gpt2``:
    the rows the GPT-2 verdicts read (``sources_of(loaded)[0]["gpt2"]``: the compressive preset once complete,
    :func:`rgr.results.replication.rows.gpt2_source`)."""
    m, d = (int(gpt2.runs["m"].max()), int(gpt2.runs["d_model"].max())) if len(gpt2.runs) else (0, 0)
    return Basis(_basis_of(loaded), _few_seeds_of(loaded), gpt2.preset, m, d,
                 is_stand_in(gpt2.runs["embedding_source"]), preset_cost("paper"),
                 len(load_if_present("gpt2", "paper")), latest_lease_bench(data_dir()))
