import dataclasses

import pandas as pd
import pytest

from rgr.experiments.engine.config import RunConfig
from rgr.results.value_channel import trivial_mse_table
from rgr.task.contexts import build_task
from rgr.task.embeddings import value_projection


def _runs(*cfgs: RunConfig) -> pd.DataFrame:
    """A table's rows carrying each config's fields (and a column that is none, as a table has)."""
    return pd.DataFrame([dataclasses.asdict(c) | {"test_f1": 0.5} for c in cfgs])


def test_trivial_mse_closed_forms():
    cfg = RunConfig(m=64, d_model=16, h=2, d_k=4, model="value", n_test=400)
    t = trivial_mse_table(_runs(cfg, dataclasses.replace(cfg, h=4, d_k=2)))  # one row per (m, d_model, seed)
    assert len(t) == 1 and (t.m[0], t.d_model[0], t.seed[0]) == (64, 16, cfg.seed)
    out = t.iloc[0]
    _, X = build_task(cfg)
    Y = X.double() @ value_projection(cfg.d_model, cfg.d_msg, cfg.seed)
    # targets are (close to) uniform over items: the zero predictor's MSE is about E||y||^2 / d_msg
    assert out["mse_zero"] == pytest.approx(Y.square().mean().item(), rel=0.15)
    # the mean message can only help, and by about ||mean||^2 / d_msg
    assert out["mse_mean"] < out["mse_zero"]
    assert out["mse_zero"] - out["mse_mean"] == pytest.approx(Y.mean(0).square().mean().item(), rel=0.5, abs=1e-3)


def test_trivial_mse_needs_value_model():
    with pytest.raises(ValueError, match="model"):
        trivial_mse_table(_runs(RunConfig(m=32, d_model=8, h=1, d_k=4)))
