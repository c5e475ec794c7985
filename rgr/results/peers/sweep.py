"""Dana et al.'s design measured twice (chapter *the law beside other capacity results*): on rgr's engine (table
``peers``), where its transitions fall on the law's axis, and in their own task and layer re-implemented (table
``aot``), their two contrary conclusions under both head parameterisations.

**On rgr's engine.**

Table ``peers`` (:mod:`rgr.experiments.peers.engine_sweeps`) trains d_k = d_model = d with h swept, at fixed compression
m / d_model and at fixed m. The law puts the transition at a fixed value of x = h d_k d_model / (m ln m); its
precondition is d_model >= c_0 ln m. :func:`transitions` reads, per cell, where the mean test F1 over seeds
crosses a level along x (linear interpolation in log x between the two tested head counts around the
crossing; censored where every tested head is on one side), and :func:`series_drift` says how far that x moves
as d changes along a series: the exponent k of x* ∝ d^k (0 under the law) and the spread max/min.

**Re-implemented** (:mod:`rgr.experiments.peers.reimplemented`). Each conclusion is a difference of mean accuracy
between two configurations at the same seeds: the difference per seed, its mean and the t-interval of that mean
(paired over seeds), and whether it keeps its sign (:func:`conclusions`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...experiments.peers.engine_sweeps import PEERS_FIXED_M, PEERS_FIXED_RATIO
from ...protocol import F1_TARGET, law_x
from ..stats import loglog_slope, paired_t, summarize

_SERIES: dict[str, tuple[tuple[int, int], ...]] = {
    "fixed compression m / d_model = 8": tuple((c.m, c.d_model) for c in PEERS_FIXED_RATIO),
    "fixed m = 128": tuple(sorted({(c.m, c.d_model) for c in PEERS_FIXED_M + PEERS_FIXED_RATIO if c.m == 128},
                                  key=lambda c: c[1])),
}  # the book preset's two series (the paper preset adds cells to both)
LEVELS: tuple[float, ...] = (0.5, F1_TARGET)  # the midpoint of the transition and the protocol's success level


def curve(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean test F1 and its 95% t-interval per (m, d_model, h), with x and d_model / ln m."""
    if not (runs["d_k"] == runs["d_model"]).all():
        raise ValueError("runs must have d_k = d_model in every row (the peers' design)")
    s = summarize(runs, ["m", "d_model", "h"])
    s["x"] = [law_x(int(h), int(d), int(d), int(m)) for m, d, h in zip(s.m, s.d_model, s.h)]
    s["d_over_ln_m"] = s.d_model / np.log(s.m)
    return s


def _crossing(x: np.ndarray, f1: np.ndarray, level: float) -> tuple[float | None, str]:
    """x where ``f1`` (along increasing x) first reaches ``level``, interpolated in log x.

    Returns (x, "") or (None, "below") when the smallest x already reaches it, (None, "above") when none does.
    """
    x, f1 = np.asarray(x, float), np.asarray(f1, float)
    order = np.argsort(x)
    x, f1 = x[order], f1[order]
    hit = np.flatnonzero(f1 >= level)
    if not len(hit):
        return None, "above"
    i = int(hit[0])
    if i == 0:
        return None, "below"
    lo, hi = math.log(x[i - 1]), math.log(x[i])
    t = (level - f1[i - 1]) / (f1[i] - f1[i - 1])
    return float(math.exp(lo + t * (hi - lo))), ""


@dataclass(frozen=True)
class _Transition:
    """One cell's crossing of the levels along x (None: censored, ``censored`` says on which side)."""

    m: int
    d_model: int
    d_over_ln_m: float
    n_seeds: int
    heads: tuple[int, ...]
    x_half: float | None  # mean F1 = 0.5
    x_pass: float | None  # mean F1 = F1_TARGET
    h_pass: int | None  # the smallest tested h whose mean F1 reaches F1_TARGET
    censored_half: str
    censored_pass: str
    # the crossings of the 95% interval's upper and lower ends (optimistic, conservative; None: outside the tested x)
    range_half: tuple[float | None, float | None] = (None, None)
    range_pass: tuple[float | None, float | None] = (None, None)


def transitions(runs: pd.DataFrame) -> list[_Transition]:
    """Per (m, d_model) cell of the head sweep, where the transition falls in x."""
    s = curve(runs)
    out = []
    for (m, d), g in s.groupby(["m", "d_model"], sort=True):
        g = g.sort_values("h")
        half, c_half = _crossing(g.x.to_numpy(), g["mean"].to_numpy(), LEVELS[0])
        ok, c_pass = _crossing(g.x.to_numpy(), g["mean"].to_numpy(), LEVELS[1])
        passing = g[g["mean"] >= F1_TARGET - 1e-12]
        ends = {level: tuple(_crossing(g.x.to_numpy(), g[end].to_numpy(), level)[0] for end in ("hi", "lo"))
                for level in LEVELS}
        out.append(_Transition(m=int(m), d_model=int(d), d_over_ln_m=float(d / math.log(m)), n_seeds=int(g.n.min()),
                              heads=tuple(int(h) for h in g.h), x_half=half, x_pass=ok,
                              h_pass=int(passing.h.min()) if len(passing) else None, censored_half=c_half,
                              censored_pass=c_pass, range_half=ends[LEVELS[0]], range_pass=ends[LEVELS[1]]))
    return out


@dataclass(frozen=True)
class _SeriesDrift:
    """How x* moves along one series of cells (fixed m / d_model, or fixed m) as d_model grows."""

    name: str
    cells: tuple[tuple[int, int], ...]  # (m, d_model) with a located crossing at the level
    level: float
    x_star: tuple[float, ...]
    exponent: float | None  # k in x* ∝ d_model^k (least squares in log-log); 0 under the law
    spread: float | None  # max x* / min x*
    n_censored: int  # cells of the series whose crossing is outside the tested heads
    # per located cell, x* read on the 95% interval's upper and lower ends (None: outside the tested x)
    ranges: tuple[tuple[float | None, float | None], ...] = ()

    @property
    def shared(self) -> str:
        """Whether the cells' :attr:`ranges` hold one common x ("share x from 0.81 to 0.84") or not ("share no x")."""
        low = max((lo if lo is not None else 0.0 for lo, _ in self.ranges), default=0.0)
        high = min((hi if hi is not None else math.inf for _, hi in self.ranges), default=0.0)
        return ("are fewer than two" if len(self.ranges) < 2 else
                f"share x from {low:.2f} to {high:.2f}" if low <= high else "share no x")

    @property
    def k_from(self) -> str:
        """Which cells set k: with three equally spaced in log d_model, the end cells alone (least squares)."""
        d = np.log([c[1] for c in self.cells])
        if len(d) == 3 and math.isclose(d[1] - d[0], d[2] - d[1]):
            return "the two end cells alone (three cells equally spaced in log d, so the middle one does not move it)"
        return f"its {len(d)} cells" if len(d) != 1 else "one cell: no exponent"

    @property
    def range_words(self) -> str:
        """The ranges per cell: "(64, 8): 2.21 to 5.31; (128, 16): below the tested x to 3.06"."""
        end = lambda x, side: f"{x:.2f}" if x is not None else f"{side} the tested x"  # noqa: E731
        return "; ".join(f"({m}, {d}): {end(lo, 'below')} to {end(hi, 'above')}"
                         for (m, d), (lo, hi) in zip(self.cells, self.ranges)) or "none located"


def series_drift(found: list[_Transition], name: str, cells: tuple[tuple[int, int], ...],
                 level: float = LEVELS[0]) -> _SeriesDrift:
    """The drift of x* at ``level`` (one of LEVELS) along the series ``cells`` (in order of d_model)."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level}")
    by = {(t.m, t.d_model): t for t in found}
    missing = [c for c in cells if c not in by]
    if missing:
        raise ValueError(f"cells not in the table: {missing}")
    pick = [(c, by[c].x_half if level == LEVELS[0] else by[c].x_pass) for c in cells]
    kept = [(c, x) for c, x in pick if x is not None]
    xs = tuple(x for _, x in kept)
    d = np.array([c[1] for c, _ in kept], float)
    exponent = loglog_slope(d, xs) if len(kept) >= 2 else None
    ranges = tuple(by[c].range_half if level == LEVELS[0] else by[c].range_pass for c, _ in kept)
    return _SeriesDrift(name=name, cells=tuple(c for c, _ in kept), level=level, x_star=xs, exponent=exponent,
                       spread=max(xs) / min(xs) if len(xs) >= 2 else None, n_censored=len(cells) - len(kept),
                       ranges=ranges)


def transitions_table(found: list[_Transition]) -> pd.DataFrame:
    """The transitions for display: one row per cell."""
    def shown(x: float | None, side: str) -> str:
        return f"{x:.2f}" if x is not None else ("below the tested h" if side == "below" else "above the tested h")
    return pd.DataFrame([{"m": t.m, "d_model": t.d_model, "d_model / ln m": t.d_over_ln_m, "seeds": t.n_seeds,
                          "h tested": f"{t.heads[0]}-{t.heads[-1]} ({len(t.heads)})",
                          "x at F1 = 0.5": shown(t.x_half, t.censored_half),
                          "x at F1 = 0.99": shown(t.x_pass, t.censored_pass),
                          "smallest passing h": t.h_pass} for t in found])


@dataclass(frozen=True)
class _PreconditionReading:
    """Which cells never reach the protocol's F1 at any tested head count, against d_model / ln m.

    A failing cell is *censored* where its head grid stops at an x below ``x_pass_slowest``, the x at which the
    slowest passing cell first reached the protocol's F1 (its smallest passing h): it may pass at larger x, so it
    says nothing about the precondition. The ratio and the x of the failing cells are read on the others."""

    failing: tuple[tuple[int, int], ...]  # (m, d_model) never reaching F1_TARGET, censored or not
    censored: tuple[tuple[int, int], ...]  # those of them whose tested x stops below x_pass_slowest
    failing_ratio_max: float | None  # the largest d_model / ln m among the uncensored failing cells
    passing_ratio_min: float | None  # the smallest d_model / ln m among the cells that do reach it
    x_max_failing: float | None  # the largest x tested in an uncensored failing cell
    x_reach_failing: float | None  # the smallest, over the uncensored failing cells, of the largest x each tested
    x_max_censored: float | None  # the largest x tested in a censored cell
    x_pass_slowest: float | None  # the largest x, over the passing cells, at which one first reaches F1_TARGET
    n_kept_fail: int = 0  # uncensored failing cells, and passing cells; chance: that a perfect separation arises
    n_pass: int = 0  # with every order of d_model / ln m equally likely, 1 / C(n_kept_fail + n_pass, n_kept_fail)
    chance: float | None = None
    d_fail_max: int | None = None  # the largest d_model of the uncensored failing cells, the smallest of the passing
    d_pass_min: int | None = None

    @property
    def separates(self) -> bool:
        """True when every uncensored failing cell has a smaller d_model / ln m than every passing one."""
        return (self.failing_ratio_max is not None and self.passing_ratio_min is not None
                and self.failing_ratio_max < self.passing_ratio_min)


def precondition_reading(found: list[_Transition], runs: pd.DataFrame) -> _PreconditionReading:
    """Where the law's precondition d_model >= c_0 ln m shows: cells that never pass, by d_model / ln m, those
    whose tested x stops short of where the passing cells passed set apart as censored."""
    fail = [t for t in found if t.h_pass is None]
    ok = [t for t in found if t.h_pass is not None]
    c = curve(runs)
    reach = {(t.m, t.d_model): float(c[(c.m == t.m) & (c.d_model == t.d_model)].x.max()) for t in fail}
    slowest = max((law_x(t.h_pass, t.d_model, t.d_model, t.m) for t in ok), default=None)
    short = [t for t in fail if slowest is not None and reach[(t.m, t.d_model)] < slowest]
    kept = [t for t in fail if t not in short]
    return _PreconditionReading(failing=tuple((t.m, t.d_model) for t in fail),
                               censored=tuple((t.m, t.d_model) for t in short),
                               failing_ratio_max=max((t.d_over_ln_m for t in kept), default=None),
                               passing_ratio_min=min((t.d_over_ln_m for t in ok), default=None),
                               x_max_failing=max((reach[(t.m, t.d_model)] for t in kept), default=None),
                               x_reach_failing=min((reach[(t.m, t.d_model)] for t in kept), default=None),
                               x_max_censored=max((reach[(t.m, t.d_model)] for t in short), default=None),
                               x_pass_slowest=slowest, n_kept_fail=len(kept), n_pass=len(ok),
                               chance=1 / math.comb(len(kept) + len(ok), len(kept)) if kept and ok else None,
                               d_fail_max=max((t.d_model for t in kept), default=None),
                               d_pass_min=min((t.d_model for t in ok), default=None))


def cpu_minutes(runs: pd.DataFrame) -> float:
    """Worker-minutes the rows took to train (wall time of each stack shared among its runs; one thread each)."""
    return float(runs["wall_time_s"].sum() / 60)


def series_for(found: list[_Transition]) -> dict[str, tuple[tuple[int, int], ...]]:
    """:data:`_SERIES` restricted to the cells in the table; every cell as one series where none is (smoke)."""
    have = {(t.m, t.d_model) for t in found}
    out = {name: tuple(c for c in cells if c in have) for name, cells in _SERIES.items()}
    out = {name: cells for name, cells in out.items() if cells}
    return out or {"every cell": tuple(sorted(have, key=lambda c: (c[1], c[0])))}


def drifts(found: list[_Transition]) -> dict[tuple[str, float], _SeriesDrift]:
    """:func:`series_drift` of every series of :func:`series_for` at both LEVELS."""
    return {(name, level): series_drift(found, name, cells, level)
            for name, cells in series_for(found).items() for level in LEVELS}


def drift_table(found: list[_Transition]) -> pd.DataFrame:
    """One row per series and level: x* per located cell, its exponent in d_model and spread."""
    rows = []
    for (name, level), dr in drifts(found).items():
        rows.append({"series": name, "F1 level": level,
                     "x* per cell (m, d_model)": "; ".join(f"({m}, {d}): {x:.2f}" for (m, d), x in
                                                           zip(dr.cells, dr.x_star)) or "none located",
                     "x* on the 95% ends (optimistic to conservative)": dr.range_words,
                     "exponent k in x* ∝ d^k": dr.exponent, "max/min x*": dr.spread,
                     "cells censored": dr.n_censored})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _SweepFinding:
    """Of the head sweep: its size and cost, the cells behind each drift, the failing cells, those of them
    censored (:class:`_PreconditionReading`), and how to word them (``separates``: "do" / "do not"; the drift of
    x* at F1 = 0.5 ``direction`` "falls" / "rises", and which of the two factors ``dominates``, "first" /
    "second")."""

    n_runs: int
    n_seeds: int
    cpu: float  # worker-minutes
    half_n_cells: int
    pass_n_cells: int
    n_fail: int
    fail_cells: str  # "(m, d_model), ..." or "none"
    n_censored_fail: int
    censored_cells: str  # the failing cells censored, "(m, d_model), ..." or "none"
    separates: str
    direction: str
    dominates: str
    # the drifts on the 95% interval ends and what sets k (:attr:`_SeriesDrift.shared`, ``range_words``, ``k_from``)
    shared_half: str = "are fewer than two"
    shared_pass: str = "are fewer than two"
    ranges_pass: str = "none located"
    k_from_pass: str = "one cell: no exponent"


def sweep_finding(runs: pd.DataFrame, half: _SeriesDrift, passed: _SeriesDrift,
                  pre: _PreconditionReading) -> _SweepFinding:
    """:class:`_SweepFinding` from the sweep's rows, the drifts of one series at both :data:`LEVELS`
    (``half``, ``passed``) and :func:`precondition_reading`."""
    if half.level != LEVELS[0] or passed.level != LEVELS[1]:
        raise ValueError(f"half and passed must be drifts at the levels {LEVELS}, got {half.level}, {passed.level}")
    falls = (half.exponent or 0) < 0
    return _SweepFinding(n_runs=len(runs), n_seeds=int(runs.seed.nunique()), cpu=cpu_minutes(runs),
                      half_n_cells=len(half.cells), pass_n_cells=len(passed.cells), n_fail=len(pre.failing),
                      fail_cells=", ".join(f"({m}, {d})" for m, d in pre.failing) or "none",
                      n_censored_fail=len(pre.censored),
                      censored_cells=", ".join(f"({m}, {d})" for m, d in pre.censored) or "none",
                      separates="do" if pre.separates else "do not", direction="falls" if falls else "rises",
                      dominates="first" if falls else "second", shared_half=half.shared,
                      shared_pass=passed.shared, ranges_pass=passed.range_words, k_from_pass=passed.k_from)


# ----------------------------------------------------------------------------- their task re-implemented (aot)

_CONFIG = ["question", "param", "d", "d_h", "H"]


def accuracy_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean accuracy and its 95% t-interval over seeds per configuration."""
    return summarize(runs, _CONFIG, metric="accuracy")


def param_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: its trained parameters (the table's ``n_params``), of which the attention maps (query, key,
    value, output, and in their code the shared compress/decompress maps: ``n_params`` less the token
    embedding and unembedding, 2 N d, and the positional embedding, 2 d_in with d_in = d_h in their code when
    d != d_h, else d), and the mean accuracy."""
    if runs.empty:
        raise ValueError("runs: no rows of table aot")
    g = runs.groupby(_CONFIG).agg(N=("N", "first"), n_params=("n_params", "first"), accuracy=("accuracy", "mean"),
                                 seeds=("seed", "count")).reset_index()
    d_in = g.d_h.where((g.param == "code") & (g.d != g.d_h), g.d)
    g["attention_params"] = g.n_params - 2 * g.N * g.d - 2 * d_in
    return g[[*_CONFIG, "n_params", "attention_params", "seeds", "accuracy"]]


@dataclass(frozen=True)
class _Difference:
    """accuracy(a) - accuracy(b), paired over the seeds both have."""

    label: str
    seeds: tuple[int, ...]
    mean: float
    lo: float
    hi: float
    acc_a: float
    acc_b: float

    @property
    def sign(self) -> str:
        """'+' or '-' where the 95% interval excludes 0; '0' where it does not (or one seed)."""
        if self.lo > 0:
            return "+"
        if self.hi < 0:
            return "-"
        return "0"


def _difference(runs: pd.DataFrame, label: str, a: dict, b: dict) -> _Difference:
    """accuracy of configuration ``a`` minus ``b`` (dicts of config columns), paired by seed."""
    def pick(sel: dict) -> pd.Series:
        mask = pd.Series(True, index=runs.index)
        for k, v in sel.items():
            mask &= runs[k] == v
        return runs[mask].set_index("seed")["accuracy"]
    xa, xb = pick(a), pick(b)
    seeds, mean, lo, hi = paired_t(xa, xb, f"{a} and {b}")
    return _Difference(label, tuple(int(s) for s in seeds), mean, lo, hi, float(xa.loc[seeds].mean()),
                      float(xb.loc[seeds].mean()))


def conclusions(runs: pd.DataFrame) -> dict[str, _Difference]:
    """The five differences the chapter reads (keys below). ``beyond_perhead``: d = 15 minus d = 10 with per-head
    maps; at d = d_h = 10 the two parameterisations are one model (no compression, the same maps drawn alike)."""
    d_h, H = 10, 20
    wide, narrow = dict(d=10, d_h=10, H=4), dict(d=10, d_h=4, H=10)
    return {
        "beyond_code": _difference(runs, "code: d = 15 minus d = 10", dict(param="code", d=15, d_h=d_h, H=H),
                                  dict(param="code", d=10, d_h=d_h, H=H)),
        "beyond_perhead": _difference(runs, "per-head maps: d = 15 minus d = 10",
                                     dict(param="paper", d=15, d_h=d_h, H=H), dict(param="code", d=10, d_h=d_h, H=H)),
        "beyond_paper": _difference(runs, "d = 15: paper minus code", dict(param="paper", d=15, d_h=d_h, H=H),
                                   dict(param="code", d=15, d_h=d_h, H=H)),
        "split_code": _difference(runs, "code: (H, d_h) = (4, 10) minus (10, 4)", dict(param="code", **wide),
                                 dict(param="code", **narrow)),
        "split_paper": _difference(runs, "paper: (H, d_h) = (4, 10) minus (10, 4)", dict(param="code", **wide),
                                  dict(param="paper", **narrow)),
    }


def verdicts(found: dict[str, _Difference]) -> dict[str, str]:
    """One sentence-part per conclusion, from the signs of the paired differences (95% intervals).

    ``beyond``: "a d_model beyond d_h does not help" (d = 15 minus d = 10 per parameterisation; an interval holding 0
    is no difference detected, not a confirmation); ``split``: "at a fixed H d_h, wider heads do better"."""
    bc, bh, sc, sp = (found[k].sign for k in ("beyond_code", "beyond_perhead", "split_code", "split_paper"))
    head = {"+": "does not hold even for the heads of their code at these seeds",
            "-": "holds for the heads of their code at these seeds (there d = 15 does worse)",
            "0": "is not contradicted for the heads of their code: no difference is detected at these seeds, and the "
                 "interval leaves room for a gain"}[bc]
    tail = {"+": "; with heads that have their own maps of the full embedding it fails (d = 15 beats d = 10)",
            "0": "; with per-head maps no difference is detected either", "-": "; with per-head maps d = 15 does worse"}
    beyond = head + ("" if bc == "+" else tail[bh])
    where = [name for name, s in (("their code's", sc), ("the per-head-map", sp)) if s == "+"]
    split = (f"holds under {' and '.join(where)} parameterisation{'s' if len(where) > 1 else ''}" if where
             else "is not resolved at these seeds under either parameterisation")
    reversed_ = [name for name, s in (("their code's", sc), ("per-head", sp)) if s == "-"]
    if reversed_:
        split += f"; it reverses with {' and '.join(reversed_)} maps (there the narrower heads do better)"
    return {"beyond": beyond, "split": split}


@dataclass(frozen=True)
class _AotFinding:
    """Of the attention-only re-implementation: seeds behind each paired difference, the two verdicts
    (:func:`verdicts`), its rows and cost ("19 worker-minutes")."""

    beyond_code_n: int
    beyond_paper_n: int
    split_code_n: int
    split_paper_n: int
    verdict_beyond: str
    verdict_split: str
    aot_runs: int
    aot_cpu: str


def aot_finding(runs: pd.DataFrame, found: dict[str, _Difference], said: dict[str, str]) -> _AotFinding:
    """:class:`_AotFinding` from the ``aot`` rows, :func:`conclusions` and :func:`verdicts`."""
    n = {f"{key}_n": len(found[key].seeds) for key in ("beyond_code", "beyond_paper", "split_code", "split_paper")}
    return _AotFinding(**n, verdict_beyond=said["beyond"], verdict_split=said["split"], aot_runs=len(runs),
                    aot_cpu=f"{cpu_minutes(runs):.0f} worker-minutes")
