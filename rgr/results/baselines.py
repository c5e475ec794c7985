"""Reference predictors for the value channel (protocol E6; chapter *value channel*, book/value_channel.ipynb).

A test MSE means little on its own. Two trivial predictors on the very same
test contexts give the scale: predicting the zero message, and predicting the
mean message of all items. A trained layer that does not beat the mean message
has learned nothing about where to attend. Both are, like the table's ``test_mse``, squared errors averaged
over the d_msg coordinates of a message (the paper sums them; see :func:`rgr.results.value_channel.paper_mse`),
so ratios against them do not depend on the convention.
"""

from __future__ import annotations

import pandas as pd

from ..experiments.engine.config import RunConfig
from ..experiments.engine.stack import build_task, init_weights
from ..task.contexts import sample

__all__ = ["trivial_mse_table"]


def _trivial_mse(cfg: RunConfig) -> dict[str, float]:
    """MSE of the zero and the mean-message predictors on ``cfg``'s test contexts (valid positions only)."""
    if cfg.model != "value":
        raise ValueError(f"cfg.model must be 'value', got {cfg.model!r}")
    graph, X = build_task(cfg)
    W_V = init_weights(cfg)["W_V"].double()
    Y = X.double() @ W_V  # (m, d_msg) messages of all items
    b = sample(graph, cfg.seed, n=cfg.n_test, ell=cfg.ell, rho=cfg.rho, stream="test")
    valid = b.labels.any(-1)  # (n, ell): positions whose target is in context
    target = (b.labels.double() @ Y[b.items])[valid]  # (n_valid, d_msg)
    return {
        "mse_zero": float(target.square().mean()),
        "mse_mean": float((target - Y.mean(0)).square().mean()),
    }


def trivial_mse_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Trivial-predictor MSE per (m, d_model, seed) of a value-channel table (from the runs' configs)."""
    fields = set(RunConfig.__dataclass_fields__)
    rows = []
    for _, r in runs.drop_duplicates(["m", "d_model", "seed", "d_msg", "n_test"]).iterrows():
        cfg = RunConfig(**{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items() if k in fields})
        rows.append(dict(m=cfg.m, d_model=cfg.d_model, seed=cfg.seed, **_trivial_mse(cfg)))
    return pd.DataFrame(rows)
