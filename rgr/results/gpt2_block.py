"""Findings of the chapter *GPT-2 block* (book/gpt2_block.ipynb; protocol E7).

:func:`gpt2_finding` (and :func:`compressive_finding`, for the compressive preset) read one E7 table: the best
head count per budget (and the head counts tied with it, paired over seeds), whether accuracy rises or falls with
each step of D_K (paired over seeds), how many runs were still improving at the step cutoff, how
far seeds disagree, and whether the task is compressive at all (m > d_model: the capacity argument says nothing
about a table with m <= d_model).
:func:`embedding_label` says where the frozen embeddings came from, loudly when they are the stand-in;
:func:`latest_lease_bench` what the last GPU lease's bench projected for a whole preset.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..gpt2.experiment import STAND_IN_SOURCE, PresetCost
from .findings import listed
from .stats import by_seed, paired_difference, summarize

COMPRESSIVE = 4  # m / d_model from which the book calls an E7 table compressive (the paper's is 6144 / 768 = 8)


def is_stand_in(sources: pd.Series | list[str]) -> bool:
    """True when any row used the seeded stand-in table instead of GPT-2's embeddings."""
    return any(s == STAND_IN_SOURCE or s.startswith("stand-in") for s in map(str, sources))


def embedding_label(sources: pd.Series | list[str]) -> str:
    """A plain statement of where the embeddings came from, loud when they are a stand-in."""
    if is_stand_in(sources):
        return "STAND-IN embeddings, not GPT-2 (seeded random vectors)"
    return "frozen embeddings: " + ", ".join(sorted(set(map(str, sources))))


@dataclass(frozen=True)
class _GPT2Reading:
    """What one E7 table shows (see :func:`_gpt2_reading`)."""

    m: int
    d_model: int
    n_budgets: int
    multi_head_best: int  # budgets where the best mean accuracy has h > 1
    best_h: tuple[int, ...]  # per budget, ascending D_K
    n_heads: int
    frac_best_last: float  # share of runs whose best validation check is their last
    n_settings: int  # (D_K, h) settings
    n_split: int  # settings whose seeds differ by more than ``split`` in accuracy
    tied: tuple[tuple[int, ...], ...]  # per budget, the head counts tied with best_h (paired 95% interval holds 0)
    n_rising: int  # head counts whose accuracy rises at every step of D_K (paired 95% interval above 0)
    falls: tuple[str, ...]  # steps where accuracy falls (paired 95% interval below 0): "h = 4 at D_K 256 → 512"
    dips: tuple[str, ...]  # the other steps where the mean falls (no paired fall); "(a seed collapsed)" marked

    @property
    def lam(self) -> float:
        """m / d_model: above 1 the key-query channel must compress (the capacity argument's regime)."""
        return self.m / self.d_model

    @property
    def compressive(self) -> bool:
        return self.m > self.d_model


def _gpt2_reading(runs: pd.DataFrame, split: float = 0.3) -> _GPT2Reading:
    """Word an E7 table (rows of one preset: one m and d_model); ``split`` is the seed-spread that counts."""
    if runs.empty:
        raise ValueError("runs has no rows")
    if runs["m"].nunique() != 1 or runs["d_model"].nunique() != 1:
        raise ValueError("runs must hold one m and one d_model (one preset)")
    s = summarize(runs, ["h", "D_K"], "test_acc")
    best = s.loc[s.groupby("D_K")["mean"].idxmax()].sort_values("D_K")
    spread = runs.groupby(["D_K", "h"])["test_acc"].agg(lambda a: a.max() - a.min())
    tied, (n_rising, falls, dips) = _ties(runs, best), _steps(runs, s)
    return _GPT2Reading(m=int(runs["m"].iloc[0]), d_model=int(runs["d_model"].iloc[0]), n_budgets=len(best),
                       multi_head_best=int((best.h > 1).sum()), best_h=tuple(int(h) for h in best.h),
                       n_heads=int(s["h"].nunique()),
                       frac_best_last=float((runs.best_step == runs.steps_done).mean()), n_settings=len(spread),
                       n_split=int((spread > split).sum()), tied=tied, n_rising=n_rising, falls=falls, dips=dips)


def _ties(runs: pd.DataFrame, best: pd.DataFrame) -> tuple[tuple[int, ...], ...]:
    """Per budget of ``best`` (its best-mean h per D_K), the other head counts whose paired difference from it over
    seeds has a 95% t-interval that holds 0: the means rank them, the seeds do not."""
    out = []
    for dk, hb in zip(best["D_K"], best["h"]):
        top = by_seed(runs, "test_acc", int(hb), int(dk))
        out.append(tuple(int(h) for h in sorted(runs.loc[runs.D_K == dk, "h"].unique()) if h != hb
                         and paired_difference(top, by_seed(runs, "test_acc", int(h), int(dk))).side() == "tied"))
    return tuple(out)


def _steps(runs: pd.DataFrame, s: pd.DataFrame) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """Each head count's steps up the D_K ladder, paired over seeds: how many head counts rise at every step (95%
    interval above 0), the steps that fall (interval below 0), and the other steps where the mean falls (the paired
    interval holds 0), marked where a seed of either budget collapsed (test accuracy below :data:`_COLLAPSED`)."""
    n_rising, falls, dips = 0, [], []
    for h, g in s.groupby("h"):
        dks = sorted(int(d) for d in g["D_K"])
        mean = g.set_index("D_K")["mean"]
        sides = []
        for a, b in zip(dks, dks[1:]):
            lo, hi = by_seed(runs, "test_acc", int(h), a), by_seed(runs, "test_acc", int(h), b)
            sides.append(paired_difference(hi, lo).side())
            step = f"h = {int(h)} at D_K {a} → {b}"
            if sides[-1] == "a lower":
                falls.append(step)
            elif mean[b] < mean[a]:
                gone = bool((pd.concat([lo, hi]) < _COLLAPSED).any())
                dips.append(step + (" (a seed collapsed)" if gone else ""))
        n_rising += int(bool(sides) and all(side == "b lower" for side in sides))
    return n_rising, tuple(falls), tuple(dips)


def _best_words(r: _GPT2Reading) -> str:
    """The best-mean h per budget, ascending D_K, each with the head counts tied with it: "2; 2 (h = 1 tied); 8"."""
    return "; ".join(f"{b} (h = {', '.join(map(str, t))} tied)" if t else str(b) for b, t in zip(r.best_h, r.tied))


@dataclass(frozen=True)
class _GPT2Finding:
    """What the chapter's prose pastes, by field name (see :func:`gpt2_finding`)."""

    m: int
    d_model: int
    lam: float  # m / d_model
    regime: str  # "above" or "at or below" (1)
    multi_head_best: int
    n_budgets: int
    best_h: str  # per budget, ascending D_K, with the head counts tied with it (:func:`_best_words`)
    n_rising: int  # head counts whose accuracy rises at every step of D_K, paired over seeds
    n_heads: int
    pct_best_last: float  # percent of runs whose best validation check is their last
    split: float
    n_split: int
    n_settings: int
    embeddings: str  # :func:`embedding_label`
    wall_min: float  # the table's wall time in minutes
    n_runs: int
    paper_eflop: float  # the paper preset's matmul FLOPs / 1e18 (:func:`rgr.gpt2.experiment.preset_cost`)
    paper_done: int = 0  # runs of the paper preset in the table (trained on a GPU, in leases)
    paper_total: int = 0  # runs the paper preset plans
    paper_gpu_min: float = float("nan")  # the whole paper preset in minutes of one process on the benched GPU
    paper_gpu: str = ""  # that GPU
    # the lowest seed of each split setting: how many collapsed (test accuracy below _COLLAPSED), and the range of
    # test accuracy and final training loss of the others (NaN when there are none)
    n_split_collapsed: int = 0
    low_acc_lo: float = float("nan")
    low_acc_hi: float = float("nan")
    low_loss_lo: float = float("nan")
    low_loss_hi: float = float("nan")
    falls: str = "none"  # steps where accuracy falls, paired over seeds (:func:`_steps`)
    dips: str = "none"  # the other steps where the mean falls


def _or_none(items) -> str:
    """``items`` (steps of :func:`_steps`, collapsed runs) as prose lists them; "none" without any."""
    return listed(list(items)) if len(items) else "none"


def _lowest_of_split(runs: pd.DataFrame, split: float) -> dict:
    """The lowest seed of each (D_K, h) setting whose seeds differ by more than ``split``: collapsed or stalled."""
    spread = runs.groupby(["D_K", "h"])["test_acc"].transform(lambda a: a.max() - a.min())
    low = runs[spread > split].sort_values("test_acc").groupby(["D_K", "h"]).head(1)
    stalled = low[low["test_acc"] >= _COLLAPSED]
    nan = float("nan")
    return dict(n_split_collapsed=int((low["test_acc"] < _COLLAPSED).sum()),
                low_acc_lo=float(stalled["test_acc"].min()) if len(stalled) else nan,
                low_acc_hi=float(stalled["test_acc"].max()) if len(stalled) else nan,
                low_loss_lo=float(stalled["final_train_loss"].min()) if len(stalled) else nan,
                low_loss_hi=float(stalled["final_train_loss"].max()) if len(stalled) else nan)


def gpt2_finding(runs: pd.DataFrame, paper: PresetCost, split: float = 0.3, paper_done: int = 0,
                 bench: LeaseBench | None = None) -> _GPT2Finding:
    """The chapter's reading of an E7 table (:func:`_gpt2_reading`) as its prose pastes it; ``paper``: the paper
    preset's cost; ``paper_done``: its runs in the table; ``bench``: the last GPU lease's bench
    (:func:`latest_lease_bench`), or None."""
    r = _gpt2_reading(runs, split=split)
    return _GPT2Finding(m=r.m, d_model=r.d_model, lam=r.lam,
                       regime="above" if r.compressive else "at or below", multi_head_best=r.multi_head_best,
                       n_budgets=r.n_budgets, best_h=_best_words(r), n_rising=r.n_rising,
                       n_heads=r.n_heads, pct_best_last=100 * r.frac_best_last, split=split, n_split=r.n_split,
                       n_settings=r.n_settings, embeddings=embedding_label(runs["embedding_source"]),
                       wall_min=float(runs.wall_time_s.sum() / 60), n_runs=len(runs),
                       paper_eflop=paper.flops / 1e18, paper_done=paper_done,
                       paper_total=paper.runs, paper_gpu_min=float("nan") if bench is None else bench.minutes,
                       paper_gpu="" if bench is None else bench.device, falls=_or_none(r.falls),
                       dips=_or_none(r.dips), **_lowest_of_split(runs, split))


_COLLAPSED = 0.05  # a run whose test accuracy stays below this predicts (almost) nothing: its seed collapsed


@dataclass(frozen=True)
class _CompressiveFinding:
    """What the chapter says of the compressive preset (m / d_model = 8) so far: the share of its planned runs in
    the table, its size, the budgets trained, the best head count per budget (with those tied with it, paired over
    seeds), how often h > 1 is best, how many head counts rise at every step of D_K and which steps fall (paired
    over seeds), the runs still improving at their last check, where in its steps
    the median run that did not collapse had its best check (percent), seed splits, and one head's collapsed seeds
    (test accuracy below :data:`_COLLAPSED`). "—" and zeros without rows."""

    pct_done: float
    n_runs: int
    m: int
    d_model: int
    lam: float
    budgets: str
    best_h: str
    multi_head_best: int
    n_budgets: int
    n_rising: int
    n_heads: int
    pct_best_last: float
    pct_median_best: float
    n_split: int
    n_settings: int
    one_head_collapsed: int
    one_head_runs: int
    n_seeds: int = 0
    h_max: int = 0  # the largest head count trained
    falling_budgets: str = "—"  # budgets where, on every seed, accuracy falls with each doubling of h from 2 to h_max
    h1_over_hmax: int = 0  # seeds where one head beats h_max heads at the smallest budget
    acc_h1_small: float = math.nan  # mean accuracy of one head, and of h_max heads, at the smallest budget
    acc_hmax_small: float = math.nan
    multi_head_collapsed: str = "none"  # the runs with h > 1 that collapsed: "h = 2 at D_K = 384 (seed 0)"
    one_head_collapsed_at: str = "none"  # the one-head runs that collapsed: "D_K = 48 (seed 2)"
    falls: str = "none"  # steps where accuracy falls, paired over seeds (:func:`_steps`)
    dips: str = "none"  # the other steps where the mean falls


def _falling(runs: pd.DataFrame) -> tuple[list[int], int]:
    """The budgets where every seed's accuracy falls with each doubling of h from 2 to the largest, and h_max."""
    heads = sorted(int(h) for h in runs["h"].unique() if h >= 2)
    acc = runs.pivot_table(index=["D_K", "seed"], columns="h", values="test_acc")
    out = []
    for dk, g in acc.groupby(level="D_K"):
        if len(heads) >= 2 and all((g[a] > g[b]).all() and g[[a, b]].notna().all().all()
                                   for a, b in zip(heads, heads[1:])):
            out.append(int(dk))
    return out, heads[-1] if heads else 0


def compressive_finding(runs: pd.DataFrame, done: float, split: float = 0.3) -> _CompressiveFinding:
    """:class:`_CompressiveFinding` of the compressive preset's ``runs`` (any share ``done`` of its plan)."""
    if not len(runs):
        return _CompressiveFinding(pct_done=100 * done, n_runs=0, m=0, d_model=0, lam=math.nan, budgets="—", best_h="—",
                                  multi_head_best=0, n_budgets=0, n_rising=0, n_heads=0, pct_best_last=math.nan,
                                  pct_median_best=math.nan, n_split=0, n_settings=0, one_head_collapsed=0,
                                  one_head_runs=0)
    r = _gpt2_reading(runs, split=split)
    one = runs[runs["h"] == 1]
    learned = runs[runs["test_acc"] >= _COLLAPSED]
    at = (learned["best_step"] / learned["steps_done"]).median() if len(learned) else math.nan
    falling, h_max = _falling(runs)
    small = runs[runs["D_K"] == runs["D_K"].min()].pivot_table(index="seed", columns="h", values="test_acc")
    pair = small[[1, h_max]].dropna() if 1 in small and h_max in small else small.iloc[:0]
    gone = runs[(runs["h"] > 1) & (runs["test_acc"] < _COLLAPSED)].sort_values(["h", "D_K", "seed"])
    one_gone = one[one["test_acc"] < _COLLAPSED].sort_values(["D_K", "seed"])
    more = dict(n_seeds=int(runs["seed"].nunique()), h_max=h_max,
                falling_budgets=listed([str(d) for d in falling]) if falling else "no budget",
                h1_over_hmax=int((pair[1] > pair[h_max]).sum()) if len(pair) else 0,
                acc_h1_small=float(pair[1].mean()) if len(pair) else math.nan,
                acc_hmax_small=float(pair[h_max].mean()) if len(pair) else math.nan,
                multi_head_collapsed=_or_none([f"h = {int(g.h)} at D_K = {int(g.D_K)} (seed {int(g.seed)})"
                                               for g in gone.itertuples()]),
                one_head_collapsed_at=_or_none([f"D_K = {int(g.D_K)} (seed {int(g.seed)})"
                                                for g in one_gone.itertuples()]),
                falls=_or_none(r.falls), dips=_or_none(r.dips))
    return _CompressiveFinding(pct_done=100 * done, n_runs=len(runs), m=r.m, d_model=r.d_model, lam=r.lam,
                              budgets=", ".join(str(int(d)) for d in sorted(runs["D_K"].unique())),
                              best_h=_best_words(r), multi_head_best=r.multi_head_best,
                              n_budgets=r.n_budgets, n_rising=r.n_rising, n_heads=r.n_heads,
                              pct_best_last=100 * r.frac_best_last, pct_median_best=100 * at, n_split=r.n_split,
                              n_settings=r.n_settings,
                              one_head_collapsed=len(one_gone), one_head_runs=len(one),
                              **more)


@dataclass(frozen=True)
class LeaseBench:
    """What a GPU lease's log says of the bench (``scripts/gpu_gpt2.sh`` writes it to data/leases/): the device, the
    preset and the projected minutes of one process for the whole preset."""

    path: str
    device: str
    preset: str
    minutes: float


def _read_lease_bench(text: str, path: str = "") -> LeaseBench | None:
    """The bench's projection from a lease log's text (None when the log has none)."""
    head = re.search(r"^E7 (\w+) preset on (.+?) \(", text, flags=re.M)
    proj = re.search(r"^projection: the whole (\w+) preset .*? ([0-9][0-9,.]*) minutes of one process", text,
                     flags=re.M)
    if head is None or proj is None:
        return None
    return LeaseBench(path, head.group(2), proj.group(1), float(proj.group(2).replace(",", "")))


def latest_lease_bench(root) -> LeaseBench | None:
    """The newest lease log under ``root``/leases (by name: they start with their date) that holds a bench. A lease
    that only trained (``SKIP_CHECKS=1``: its log is committed as ``*-sweep.log``) ran no bench and is not read."""
    logs = (p for p in Path(root, "leases").glob("*.log") if not p.name.endswith("-sweep.log"))
    for p in sorted(logs, reverse=True):
        found = _read_lease_bench(p.read_text(errors="replace"), f"{Path(root).name}/leases/{p.name}")
        if found is not None:
            return found
    return None
