"""Synthetic copies of Dana et al.'s files (tests/results/peers/, tests/system/test_chapter_peers.py): accuracy
linear in H with slope a d^p, so the refit's exponent is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

H = np.arange(1, 32, 5)  # their grid of head counts


def acc_of(d: int, p: float, a: float) -> np.ndarray:
    return np.minimum(1.0, 0.02 + a * d**p * H)


def write_peer_files(folder: Path, p: float, a: float = 1e-4) -> None:
    """Their files' shape: per d in 3..13, accuracy linear in H with slope a d^p, capped at 1; experiment 3
    rising 0.1 per unit of d up to d_head = 10, flat at 0.8 above."""
    folder.mkdir(parents=True, exist_ok=True)
    for d in range(3, 14):
        acc = acc_of(d, p, a)
        pd.DataFrame(dict(acc=acc, para=H, N=50, d=d, d_head=d)).to_csv(folder / f"Data_exp_1_{d}.csv", index=False)
    for d in (40, 50, 60):  # their appendix B.1, N = 200: the same law at a larger vocabulary
        acc = np.minimum(1.0, 0.005 + a * d**p * H / 16)
        pd.DataFrame(dict(acc=acc, para=H, N=200, d=d, d_head=d)).to_csv(folder / f"Data_exp_1_{d}_dim.csv",
                                                                         index=False)
    d = np.arange(5, 16)
    pd.DataFrame(dict(acc=np.where(d <= 10, 0.1 * d - 0.2, 0.8), para=20, N=50, d=d, d_head=10)).to_csv(
        folder / "Data_exp_3.csv", index=False)
