"""The design rule (rgr.results.choosing_heads.design): fit, intervals, monotonicity, refusals, the preregistered
prediction."""

import dataclasses
import math

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from rgr.catalog import load as load_results  # noqa: E402
from rgr.experiments.registry import get_experiment  # noqa: E402
from rgr.results.choosing_heads.checks import PREREGISTERED, real_layers, refit_note, validation  # noqa: E402
from rgr.results.choosing_heads.checks import f1_check as design_f1_check  # noqa: E402
from rgr.results.choosing_heads.design import DomainError, fit_from_runs, lookup, recommend  # noqa: E402
from rgr.results.thresholds import thresholds  # noqa: E402
from rgr.theory.bounds import scaling_x  # noqa: E402


@pytest.fixture(scope="module")
def book():
    runs = load_results("base", "book")
    return fit_from_runs(runs, "book"), thresholds(runs)


def _synthetic(slope: float) -> pd.DataFrame:
    """F1 = 1 at D_K >= slope * x (every integer D_K tested), 0.3 below; h = 1 only."""
    rows = []
    for m, d in [(64, 16), (64, 32), (128, 32), (256, 64), (256, 32)]:
        thr = slope * m * math.log(m) / d
        for dk in range(2, int(3 * thr)):
            rows += [dict(m=m, d_model=d, r=1, h=1, D_K=dk, seed=s, test_f1=1.0 if dk >= thr else 0.3) for s in (0, 1)]
    return pd.DataFrame(rows)


def test_fit_recovers_a_known_law_constant():
    rule = fit_from_runs(_synthetic(2.0), "synthetic")
    assert rule.c() == pytest.approx(2.0, rel=0.04)  # D_K* is the first integer at or above 2 x
    assert rule.factor() < 1.1
    assert rule.a == pytest.approx(0.0, abs=1e-9) and rule.b == pytest.approx(1.0)  # h* is always 1


def test_too_few_cells_gives_no_rule():
    runs = _synthetic(2.0)
    assert fit_from_runs(runs[runs.m == 64], "synthetic") is None


def test_rule_reproduces_its_fitted_thresholds_within_their_intervals(book):
    rule, cells = book
    for m, d, x, lam, star, h_star in rule.cells:
        r = recommend(rule, m, d, target_f1=0.99)
        row = cells[(cells.m == m) & (cells.d_model == d)].iloc[0]
        assert r.D_K_lo <= star <= r.D_K_hi, (m, d)
        hi = row.D_K_cons if pd.notna(row.D_K_cons) else star
        assert r.D_K_lo <= hi and row.D_K_opt <= r.D_K_hi  # the cell's own range overlaps the prediction
        assert r.h_lo <= h_star <= r.h_hi, (m, d)
        assert r.f1 >= 0.99 - 1e-9  # at its predicted budget the collapsed curves reach the target


def test_monotone_in_m_prime_and_in_one_over_d_model(book):
    rule, _ = book
    for d in (32, 48, 64):
        rs = [recommend(rule, m, d, target_f1=0.99) for m in range(2 * d, 16 * d + 1, d)]
        assert all(a.D_K < b.D_K for a, b in zip(rs, rs[1:]))
        assert all(a.h <= b.h for a, b in zip(rs, rs[1:]))
        f1 = [recommend(rule, m, d, D_K=64).f1 for m in range(2 * d, 16 * d + 1, d)]
        assert all(a >= b - 1e-12 for a, b in zip(f1, f1[1:]))
    for m in (256, 512):
        rs = [recommend(rule, m, d, target_f1=0.99) for d in (32, 40, 48, 56, 64)]
        assert all(a.D_K > b.D_K for a, b in zip(rs, rs[1:]))
        assert all(a.h >= b.h for a, b in zip(rs, rs[1:]))
        f1 = [recommend(rule, m, d, D_K=48).f1 for d in (32, 40, 48, 56, 64)]
        assert all(a <= b + 1e-12 for a, b in zip(f1, f1[1:]))


def test_d_k_is_the_budget_over_the_heads(book):
    rule, _ = book
    r = recommend(rule, 384, 48, D_K=96)
    assert r.d_k * r.h == 96 and r.h & (r.h - 1) == 0


@pytest.mark.parametrize("args, words", [
    (dict(m_prime=768 * 4, d_model=768, D_K=768), ["d_model = 768", "12x above"]),
    (dict(m_prime=64 * 32, d_model=64, D_K=256), ["m_prime / d_model = 32", "2x above"]),
    (dict(m_prime=32, d_model=64, D_K=8), ["m_prime / d_model = 0.5", "2x below"]),
    (dict(m_prime=256, d_model=16, D_K=64), ["d_model / ln(m_prime)", "below"]),
    (dict(m_prime=256, d_model=32, target_f1=0.999), ["target_f1 = 0.999"]),
    (dict(m_prime=256, d_model=32, D_K=1), ["D_K = 1"]),
])
def test_refuses_out_of_range_input_naming_the_parameter(book, args, words):
    rule, _ = book
    with pytest.raises(DomainError) as e:
        recommend(rule, **args)
    for w in words:
        assert w in str(e.value)


def test_bad_arguments_and_flagged_extrapolation(book):
    rule, _ = book
    with pytest.raises(ValueError, match="exactly one"):
        recommend(rule, 256, 32, D_K=64, target_f1=0.99)
    with pytest.raises(ValueError, match="m_prime"):
        recommend(rule, 1.5, 32, D_K=64)
    r = recommend(rule, 4096, 128, target_f1=0.99, extrapolate=True)
    assert not r.in_domain and any("d_model = 128" in f for f in r.flags)
    assert recommend(rule, 256, 32, target_f1=0.99).in_domain


def test_preregistered_prediction_is_what_the_rule_gives(book):
    rule, _ = book
    p = PREREGISTERED
    assert p.experiment in {"design_check"} and get_experiment(p.experiment).grid(p.preset).cells[0].m == p.m
    r = recommend(rule, p.m, p.d_model, target_f1=0.99)
    assert (round(r.D_K, 2), round(r.D_K_lo, 2), round(r.D_K_hi, 2)) == (p.D_K, p.D_K_lo, p.D_K_hi)
    assert (r.h, r.h_lo, r.h_hi) == (p.h, p.h_lo, p.h_hi)
    for dk, f1, lo, hi in p.f1_at:
        q = recommend(rule, p.m, p.d_model, D_K=dk)
        assert (round(q.f1, 3), round(q.f1_lo, 3), round(q.f1_hi, 3)) == (f1, lo, hi)


def test_capacity_inverts_the_law_and_real_layers_are_refused(book):
    rule, _ = book
    layers = real_layers(rule)
    m, lo, hi = layers.loc[0, ["m_cap", "m_cap_lo", "m_cap_hi"]]  # GPT-2 small: d_model = 768, D_K = 12 * 64
    assert layers.loc[0, "D_K"] == 768 and rule.c() * scaling_x(m, 768) == pytest.approx(768, rel=1e-6)
    assert lo < m < hi and layers.loc[0, "lam_cap"] == m / 768
    c, f = rule.c(), rule.factor()  # the interval's ends: c at the ends of its 95% prediction interval
    assert (c * f * scaling_x(lo, 768), c / f * scaling_x(hi, 768)) == pytest.approx((768, 768), rel=1e-6)
    assert len(layers) == 3 and layers["refusal"].str.contains("d_model").all()
    assert real_layers(None).empty and validation(None, {}).empty


def test_validation_marks_domain_and_interval(book):
    rule, cells = book
    v = validation(rule, {"base": cells[cells.m == 256]})
    assert set(v["in_domain"]) == {True, False}  # (256, 16) breaks the precondition
    inside = v[v.in_domain]
    assert inside["inside"].all() and np.allclose(inside["ratio"], inside["D_K_star"] / inside["D_K_pred"])


def test_lookup_keeps_only_the_domain(book):
    rule, _ = book
    t = lookup(rule, [64, 256, 1024, 4096], [16, 32, 64, 128])
    assert len(t) and t["d_model"].max() <= 64 and (t["m_prime"] / t["d_model"]).max() <= 16
    assert np.allclose(t["d_k"] * t["h"], t["D_K"])


def test_f1_check_pairs_each_preregistered_budget_with_a_measurement(book):
    rule, _ = book
    runs = load_results("design_check", "book")
    t = design_f1_check(rule, runs)
    assert list(t["D_K"]) == [dk for dk, *_ in PREREGISTERED.f1_at] and t["f1_measured"].notna().all()
    assert design_f1_check(None, runs).empty


def test_the_preregistered_cell_keeps_its_committed_prediction_under_a_refit(book):
    rule, _ = book
    cell = thresholds(load_results("design_check", "book"))
    v = validation(rule, {"design_check": cell})  # the book fit: one row, the preregistered numbers
    assert list(v["prediction"]) == ["preregistered"]
    assert v["D_K_pred"].iloc[0] == PREREGISTERED.D_K and v["h"].iloc[0] == PREREGISTERED.h
    refit = dataclasses.replace(rule, preset="paper")  # a rule fitted on other rows cannot rewrite the prediction
    v = validation(refit, {"design_check": cell, "base": cell.assign(m=256, d_model=32)})
    assert list(v["prediction"]) == ["preregistered", "paper fit, after the fact", "paper fit"]
    assert v["D_K_pred"].iloc[0] == PREREGISTERED.D_K and v["D_K_lo"].iloc[0] == PREREGISTERED.D_K_lo
    assert refit_note(v).startswith("Refitted on the paper rows") and "after the result was known" in refit_note(v)
    assert refit_note(validation(rule, {"design_check": cell})) == ""


def test_a_head_count_interval_that_holds_every_run_head_count_is_called_a_sanity_check():
    from rgr.results.choosing_heads.checks import head_count_reading

    assert head_count_reading(1, 16, 4, [1, 2, 4, 8, 16]).startswith("inside the interval, a sanity check only")
    assert head_count_reading(2, 8, 4, [1, 2, 4, 8, 16]) == "inside the interval"  # it could have failed
    assert head_count_reading(2, 8, 16, [1, 2, 4, 8, 16]) == "outside the interval"
    assert head_count_reading(1, 16, None, [1, 2]).startswith("not measured")
    # lambda8's [1, 16] against the 7 head counts 1..64 it ran: inside, but it could hardly fail
    assert head_count_reading(1, 16, 2, [1, 2, 4, 8, 16, 32, 64]) == (
        "inside the interval, a near-vacuous check: the interval holds 5 of the 7 head counts the cell ran")
    assert head_count_reading(1, 16, 64, [1, 2, 4, 8, 16, 32, 64]) == "outside the interval"


def test_the_chart_legend_names_every_head_count_it_draws(book):
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_hex

    from rgr.chapters.figures.choosing_heads import plot_chart
    from rgr.chapters.style import head_color

    ax = plot_chart(book[0]).axes[0]
    drawn = {to_hex(c) for coll in ax.collections
             if isinstance(coll, PathCollection) and len(coll.get_offsets()) for c in coll.get_facecolors()}
    named = {int(t.get_text().split("= ")[1]) for t in ax.get_legend().get_texts() if t.get_text().startswith("h = ")}
    assert {to_hex(head_color(h)) for h in named} == drawn


# issue 44, case 9: a budget far above the tested ones is flagged like one below; two API misuses name themselves


def test_a_budget_far_above_the_tested_ones_is_refused_or_flagged(book):
    rule, _ = book
    with pytest.raises(DomainError, match=r"D_K = 1099511627776 is above the budgets that 3 fitted cells tested"):
        recommend(rule, 256, 32, D_K=2**40)
    r = recommend(rule, 256, 32, D_K=2**40, extrapolate=True)
    assert not r.in_domain and any("above the budgets" in f for f in r.flags)
    assert recommend(rule, 256, 32, D_K=64).in_domain  # a tested budget is answered without a flag


def test_lookup_with_plain_ints_names_the_parameter(book):
    rule, _ = book
    with pytest.raises(ValueError, match=r"m_primes = 256; expected a list of integers"):
        lookup(rule, 256, [32])
    with pytest.raises(ValueError, match=r"d_models = 32; expected a list"):
        lookup(rule, [256], 32)


def test_no_rule_is_named_not_an_attribute_error():
    for call in (lambda: recommend(None, 256, 32, D_K=64), lambda: lookup(None, [256], [32])):
        with pytest.raises(ValueError, match=r"rule = None \(fit_from_runs returns None"):
            call()
