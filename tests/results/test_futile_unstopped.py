"""The regular table with its retrained futility stops (rgr.experiments.futility.with_retrained / retrained_points,
rgr.results.replication.second_readings; issue 45 item 5)."""

import math

import pandas as pd
import pytest

from rgr.catalog import load, load_if_present
from rgr.experiments.futility import retrained_points, with_retrained
from rgr.experiments.unstopped import PLATEAUS, UNITS
from rgr.results.denser_graphs import unstopped_reading
from rgr.results.replication.rows import Source


def _runs() -> pd.DataFrame:
    """One point, three seeds: seed 0 stopped as futile at F1 0.5, seeds 1 and 2 passed; another point untouched."""
    rows = [dict(m=16, d_model=8, r=2, h=1, D_K=4, seed=s, run_key=f"k{s}", stop_reason=why, test_f1=f1)
            for s, why, f1 in ((0, "futile", 0.5), (1, "converged", 1.0), (2, "converged", 1.0))]
    rows.append(dict(m=16, d_model=8, r=2, h=1, D_K=8, seed=0, run_key="k3", stop_reason="cutoff", test_f1=0.7))
    return pd.DataFrame(rows, index=[10, 11, 12, 13])


def test_a_retrained_row_replaces_only_its_futile_stop():
    runs = _runs()
    new = pd.DataFrame([dict(m=16, d_model=8, r=2, h=1, D_K=4, seed=0, run_key="k0", stop_reason="converged",
                             test_f1=1.0, experiment="unstopped"),
                        dict(m=16, d_model=8, r=2, h=1, D_K=8, seed=0, run_key="k3", stop_reason="converged",
                             test_f1=1.0, experiment="unstopped")])
    out = with_retrained(runs, new)
    assert list(out.index) == list(runs.index) and list(out.columns) == list(runs.columns)
    assert out.loc[10, "test_f1"] == 1.0 and out.loc[10, "stop_reason"] == "converged"
    assert out.loc[13, "test_f1"] == 0.7  # not futile-stopped: kept though the key is there
    assert with_retrained(runs, new.iloc[:0]).equals(runs)
    pts = retrained_points(runs, new)
    assert len(pts) == 1
    p = pts.iloc[0]
    assert (p.D_K, p.seeds, p.retrained, p.reached, p.still_cut) == (4, 3, 1, 1, 0)
    assert p.f1_before == pytest.approx(2.5 / 3) and p.f1_after == 1.0
    assert not p.passes_before and p.passes_after
    assert retrained_points(runs, new.iloc[:0]).empty


def _as_retrained(runs: pd.DataFrame, f1) -> pd.DataFrame:
    """The stopped rows of the design, as if retrained to the cutoff with test F1 ``f1(row)``."""
    keys = {(u.r, u.h, u.D_K, s) for u in UNITS for s in u.seeds}
    at = runs[[(r, h, dk, s) in keys for r, h, dk, s in zip(runs.r, runs.h, runs.D_K, runs.seed)]]
    return at.assign(stop_reason="cutoff", test_f1=[f1(r) for r in at.itertuples()], experiment="unstopped")


def test_the_reading_changes_nothing_when_the_retrained_runs_score_as_they_stopped():
    runs = load("regular", "paper")
    read = unstopped_reading(Source("regular", "paper", runs), _as_retrained(runs, lambda r: r.test_f1), PLATEAUS)
    assert (read.retrained, read.false_retrained, read.plateau_retrained) == (176, 3, 173)
    assert read.plateau_points == 23 and read.points.still_cut.sum() == 176 and read.false_reached == 0
    assert read.rows_read == 5 and read.rows_changed == 0 and read.changed_words == "none"
    assert read.plateau_shift_max == 0 and read.false_f1_before == read.false_f1_after
    assert read.plateau_shift_where.startswith("r = 2, h = 1, D_K = ")  # every shift 0: the first point
    assert (read.stopped, read.runs) == ((runs.stop_reason == "futile").sum(), len(runs))  # the whole table's stops


def test_the_reading_sees_a_plateau_that_is_not_one():
    """Retrained plateau runs that all reach F1 1.0 make the plateau row deviate; the false stops then pass."""
    runs = load("regular", "paper")
    read = unstopped_reading(Source("regular", "paper", runs), _as_retrained(runs, lambda r: 1.0), PLATEAUS)
    before, after = {a.key: (a, b) for a, b in read.rows}["regular_plateaus"]
    assert (before.verdict.status, after.verdict.status) == ("agrees", "deviates")
    assert read.statuses_changed >= 1 and "regular_plateaus (agrees -> deviates)" in read.changed_words
    assert read.false_reached == 3 and read.false_f1_after == pytest.approx(1.0)
    at = runs[(runs.r == 8) & (runs.h == 4) & (runs.D_K == 4096)]
    assert read.false_f1_before == pytest.approx(at.test_f1.mean())


def test_the_committed_extension_reads_in_the_stopped_rows_place():
    """Whatever data/unstopped.csv holds of the paper preset replaces that many stopped rows, no more."""
    runs, new = load("regular", "paper"), load_if_present("unstopped", "paper")
    read = unstopped_reading(Source("regular", "paper", runs), new, PLATEAUS)
    assert read.retrained == len(new) <= 176
    assert read.reached + read.points.still_cut.sum() <= read.retrained
    assert math.isnan(read.plateau_shift_max) == (read.plateau_retrained == 0)
    assert load_if_present("unstopped", "book").empty  # the design has no book rows: absent, never a smoke fallback


def test_the_plateau_row_names_the_futility_stops_it_reads_and_none_once_retrained():
    runs = load("regular", "paper")
    read = unstopped_reading(Source("regular", "paper", runs), _as_retrained(runs, lambda r: r.test_f1), PLATEAUS)
    before, after = {a.key: (a, b) for a, b in read.rows}["regular_plateaus"]
    assert f"; {read.plateau_retrained} of " in before.verdict.detail  # every stop at the plateaus, counted
    assert "stopped by the futility rule (not in the protocol)" in before.verdict.detail
    assert "futility" not in after.verdict.detail
