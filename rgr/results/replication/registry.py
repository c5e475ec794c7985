"""Every claim of the verdict table (chapter *Does it replicate?*) beside the reader that reads it, and the dispatch.

A reader takes the verdict table's inputs (:class:`Inputs`) and returns the rows of its claims. :data:`READERS` maps
each claim key of :data:`rgr.results.replication.reported.CLAIMS` to its reader, in the claims' order (beside each,
the function of :mod:`~rgr.results.replication.sec61`, :mod:`~rgr.results.replication.fig4` or
:mod:`~rgr.results.replication.extensions` that makes that row); :func:`read` walks it, each reader once, and refuses
a row its reader does not own. :func:`rgr.results.replication.table.evaluate` builds the inputs and calls
:func:`read`; :func:`claims` lists each claim's paper value beside its reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from . import reported as rep
from .extensions import gpt2_rows, softmax_rows, value_rows
from .fig4 import diag_rows, regular_rows
from .paper_arithmetic import ArithmeticCheck
from .rows import ClaimRow, Source
from .sec61 import SharedBase, sec61_rows
from .seed_bootstrap import Draws, seed_draws
from .value_decision import deciding_runs

__all__ = ["Inputs", "Reader", "READERS", "read", "Claim", "claims", "reader_of", "sec61_claims", "diagonal_claims",
           "regular_claims", "softmax_claims", "value_claims", "gpt2_claims"]


@dataclass(frozen=True)
class Inputs:
    """What every reader reads: each experiment's :class:`~rgr.results.replication.rows.Source`, the comparisons' groups
    read at one preset (:data:`rgr.results.replication.table.JOINT`), the draws of every configuration tested and what
    they are (:func:`rgr.results.replication.table.every_configuration`), the Table 1 arithmetic, and the base
    grid's seed draws when the caller has them (computed here otherwise; the longer-budget reading reuses them)."""

    sources: dict[str, Source]
    groups: dict[str, dict[str, Source]]
    every: tuple[Draws | None, str]
    checks: tuple[ArithmeticCheck, ...]
    base_draws: Draws | None = None


Reader = Callable[[Inputs], list[ClaimRow]]


def _at(rows: list[ClaimRow], preset: str) -> list[ClaimRow]:
    return [replace(r, preset=preset) for r in rows]


def sec61_claims(ins: Inputs) -> list[ClaimRow]:
    """Sec. 6.1 / App. A.2 on the base grid (none without base runs: :func:`~.table.complete_rows` marks them)."""
    base = ins.sources["base"]
    if not len(base.runs):
        return []
    every, said = ins.every
    draws = ins.base_draws if ins.base_draws is not None else seed_draws(base.runs)
    return _at(sec61_rows(SharedBase(base, draws, every, said, list(ins.checks))), base.preset)


def diagonal_claims(ins: Inputs) -> list[ClaimRow]:
    """Fig. 4: the lambda = 8 diagonal, base and lambda8 read together."""
    base, lam = ins.groups["diagonal"]["base"], ins.groups["diagonal"]["lambda8"]
    return _at(diag_rows(base, lam), "/".join(sorted({base.preset, lam.preset})))


def regular_claims(ins: Inputs) -> list[ClaimRow]:
    """App. A.3: r-regular graphs."""
    return _at(regular_rows(ins.sources["regular"]), ins.sources["regular"].preset)


def softmax_claims(ins: Inputs) -> list[ClaimRow]:
    """E4 softmax, with the softmax chapter's group (softmax, linear, base at one preset)."""
    soft, shift = ins.sources["softmax"], ins.groups["shift"]
    read_on = shift.get("softmax", soft)
    return _at(softmax_rows(soft, shift), read_on.preset if len(read_on.runs) else soft.preset)


def value_claims(ins: Inputs) -> list[ClaimRow]:
    """E6 value channel; value_d32_best on the decision run's preset when that run decides it."""
    val, long = ins.sources["value"], ins.sources.get("value_long")
    decided = {"value_d32_best": long.preset} if deciding_runs(long, 32) is not None else {}
    return [replace(r, preset=decided.get(r.key, val.preset)) for r in value_rows(val, long)]


def gpt2_claims(ins: Inputs) -> list[ClaimRow]:
    """E7, the GPT-2 block."""
    return _at(gpt2_rows(ins.sources["gpt2"]), ins.sources["gpt2"].preset)


READERS: dict[str, Reader] = {  # claim key -> its reader (after the #: the function that makes the row)
    # Sec. 6.1 / App. A.2: max-over-heads on permutation graphs (the base grid)
    "law_slope_all": sec61_claims,  # sec61.law_rows
    "law_r2_all": sec61_claims,  # sec61.law_rows
    "law_slope_pre": sec61_claims,  # sec61.law_rows
    "law_r2_pre": sec61_claims,  # sec61.law_rows
    "excluded_above": sec61_claims,  # sec61.excluded_above
    "heads_slope": sec61_claims,  # sec61.heads_rows
    "heads_intercept": sec61_claims,  # sec61.heads_rows
    "heads_r2": sec61_claims,  # sec61.heads_rows
    "dk_range": sec61_claims,  # sec61.dk_rows
    "dk_median": sec61_claims,  # sec61.dk_rows
    "table1": sec61_claims,  # sec61.dk_rows
    "single_head_never": sec61_claims,  # sec61.single_head_never
    "fig1_one_head_worse": sec61_claims,  # sec61.fig1_one_head_worse
    "fig2_more_heads": sec61_claims,  # sec61.fig2_more_heads
    # Fig. 4: the lambda = 8 diagonal
    "diag_growth": diagonal_claims,  # fig4.growth_rows
    "diag_first_two_above": diagonal_claims,  # fig4.growth_rows
    "diag_heads": diagonal_claims,  # fig4.diag_heads
    # App. A.3: r-regular graphs
    "regular_slope": regular_claims,  # fig4.regular_rows
    "regular_plateaus": regular_claims,  # fig4.regular_plateaus
    "regular_heads": regular_claims,  # fig4.regular_heads
    "regular_r16_bound": regular_claims,  # fig4.regular_rows
    "regular_lower_form": regular_claims,  # fig4.regular_lower_form
    # the extensions: softmax (E4), value channel (E6), GPT-2 block (E7)
    "softmax_advantage": softmax_claims,  # extensions.softmax_rows
    "softmax_shift": softmax_claims,  # extensions.softmax_shift
    "value_d16": value_claims,  # extensions.value_rows
    "value_d32_small": value_claims,  # extensions.value_d32_small
    "value_d32_best": value_claims,  # extensions.value_d32_best
    "gpt2_multi": gpt2_claims,  # extensions.gpt2_rows
    "gpt2_single": gpt2_claims,  # extensions.gpt2_rows
    "gpt2_best": gpt2_claims,  # extensions.gpt2_rows
}


@dataclass(frozen=True)
class Claim:
    """One row of the verdict table before it is read: what the paper reports and the function that reads it."""

    reported: rep.Reported
    reader: Reader

    @property
    def key(self) -> str:
        return self.reported.key

    @property
    def where(self) -> str:
        """The reader as ``module.function``, e.g. ``registry.sec61_claims``."""
        return f"{self.reader.__module__.rsplit('.', 1)[-1]}.{self.reader.__name__}"


def reader_of(key: str) -> Reader:
    """The function whose rows carry the claim ``key`` (a KeyError naming the known keys otherwise)."""
    if key not in READERS:
        raise KeyError(f"no reader for the claim {key!r}; known: {', '.join(READERS)}")
    return READERS[key]


def claims() -> list[Claim]:
    """Every claim of :data:`rgr.results.replication.reported.CLAIMS`, in its order, with its reader."""
    return [Claim(c, reader_of(c.key)) for c in rep.CLAIMS]


def read(ins: Inputs) -> list[ClaimRow]:
    """Every reader of :data:`READERS` once, in the claims' order, its rows as it gives them; a ValueError names a row
    whose claim belongs to another reader."""
    rows: list[ClaimRow] = []
    done: set[Reader] = set()
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
