"""Synthetic tables for the verdict-table tests (tests/results/replication/): runs whose D_K* are known, the
sources ``evaluate`` takes, value's and value_long's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rgr.experiments.registry import get_experiment
from rgr.results.replication.rows import LONG, Source

NO_CHECKS = ()  # the Table 1 arithmetic left out where it is not what a test is about (tests/test_paper_arithmetic.py)


def base_runs(dk_star: dict[tuple[int, int], int], heads=(1, 2, 4), seeds=(0, 1, 2), noise: float = 0.001,
              edge: float | None = None, passing: int = 2) -> pd.DataFrame:
    """Synthetic max-over-heads runs: h = ``passing`` (2) reaches F1 1 at dk_star[cell] and above; others stay low; a
    seed adds ``noise`` times its number. With ``edge``, that h at dk_star has mean F1 0.99 exactly, the seeds spread by
    ``edge`` around it (so the seeds' noise moves D_K* to the next rung, 5/4 of it)."""
    rows = []
    mid = float(np.mean(seeds))
    for (m, d), star in dk_star.items():
        for h in heads:
            for D_K in sorted({star // 2, star, 5 * star // 4, 2 * star} | {8}):
                for s in seeds:
                    f1 = (1.0 if D_K >= star and h == passing else 0.3) + noise * s
                    if edge is not None and D_K == star and h == passing:
                        f1 = 0.99 + edge * (s - mid)
                    rows.append(dict(m=m, d_model=d, r=1, h=h, D_K=D_K, d_k=D_K / h, seed=s, test_f1=min(f1, 1.0),
                                     max_steps=20000))
    return pd.DataFrame(rows)


def sources(base: pd.DataFrame, preset: str = "book") -> dict[str, Source]:
    empty = base.iloc[0:0]
    gp = pd.DataFrame(columns=["m", "d_model", "ell", "h", "D_K", "seed", "test_acc", "embedding_source"])
    return {"base": Source("base", preset, base), "lambda8": Source("lambda8", preset, empty),
            "regular": Source("regular", preset, empty), "softmax": Source("softmax", preset, empty),
            "value": Source("value", preset, empty.assign(test_mse=[])), "gpt2": Source("gpt2", preset, gp)}


LONG_EXP = get_experiment(LONG)


def value_runs(cut_top: bool = True) -> pd.DataFrame:
    """value's rows as in data/: d_model 16 and 32, D_K up to 64; the top rung with h > 1 cut when ``cut_top``."""
    rows = []
    for d in (16, 32):
        for h in (1, 4, 8, 16):
            for D_K in (16, 32, 64):
                for s in range(3):
                    mse = (0.05 if h == 1 else 0.02 / h ** 0.2 / (D_K / 16) ** 0.5) + 0.0001 * s
                    rows.append(dict(m=64, d_model=d, r=1, h=h, D_K=D_K, seed=s, test_mse=mse, max_steps=20000,
                                     stop_reason="cutoff" if cut_top and D_K == 64 and h > 1 else "converged"))
    return pd.DataFrame(rows)


def long_runs(best: dict[int, tuple[int, float]], cut_at_top: bool = False, preset: str = "paper") -> pd.DataFrame:
    """Every planned value_long run: head count h has its lowest MSE best[h][1] at D_K = best[h][0] and 0.01 more
    elsewhere; seeds differ by 1e-5. ``cut_at_top``: the top rung's runs hit the cutoff (still improving)."""
    rows = []
    for c in LONG_EXP.planned_runs(preset):
        dk, low = best[c.h]
        top = c.D_K == max(d for d in (64, 128, 256, 512) if d >= c.h)
        rows.append(dict(run_key=LONG_EXP.run_key(c, preset), preset=preset, m=c.m, d_model=c.d_model, r=c.r, h=c.h,
                         D_K=c.D_K, seed=c.seed, max_steps=c.max_steps,
                         test_mse=(low if c.D_K == dk else low + 0.01) + 1e-5 * c.seed,
                         stop_reason="cutoff" if cut_at_top and top else "converged", test_f1=None))
    return pd.DataFrame(rows)


def d32_best_row(long: Source | None):
    from rgr.results.replication.extensions import value_rows

    rows = {r.key: r for r in value_rows(Source("value", "paper", value_runs()), long)}
    return rows["value_d32_best"]
