"""Dana et al.'s two contrary conclusions, measured under both head parameterisations (chapter *the law beside
other capacity results*; table ``aot``, :mod:`rgr.experiments.peers.aot_sweep`).

Each conclusion is a difference of mean accuracy between two configurations at the same seeds: the difference
per seed, its mean and the t-interval of that mean (paired over seeds), and whether it keeps its sign.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..stats import summarize, t_interval
from .sweep import cpu_minutes

__all__ = ["accuracy_table", "param_table", "conclusions", "verdicts", "aot_finding"]

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
    seeds = sorted(set(xa.index) & set(xb.index))
    if not seeds:
        raise ValueError(f"runs: no seed has both {a} and {b}")
    diff = (xa.loc[seeds] - xb.loc[seeds]).to_numpy()
    mean, lo, hi = t_interval(diff)
    return _Difference(label, tuple(int(s) for s in seeds), mean, lo, hi, float(xa.loc[seeds].mean()),
                      float(xb.loc[seeds].mean()))


def conclusions(runs: pd.DataFrame) -> dict[str, _Difference]:
    """The four differences the chapter reads (keys: beyond_code, beyond_paper, split_code, split_paper)."""
    d_h, H = 10, 20
    wide, narrow = dict(d=10, d_h=10, H=4), dict(d=10, d_h=4, H=10)
    return {
        "beyond_code": _difference(runs, "code: d = 15 minus d = 10", dict(param="code", d=15, d_h=d_h, H=H),
                                  dict(param="code", d=10, d_h=d_h, H=H)),
        "beyond_paper": _difference(runs, "d = 15: paper minus code", dict(param="paper", d=15, d_h=d_h, H=H),
                                   dict(param="code", d=15, d_h=d_h, H=H)),
        "split_code": _difference(runs, "code: (H, d_h) = (4, 10) minus (10, 4)", dict(param="code", **wide),
                                 dict(param="code", **narrow)),
        "split_paper": _difference(runs, "paper: (H, d_h) = (4, 10) minus (10, 4)", dict(param="code", **wide),
                                  dict(param="paper", **narrow)),
    }


def verdicts(found: dict[str, _Difference]) -> dict[str, str]:
    """One sentence-part per conclusion, from the signs of the paired differences (95% intervals).

    ``beyond``: "a d_model beyond d_h does not help"; ``split``: "at a fixed H d_h, wider heads do better".
    """
    bc, bp, sc, sp = (found[k].sign for k in ("beyond_code", "beyond_paper", "split_code", "split_paper"))
    if bc != "+" and bp == "+":
        beyond = "holds for the heads of their code, and not for heads with their own maps of the full embedding"
    elif bc != "+" and bp != "+":
        beyond = "holds under both parameterisations at these seeds"
    else:
        beyond = "does not hold even for the heads of their code at these seeds"
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
