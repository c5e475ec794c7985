"""The prose findings of chapter *Choosing heads* (rgr.results.choosing_heads.readings) on small known tables."""

import math

import pandas as pd
import pytest

from rgr.results.choosing_heads.checks import REAL_LAYERS
from rgr.results.choosing_heads.readings import (
    f1_reading,
    real_layers_reading,
    rule_basis,
    validation_reading,
)
from tests.glued import finding_values


def _runs(slope: float, seeds=(0, 1)) -> pd.DataFrame:
    """F1 = 1 at D_K >= slope * m ln m / d_model, 0.3 below; h = 1 only."""
    rows = []
    for m, d in [(64, 16), (64, 32), (128, 32), (256, 64)]:
        thr = slope * m * math.log(m) / d
        for dk in range(2, int(3 * thr)):
            rows += [dict(m=m, d_model=d, r=1, h=1, D_K=dk, seed=s, test_f1=1.0 if dk >= thr else 0.3) for s in seeds]
    return pd.DataFrame(rows)


def test_rule_basis_reads_the_law_slope_and_the_seeds():
    runs = {"base": _runs(2.0), "lambda32": _runs(2.0, (0,)), "lambda8": _runs(2.0, (0, 1, 2)),
            "design_check": _runs(2.0)}
    b = rule_basis(runs, "book")
    assert b.ls_slope == pytest.approx(2.0, rel=0.05) and b.rule_preset == "book"
    assert (b.seeds_base, b.seeds_lambda32, b.seeds_lambda8, b.seeds_design_check) == (2, 1, 3, 2)
    assert (b.n_compressed, b.n_no_one_head) == (4, 0) and math.isnan(b.no_one_head_d_max)  # h = 1 only: one head
    assert b.one_head_best == "(64, 16), (64, 32), (128, 32) and (256, 64)" and b.one_head_tied == "no cell"
    never = rule_basis({**runs, "base": _runs(2.0).assign(test_f1=0.3)}, "smoke")
    assert math.isnan(never.ls_slope) and never.one_head_best == "no cell"
    with pytest.raises(ValueError, match="runs must name"):
        rule_basis({"base": runs["base"]}, "book")


def test_rule_basis_says_where_one_head_does_as_well_as_several():
    """On paired seeds at the cell's D_K*: (64, 16): one head never reaches the target, two do; (64, 32): one head
    is h*; (128, 32): one head is rejected against two at D_K* = 4 and needs 8; (256, 64): one head's mean is below
    two heads' at D_K* = 4 but within seed noise (p = 0.5); (256, 32): one head has no run near D_K* = 4 and reaches
    the target at 8; (64, 64) has m = d_model and is not counted."""
    rows = []
    cells = {(64, 16): {2: 8}, (64, 32): {1: 4, 2: 4}, (128, 32): {1: 8, 2: 4}, (256, 64): {1: 4, 2: 4},
             (256, 32): {1: 8, 2: 4}, (64, 64): {1: 2}}
    for (m, d), need in cells.items():
        for h in (1, 2):
            for dk in (2, 4, 8):
                if (m, d, h, dk) == (256, 32, 1, 4):
                    continue
                f1 = 1.0 if h in need and dk >= need[h] else 0.3
                rows += [dict(m=m, d_model=d, r=1, h=h, D_K=dk, seed=s, test_f1=f1) for s in (0, 1)]
    t = pd.DataFrame(rows)
    t.loc[(t.m == 256) & (t.d_model == 64) & (t.h == 1) & (t.D_K == 4) & (t.seed == 0), "test_f1"] = 0.99
    b = rule_basis({"base": t, "lambda32": t, "lambda8": t, "design_check": t}, "book")
    assert (b.n_compressed, b.one_head_best, b.n_no_one_head, b.no_one_head_d_max) == (5, "(64, 32)", 1, 16.0)
    assert b.one_head_tied == "(256, 64) (p = 0.5, 2 seeds)"
    assert b.one_head_worse == "(128, 32) (p < 0.001, 2 seeds)" and b.one_head_later == "(256, 32)"


def _val_row(experiment, prediction, D_K_star, inside, cell=None):
    m, d = cell or {"lambda32": (1024, 32), "lambda8": (1024, 128), "design_check": (384, 48)}[experiment]
    return dict(experiment=experiment, prediction=prediction, m=m, d_model=d, D_K_pred=100.0, D_K_lo=80.0, D_K_hi=120.0,
                D_K_star=D_K_star, ratio=D_K_star / 100.0, inside=inside, h=4, h_lo=2, h_hi=8, h_star=4,
                h_inside=True)


def test_validation_reading_keeps_the_rows_made_before_the_result():
    val = pd.DataFrame([_val_row("lambda32", "book fit", 90, True),
                        _val_row("lambda32", "paper fit", 400, False, cell=(2048, 64)),  # not the named cell
                        _val_row("design_check", "preregistered", 150, False),
                        _val_row("design_check", "paper fit, after the fact", 110, True)])
    heads = pd.DataFrame(dict(h=[1, 2, 4, 8, 16], m=2048, d_model=64, seed=0))
    r = validation_reading(val, {"lambda32": heads, "lambda8": heads, "design_check": heads})
    assert r.lambda32.D_K_star == 90 and r.lambda32.inside == "inside" and r.lambda32.h_inside == "inside the interval"
    assert r.design_check.D_K_star == 150 and r.design_check.inside == "outside"  # the preregistered row, not the refit
    assert math.isnan(r.lambda8.D_K_pred) and r.lambda8.inside == r.lambda8.h_inside == "—"
    assert r.refit_note.startswith("Refitted on the paper rows")
    assert (r.n_held, r.n_held_inside) == (3, 1)  # every row made before its result, the named cells or not
    assert r.further_cells == ("Further along the m/d_model = 32 diagonal (lambda32), at (2048, 64) it "
                                      "predicted 100 (80–120) against a measured 400 (outside); this cell ran 1 seed.")
    assert r.lambda8_h_point == "" and (r.futile_lambda32, r.runs_lambda32) == (0, 0)  # no lambda8 row; no run there
    glued = finding_values(r)
    assert "lambda32_D_K_pred" in glued and "design_check_h_inside" in glued and "refit_note" in glued


def test_f1_reading_counts_the_predictions_met():
    assert f1_reading(pd.DataFrame(dict(inside=[True, False, True]))) == f1_reading(
        pd.DataFrame(dict(inside=[True, True, False])))
    r = f1_reading(pd.DataFrame(dict(inside=[True, False, True])))
    assert (r.f1_n_inside, r.f1_n) == (2, 3)


def test_real_layers_reading_is_nan_without_a_rule_and_names_every_layer():
    cols = ["m_cap", "lam_cap", "h_rule", "d_k_rule", "h", "d_k"]
    empty = real_layers_reading(pd.DataFrame(columns=cols))
    assert all(math.isnan(v) for v in finding_values(empty).values())
    assert len(finding_values(empty)) == 6 * len(REAL_LAYERS)
    full = real_layers_reading(pd.DataFrame([dict(zip(cols, range(i, i + 6))) for i in range(len(REAL_LAYERS))]))
    assert (full.real0.m_cap, full.real2.d_k) == (0.0, 7.0) and finding_values(full)["real1_h_rule"] == 3.0
    with pytest.raises(ValueError, match="0 or 3 rows"):
        real_layers_reading(pd.DataFrame([dict(zip(cols, range(6)))]))


def test_held_out_cells_leave_out_the_fitted_grid():
    """A paper preset's repeat of a base-grid cell is the rule's own table, not a held-out test."""
    from rgr.results.choosing_heads.checks import held_out_cells

    base = _runs(2.0)  # cells (64, 16), (64, 32), (128, 32), (256, 64)
    extra = pd.concat([_runs(2.0), _runs(2.0).assign(m=lambda t: t.m * 8)])
    held = held_out_cells({"lambda32": extra, "lambda8": base}, base)
    assert sorted(zip(held["lambda32"].m, held["lambda32"].d_model)) == [(512, 16), (512, 32), (1024, 32), (2048, 64)]
    assert len(held["lambda8"]) == 0


def test_validation_reading_names_every_held_out_cell_and_words_the_further_ones():
    val = pd.DataFrame([_val_row("lambda8", "paper fit", 90, True),
                        _val_row("lambda8", "paper fit", 110, True, cell=(2048, 256)),
                        _val_row("lambda8", "paper fit", float("nan"), False, cell=(4096, 512))])
    heads = pd.DataFrame(dict(h=[1, 2, 4], m=384, d_model=48))
    runs = pd.DataFrame(dict(m=[1024] * 10 + [2048] * 3 + [4096] * 3, d_model=[128] * 10 + [256] * 3 + [512] * 3,
                             seed=list(range(10)) + [0, 1, 2] * 2, h=1, r=1, D_K=4, test_f1=0.3))
    r = validation_reading(val, {"lambda32": heads, "lambda8": runs, "design_check": heads})
    assert r.lambda8_cells == "(1024, 128), (2048, 256) and (4096, 512)"
    assert r.lambda8.D_K_star == 90  # the named cell stays (1024, 128)
    assert r.further_cells == ("Further along the m/d_model = 8 diagonal (lambda8), at (2048, 256) it predicted 100 "
                               "(80–120) against a measured 110 (inside) and at (4096, 512) it predicted 100 (80–120) "
                               "against no threshold (no budget tried reached the target) (outside); "
                               "these cells ran 3 seeds each.")
    alone = validation_reading(val.iloc[:1], {"lambda32": heads, "lambda8": runs, "design_check": heads})
    assert alone.lambda8_cells == "(1024, 128)" and alone.further_cells == ""
    assert r.lambda8_h_point == ""  # no cell has a measured h*: nothing to say about the point prediction
    empty = validation_reading(val.iloc[:0], {"lambda32": heads, "lambda8": runs, "design_check": heads})
    assert empty.lambda8_cells == "(1024, 128)"  # the sweep's named cell when the table is too thin for a row


def test_validation_reading_checks_lambda8s_point_prediction_and_counts_futile_stops():
    """lambda8's cell (1024, 128): h* = 2 with interval [2, 2] (two heads pass at D_K = 4, one head and four at 8),
    the rule's h = 4 outside it; one of its runs was stopped by futility stopping."""
    rows = [dict(m=1024, d_model=128, r=1, h=h, D_K=dk, seed=s, stop_reason="cutoff",
                 test_f1=1.0 if dk >= (4 if h == 2 else 8) else 0.3)
            for h in (1, 2, 4) for dk in (2, 4, 8) for s in (0, 1)]
    runs = pd.DataFrame(rows)
    runs.loc[0, "stop_reason"] = "futile"
    val = pd.DataFrame([_val_row("lambda8", "book fit", 4, False)])
    r = validation_reading(val, {"lambda32": runs.iloc[:0], "lambda8": runs, "design_check": runs.iloc[:0]})
    assert r.lambda8_h_point == ("As a point prediction of the head count the rule fails at every one of these cells, "
                                 "where the predicted h was compared with h* and rejected ((1024, 128): h = 4 against "
                                 "h* = 2 [2, 2]); why is unexplained.")
    # four heads never ran near D_K* = 4: outside the tied range by absence, not rejected
    gone = runs[~((runs.h == 4) & (runs.D_K == 4))]
    g = validation_reading(val, {"lambda32": runs.iloc[:0], "lambda8": gone, "design_check": runs.iloc[:0]})
    assert g.lambda8_h_point == ("At (1024, 128) (h = 4 against h* = 2 [2, 2]) the predicted h has no run within 10% "
                                 "of the cell's D_K*, so it was not compared with h*: there the data cannot say.")
    assert (r.futile_lambda8, r.runs_lambda8, r.futile_lambda32, r.runs_lambda32) == (1, len(runs), 0, 0)
