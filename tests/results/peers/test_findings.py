"""The small findings the peers chapter glues beyond its readings (refit, sweep, aot, pal) and the decimals it shows
them with (rgr.chapters.display.prose_digits), on small synthetic inputs."""

import math
from dataclasses import replace

import pandas as pd
import pytest

from rgr.chapters.display import prose_digits
from rgr.results.peers.dana import PowerRefit
from rgr.results.peers.refit import refit_finding
from rgr.results.peers.single_head import one_head_finding
from rgr.results.peers.sweep import (
    LEVELS,
    aot_finding,
    conclusions,
    drifts,
    precondition_reading,
    sweep_finding,
    transitions,
    verdicts,
)
from tests.glued import finding_values

_CELL = pd.DataFrame([dict(m=32, d_model=4, d_k=4, h=h, seed=0, test_f1=f1) for h, f1 in ((1, 0.0), (4, 1.0))])


def _fit(slope=(0.01, 0.055, 0.02, 0.03)) -> PowerRefit:
    return PowerRefit(d=(4, 8, 16, 32), slope=slope, rss_law=2.0, rss_claim=10.8, intercept_law=-0.0006,
                      best_p=1.65, best_p_low=1.5, best_p_high=1.75, loglog_p=2.45)


def _drift(level: float, exponent: float | None, cells=((32, 4), (64, 8))):
    """A drift as :func:`drifts` gives it (one real cell), its fields set."""
    drift = next(iter(drifts(transitions(_CELL)).values()))
    return replace(drift, name="s", cells=cells, level=level, x_star=tuple(1.0 for _ in cells), exponent=exponent,
                   spread=None, n_censored=0)


def _pre(failing, failing_ratio_max, passing_ratio_min, x_max_failing):
    """A precondition reading as :func:`precondition_reading` gives it, its fields set."""
    return replace(precondition_reading(transitions(_CELL), _CELL), failing=failing,
                   failing_ratio_max=failing_ratio_max, passing_ratio_min=passing_ratio_min,
                   x_max_failing=x_max_failing)


def test_prose_digits_names_every_float_or_missing_field_and_rejects_unknown_names():
    drift = _drift(LEVELS[0], None)
    assert prose_digits(drift) == {"level": 2, "exponent": 2, "spread": 2}  # ints, str and tuples left to glue
    assert prose_digits(drift, 3, spread=1) == {"level": 3, "exponent": 3, "spread": 1}
    values = finding_values(drift, digits=prose_digits(drift))
    assert str(values["exponent"]) == "—" and str(values["level"]) == "0.50" and values["n_censored"] == 0
    with pytest.raises(ValueError, match="exact"):
        prose_digits(drift, slope=1)
    with pytest.raises(TypeError, match="found"):
        prose_digits(type(drift))


def test_refit_words_read_the_ratio_and_the_largest_slope():
    w = refit_finding(_fit())
    assert w.rss_ratio == pytest.approx(5.4) and w.slope_max == 0.055
    assert {k: str(v) for k, v in finding_values(w, digits=dict(rss_ratio=1, slope_max=3)).items()} == {
        "rss_ratio": "5.4", "slope_max": "0.055"}


def test_sweep_words_word_the_failing_cells_and_the_drift_direction():
    runs = pd.DataFrame({"seed": [0, 1, 2, 0], "wall_time_s": [600.0, 300.0, 0.0, 30.0]})
    half, passed = _drift(LEVELS[0], -0.3, cells=((32, 4), (64, 8), (128, 16))), _drift(LEVELS[1], 0.2)
    pre = _pre(failing=((32, 4), (128, 8)), failing_ratio_max=1.6, passing_ratio_min=1.9, x_max_failing=6.9)
    w = sweep_finding(runs, half, passed, pre)
    assert (w.n_runs, w.n_seeds, w.cpu, w.half_n_cells, w.pass_n_cells, w.n_fail) == (4, 3, 15.5, 3, 2, 2)
    assert (w.fail_cells, w.separates, w.direction, w.dominates) == ("(32, 4), (128, 8)", "do", "falls", "first")
    none = _pre(failing=(), failing_ratio_max=None, passing_ratio_min=1.9, x_max_failing=None)
    w = sweep_finding(runs, _drift(LEVELS[0], 0.4), passed, none)
    assert (w.fail_cells, w.separates, w.direction, w.dominates) == ("none", "do not", "rises", "second")
    assert str(finding_values(w, digits=dict(cpu=0))["fail_cells"]) == "none"
    with pytest.raises(ValueError, match="half and passed"):
        sweep_finding(runs, passed, half, pre)


def test_glued_failing_cells_keep_their_text_not_a_tuple():
    runs = pd.DataFrame({"seed": [0], "wall_time_s": [60.0]})
    pre = _pre(failing=((32, 4), (128, 8)), failing_ratio_max=1.6, passing_ratio_min=1.9, x_max_failing=6.9)
    cells = finding_values(sweep_finding(runs, _drift(LEVELS[0], 0.1), _drift(LEVELS[1], 0.1), pre))["fail_cells"]
    assert repr(cells) == "'(32, 4), (128, 8)'"  # quoted: myst-nb evaluates the quotes away, not into a tuple


def test_aot_words_count_the_seeds_of_each_difference_and_carry_the_verdicts():
    configs = [("code", 15, 10, 20), ("code", 10, 10, 20), ("paper", 15, 10, 20), ("code", 10, 10, 4),
               ("code", 10, 4, 10), ("paper", 10, 4, 10)]  # the six configurations conclusions() pairs
    aot = pd.DataFrame([dict(param=p, d=d, d_h=d_h, H=H, seed=s, accuracy=0.5) for p, d, d_h, H in configs
                        for s in (0, 1)])
    read = conclusions(aot)
    assert {k: (v.seeds, v.mean, v.sign) for k, v in read.items()} == {
        k: ((0, 1), 0.0, "0") for k in ("beyond_code", "beyond_perhead", "beyond_paper", "split_code", "split_paper")}

    def dif(mean: float, lo: float, hi: float, seeds=(0, 1, 2)):
        return replace(read["beyond_code"], seeds=seeds, mean=mean, lo=lo, hi=hi)

    found = {"beyond_code": dif(0.0, -0.1, 0.1), "beyond_perhead": dif(0.2, 0.1, 0.3),
             "beyond_paper": dif(0.2, 0.1, 0.3, (0, 1)),
             "split_code": dif(0.1, 0.05, 0.15), "split_paper": dif(-0.1, -0.2, -0.05)}
    runs = pd.DataFrame({"wall_time_s": [600.0, 540.0, 30.0]})
    w = aot_finding(runs, found, verdicts(found))
    assert (w.beyond_code_n, w.beyond_paper_n, w.split_code_n, w.split_paper_n, w.aot_runs) == (3, 2, 3, 3, 3)
    assert w.aot_cpu == "20 worker-minutes"
    assert w.verdict_beyond.startswith("is not contradicted for the heads of their code")
    assert "reverses" in w.verdict_split


def test_one_head_words_count_the_passing_cells_and_show_missing_without_rows():
    one = pd.DataFrame({"mean": [0.4, LEVELS[1], 1.0], "x": [0.5, 1.65, 1.2]})
    w = one_head_finding(one)
    assert (w.n_one, w.n_one_pass, w.one_best, w.one_x_max) == (3, 2, 1.0, 1.65)
    shown = finding_values(w, digits=dict(one_best=3, one_x_max=2))
    assert (str(shown["one_best"]), str(shown["one_x_max"])) == ("1.000", "1.65")
    empty = one_head_finding(one.iloc[:0])
    assert (empty.n_one, empty.n_one_pass, empty.one_best, empty.one_x_max) == (0, 0, None, None)
    assert str(finding_values(empty, digits=dict(one_best=3, one_x_max=2))["one_best"]) == "—"


def test_a_failing_cell_whose_heads_stop_short_of_the_passing_x_is_censored():
    rows = [(32, 4, 1, 0.2), (32, 4, 4, 1.0),  # passes first at h = 4: x = 16 * 4 / (32 ln 32) = 0.58
            (64, 4, 1, 0.1), (64, 4, 16, 0.5),  # fails up to x = 16 * 16 / (64 ln 64) = 0.96: read
            (128, 4, 1, 0.1), (128, 4, 2, 0.2)]  # fails, tested only to x = 0.05: censored
    runs = pd.DataFrame([dict(m=m, d_model=d, d_k=d, h=h, seed=0, test_f1=f1, wall_time_s=60.0)
                         for m, d, h, f1 in rows])
    pre = precondition_reading(transitions(runs), runs)
    assert pre.failing == ((64, 4), (128, 4)) and pre.censored == ((128, 4),)
    assert pre.x_pass_slowest == pytest.approx(16 * 4 / (32 * math.log(32)))
    assert pre.x_max_censored == pytest.approx(2 * 16 / (128 * math.log(128)))
    assert pre.x_max_failing == pre.x_reach_failing == pytest.approx(16 * 16 / (64 * math.log(64)))
    assert pre.failing_ratio_max == pytest.approx(4 / math.log(64))  # the censored cell's 4 / ln 128 is not read
    assert pre.separates
    # one read failing cell against one passing: a perfect separation by chance half the time (1 / C(2, 1))
    assert (pre.n_kept_fail, pre.n_pass, pre.chance, pre.d_fail_max, pre.d_pass_min) == (1, 1, 0.5, 4, 4)
    w = sweep_finding(runs, _drift(LEVELS[0], -0.1), _drift(LEVELS[1], -0.1), pre)
    assert (w.n_fail, w.n_censored_fail, w.censored_cells) == (2, 1, "(128, 4)")
    alone = precondition_reading(transitions(runs[runs.m == 128]), runs[runs.m == 128])  # no passing cell: none
    assert alone.censored == () and alone.x_pass_slowest is None and alone.failing == ((128, 4),)
    assert alone.chance is None and alone.d_pass_min is None
