"""The constructions table computed in memory, for the tests that need its rows without data/ (the command writes
them: ``python -m rgr constructions``)."""

from __future__ import annotations

import pandas as pd
import torch

from rgr.experiments.construction_table import ConstructionSweep
from rgr.studies.construction_trainer import ConstructionTrainer


def explicit_table(preset: str = "book", seed: int = 0) -> pd.DataFrame:
    """The table's rows of ``preset``, computed here by its trainer."""
    sweep = ConstructionTrainer(ConstructionSweep(seed))
    runs = sweep.planned_runs(preset)
    rows = [row for g in sweep.stack_groups(runs, None)
            for row in sweep.train_stack([runs[i] for i in g], preset, torch.device("cpu"))]
    df = pd.DataFrame(rows)
    for col in ("B", "h", "d_k", "D_K"):
        df[col] = df[col].astype("Int64")
    return df
