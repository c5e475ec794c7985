"""The paired-seed rule for "X beats Y" and "lowest at h" claims (rgr.results.replication.seed_bootstrap)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rgr.results.replication.rows import LONG, Source
from rgr.results.replication.seed_bootstrap import PAIRED_CLAIMS, paired_difference
from rgr.results.stats import summarize, t_interval
from tests.results.replication.synthetic import d32_best_row, long_runs


def test_the_paired_difference_is_the_paired_t_test():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 1.0, 7), rng.normal(0.5, 1.0, 7)
    d = paired_difference(pd.Series(a), pd.Series(b))
    t = sps.ttest_rel(a, b)
    mean, lo, hi = t_interval(a - b)
    assert d.n == 7 and d.p == pytest.approx(t.pvalue) and (d.mean, d.lo, d.hi) == pytest.approx((mean, lo, hi))
    assert d.a_lower == int((a < b).sum())


def test_only_shared_seeds_pair_and_one_seed_gives_no_interval():
    d = paired_difference(pd.Series([1.0, 2.0], index=[0, 5]), pd.Series([0.0, 0.5], index=[5, 7]))
    assert d.n == 1 and d.mean == 2.0 and d.side() == "tied" and "no interval" in d.words("a", "b")


def _shared_noise(best: dict[int, tuple[int, float]], noise: float) -> Source:
    """value_long rows whose seeds move every configuration together by ``noise`` x seed (what pairing removes)."""
    runs = long_runs(best)
    runs["test_mse"] = runs["test_mse"] + noise * runs["seed"] - 1e-5 * runs["seed"]
    runs.loc[(runs.h == 16) & (runs.D_K == best[16][0]), "test_mse"] += 1e-5 * runs["seed"]  # not exactly constant
    return Source(LONG, "paper", runs)


def test_lowest_at_is_judged_on_paired_seeds_not_by_overlapping_intervals():
    """h = 16 lower than h = 8 at every seed by a steady 0.0005 while the seeds move both by 0.002: the unpaired
    t-intervals overlap, the paired difference does not hold zero, so the claim 'lowest at 4 and 8' deviates (as
    value_long's own rows do). An unpaired rule would call it agreeing."""
    long = _shared_noise({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.004), 8: (256, 0.003), 16: (256, 0.0025)},
                         noise=0.002)
    d32 = long.runs[long.runs.d_model == 32]
    s = summarize(d32, ["h", "D_K"], "test_mse").set_index(["h", "D_K"])
    assert s.loc[(16, 256), "hi"] > s.loc[(8, 256), "lo"]  # the unpaired intervals overlap
    row = d32_best_row(long)
    assert row.verdict.status == "deviates" and "paired over 3 seeds" in row.verdict.detail
    assert "h = 16 (D_K = 256) lower at 3 of 3" in row.verdict.detail


def test_a_tie_on_paired_seeds_lets_the_claim_stand():
    runs = long_runs({1: (128, 0.011), 2: (256, 0.005), 4: (256, 0.004), 8: (256, 0.0026), 16: (256, 0.0025)})
    flip = (runs.h == 16) & (runs.D_K == 256)
    runs.loc[flip, "test_mse"] = 0.0025 + np.where(runs.loc[flip, "seed"] == 1, 0.0004, -0.0001)
    row = d32_best_row(Source(LONG, "paper", runs))
    assert row.verdict.status == "agrees" and "tied" in row.verdict.detail


def test_every_paired_claim_reports_a_paired_comparison_on_the_committed_data():
    """The rows of PAIRED_CLAIMS, as the chapter evaluates them on data/, each say how their pairs came out (or
    are not testable for another reason)."""
    from rgr.chapters.loading import load_groups
    from rgr.results.replication.registry import GROUPS, evaluate, sources_of

    sources, joint = sources_of(load_groups(GROUPS, "auto", "cpu"))
    rows = {r.key: r for r in evaluate(sources, joint)}
    for key in PAIRED_CLAIMS:
        v = rows[key].verdict
        assert v.status == "not testable" or "paired" in v.detail, (key, v.detail)


def test_the_chapter_declares_the_paired_rule_and_names_every_row_it_judges():
    import json
    from pathlib import Path

    book = Path(__file__).resolve().parents[3] / "book" / "replication.ipynb"
    text = "".join("".join(c["source"]) for c in json.loads(book.read_text())["cells"] if c["cell_type"] == "markdown")
    rule = text[text.index("**Comparisons are paired.**"):]
    rule = rule[:rule.index("\n- **")]
    assert "paired seeds" in rule and "excludes zero" in rule and "unpaired" in rule
    assert all(f"`{k}`" in rule for k in PAIRED_CLAIMS), "every paired claim named where the rule is declared"


def test_no_row_of_the_committed_data_hides_a_sharper_cause():
    """A deviation whose data hold a sharper cause shows it (issue 45): the paper's value inside the bootstrap over
    cells is "cell_choice" unless an earlier cause holds; "measured" (a restatement) is gone; a law row whose other
    log base the paper's own Table 1 rules out is not put down to the log base; a law row whose log-space fit holds
    the paper's value is "weighting" unless an earlier cause holds; a row that agrees with a longer step budget names
    that (or what its reader found)."""
    import math

    from rgr.chapters.loading import load_groups
    from rgr.results.replication.registry import GROUPS, evaluate, sources_of
    from rgr.results.replication.reported import claim
    from rgr.results.replication.verdicts import CAUSES, LOG_SPACE, cause_of
    from rgr.results.stats import within

    assert "measured" not in CAUSES
    sources, joint = sources_of(load_groups(GROUPS, "auto", "cpu"))
    for r in evaluate(sources, joint):
        c = cause_of(r)
        if r.verdict.status != "deviates":
            continue
        paper = claim(r.key).value
        inside = (isinstance(paper, float) and math.isfinite(r.cells_lo) and within(paper, r.cells_lo, r.cells_hi))
        sharper = ("log_base", "near_miss", "thin", "paper_table1", "paper_text", "chance", "budget", "budget_bound")
        if inside:
            assert c in (*sharper, "weighting", "cell_choice"), (r.key, c)
        if r.base_ruled_out:
            assert c != "log_base", r.key
        if any(x.name == LOG_SPACE and x.holds for x in r.readings):  # a log-space fit holds the paper's value
            assert c in (*sharper, "weighting"), (r.key, c)
        if r.longer is not None and r.longer.status == "agrees":  # agrees with a longer budget
            assert c in sharper, (r.key, c)
