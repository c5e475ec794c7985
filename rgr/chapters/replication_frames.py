"""The frames chapter *Does it replicate?* shows besides the verdict table (display only; the numbers come from
:mod:`rgr.results.replication`).

- :func:`used_frame` — the rows behind every number: per comparison, experiment, preset, runs and seeds;
- :func:`readings_frame` — a reading of every fit row (every configuration tested, the other log base);
- :func:`arithmetic_frame` — the Table 1 arithmetic (:mod:`rgr.results.replication.paper_arithmetic`), one line per fit;
- :func:`longer_frame` — the rows read again with a longer step budget (:mod:`rgr.results.replication.second_readings`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from ..catalog import preset_completeness
from ..results.replication import reported as rep
from ..results.replication.paper_arithmetic import ArithmeticCheck
from ..results.replication.registry import JOINT
from ..results.replication.rows import ClaimRow
from ..results.stats import within

__all__ = ["used_frame", "readings_frame", "arithmetic_frame", "longer_frame"]


def used_frame(loaded: Mapping[str, Mapping[str, object]], smoke: bool = False) -> pd.DataFrame:
    """One line per (comparison, experiment): the preset read, its runs and seeds, and the fraction of its planned
    runs present in data/ (None for smoke data)."""
    rows = []
    for key, g in loaded.items():
        for n, d in g.items():
            rows.append(dict(read_for=key if key in JOINT else "own", experiment=n, preset=d.preset, runs=len(d.runs),
                             seeds=int(d.runs["seed"].nunique()) if len(d.runs) else 0,
                             complete=None if smoke or d.preset == "smoke" else preset_completeness(n, d.preset)))
    return pd.DataFrame(rows)


def readings_frame(rows: list[ClaimRow], name: str) -> pd.DataFrame:
    """The fit rows with a reading whose name starts with ``name``: the claim, the paper's value, the verdict's value
    and interval, the reading's value and interval, and whether the paper's value lies in each."""
    out = []
    for r in rows:
        got = [x for x in r.readings if x.name.startswith(name)]
        if not got:
            continue
        x, paper = got[0], rep.claim(r.key).value
        iv = lambda lo, hi: f"[{lo:.3g}, {hi:.3g}]" if math.isfinite(lo) and math.isfinite(hi) else "—"  # noqa: E731
        out.append(
            dict(key=r.key, claim=rep.claim(r.key).claim, paper=rep.claim(r.key).paper,
                 verdict_reading=f"{r.value:.3g} {iv(r.lo, r.hi)}", paper_inside=within(paper, r.lo, r.hi),
                 reading=f"{x.value:.3g} {iv(x.lo, x.hi)}", reading_inside=x.holds, what=x.name)
        )
    return pd.DataFrame(
        out, columns=["key", "claim", "paper", "verdict_reading", "paper_inside", "reading", "reading_inside", "what"]
    )


def arithmetic_frame(checks: tuple[ArithmeticCheck, ...] | list[ArithmeticCheck]) -> pd.DataFrame:
    """One line per fit, log base and R² kind: the assignments tried, those giving the paper's slope (and intercept),
    those giving its R² too, and the nearest R² where none does."""
    return pd.DataFrame([dict(fit=c.fit, log=c.base, r2=c.r2_kind, cells=c.cells, assignments=c.assignments,
                              slope_matches=c.slope_matches, reproduce=c.matches,
                              nearest_r2=None if c.nearest is None else round(c.nearest[2], 3)) for c in checks])


def longer_frame(rows: list[ClaimRow]) -> pd.DataFrame:
    """The rows read again with a longer step budget (:mod:`rgr.results.replication.second_readings`): the claim, the
    protocol's verdict, the budget, the book's value there, the status that reading would get, and whether it is
    settled."""
    out = [dict(claim=rep.claim(r.key).name, protocol=r.verdict.status, budget=f"{r.longer.budget}x",
                book_there=r.longer.book, status_there=r.longer.status, settled="yes" if r.longer.settled else "no")
           for r in rows if r.longer is not None]
    return pd.DataFrame(out, columns=["claim", "protocol", "budget", "book_there", "status_there", "settled"])
