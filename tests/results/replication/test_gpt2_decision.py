"""The GPT-2 verdict rows read the compressive preset (rgr.results.replication.rows; issue 46)."""

from __future__ import annotations

import pandas as pd
import pytest

from rgr.gpt2.experiment import experiment_grid
from rgr.results.replication.extensions import gpt2_rows
from rgr.results.replication.rows import Source, paper_dk_at, x_of


def _rows(preset: str, acc) -> pd.DataFrame:
    """Every run of ``preset`` with test accuracy ``acc(h, D_K, seed)``."""
    out = []
    for c in experiment_grid(preset, "stand-in"):
        out.append(dict(m=c.m, d_model=c.d_model, ell=c.ell, h=c.h, D_K=c.D_K, seed=c.seed, steps=c.steps,
                        batch_size=c.batch_size, test_acc=acc(c.h, c.D_K, c.seed), r=1,
                        embedding_source="stand-in (not GPT-2)"))
    return pd.DataFrame(out)


def test_budgets_map_by_the_law_variable():
    assert x_of(512, 6144, 768) == pytest.approx(7.33, abs=0.01)
    assert paper_dk_at(256, 512, 64) == pytest.approx(256 * 768 / (6144 * 8.7232) * 512 * 6.2383 / 64, rel=1e-3)
    assert 183 < paper_dk_at(256, 512, 64) < 184  # the compressive preset's D_K >= 192 is the paper's D_K >= 256


def test_the_compressive_preset_decides_the_three_rows_on_the_stand_in():
    def acc(h, D_K, seed):
        if h == 1:
            if D_K < 192:
                return 0.3 + 0.01 * seed
            return 0.0 if seed < 2 else 0.78 + 0.01 * seed
        return min(0.99, 0.5 + D_K / 400 + (0.05 if h in (4, 8) else 0.0))

    rows = {r.key: r for r in gpt2_rows(Source("gpt2", "compressive", _rows("compressive", acc)))}
    assert {k: r.verdict.status for k, r in rows.items()} == {"gpt2_multi": "agrees", "gpt2_single": "agrees",
                                                             "gpt2_best": "agrees"}
    b = rows["gpt2_multi"].basis
    assert "m = 512 items in d_model = 64 (m / d_model = 8)" in b and "stand-in" in b and "40,000 steps" in b
    assert "D_K ≥ 183" in rows["gpt2_single"].verdict.detail


def test_the_book_rows_are_the_non_compressive_control():
    rows = gpt2_rows(Source("gpt2", "book", _rows("book", lambda h, D_K, s: 0.9)))
    for r in rows:
        assert r.verdict.status == "not testable" and "not compressive" in r.verdict.detail
        assert "compressive preset" in r.verdict.detail
