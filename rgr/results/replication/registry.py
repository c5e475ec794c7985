"""Every claim of the verdict table (chapter *Does it replicate?*) beside the function that reads it.

:data:`READERS` maps a claim key of :data:`rgr.results.replication.reported.CLAIMS` to the reader whose rows
carry that key: from a verdict row to its code is ``READERS[key]``, and :func:`claims` lists each claim's paper
value beside its reader. :func:`rgr.results.replication.table.evaluate` calls these readers (through the Sec. 6.1
group :func:`~rgr.results.replication.sec61.sec61_rows` and the Fig. 4 / App. A.3 readers); a test runs it and
checks that each row comes from the reader named here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import extensions as ext
from . import fig4, sec61
from . import reported as rep

__all__ = ["Claim", "READERS", "claims", "reader_of"]

READERS: dict[str, Callable] = {
    # Sec. 6.1 / App. A.2: max-over-heads on permutation graphs (the base grid)
    "law_slope_all": sec61.law_rows,
    "law_r2_all": sec61.law_rows,
    "law_slope_pre": sec61.law_rows,
    "law_r2_pre": sec61.law_rows,
    "excluded_above": sec61.excluded_above,
    "heads_slope": sec61.heads_rows,
    "heads_intercept": sec61.heads_rows,
    "heads_r2": sec61.heads_rows,
    "dk_range": sec61.dk_rows,
    "dk_median": sec61.dk_rows,
    "table1": sec61.dk_rows,
    "single_head_never": sec61.single_head_never,
    "fig1_one_head_worse": sec61.fig1_one_head_worse,
    "fig2_more_heads": sec61.fig2_more_heads,
    # Fig. 4: the lambda = 8 diagonal
    "diag_growth": fig4.growth_rows,
    "diag_first_two_above": fig4.growth_rows,
    "diag_heads": fig4.diag_heads,
    # App. A.3: r-regular graphs
    "regular_slope": fig4.regular_rows,
    "regular_plateaus": fig4.regular_plateaus,
    "regular_heads": fig4.regular_heads,
    "regular_r16_bound": fig4.regular_rows,
    "regular_lower_form": fig4.regular_lower_form,
    # the extensions: softmax (E4), value channel (E6), GPT-2 block (E7)
    "softmax_advantage": ext.softmax_rows,
    "softmax_shift": ext.softmax_shift,
    "value_d16": ext.value_rows,
    "value_d32_small": ext.value_d32_small,
    "value_d32_best": ext.value_d32_best,
    "gpt2_multi": ext.gpt2_rows,
    "gpt2_single": ext.gpt2_rows,
    "gpt2_best": ext.gpt2_rows,
}


@dataclass(frozen=True)
class Claim:
    """One row of the verdict table before it is read: what the paper reports and the function that reads it."""

    reported: rep.Reported
    reader: Callable

    @property
    def key(self) -> str:
        return self.reported.key

    @property
    def where(self) -> str:
        """The reader as ``module.function``, e.g. ``sec61.law_rows``."""
        return f"{self.reader.__module__.rsplit('.', 1)[-1]}.{self.reader.__name__}"


def reader_of(key: str) -> Callable:
    """The function whose rows carry the claim ``key`` (a KeyError naming the known keys otherwise)."""
    if key not in READERS:
        raise KeyError(f"no reader for the claim {key!r}; known: {', '.join(READERS)}")
    return READERS[key]


def claims() -> list[Claim]:
    """Every claim of :data:`rgr.results.replication.reported.CLAIMS`, in its order, with its reader."""
    return [Claim(c, reader_of(c.key)) for c in rep.CLAIMS]
