"""The replication chapter's sentences that choose on its numbers (rgr.chapters.replication_words): the law's rows,
the base rows behind Table 1, the paper's fits' arithmetic, and where the comparison is limited (which experiments are
read on a reduced preset, the GPT-2 block's paper preset in FLOPs and GPU hours)."""

import math
from types import SimpleNamespace

import pandas as pd
import pytest

from rgr.catalog import preset_completeness
from rgr.chapters.replication_words import chapter_words, law_words, limits_words
from rgr.gpt2.experiment import PresetCost, preset_cost
from rgr.protocol import GPU_FP32_PEAK, gpu_hours
from rgr.results import reported as rep
from rgr.results.gpt2_block import is_stand_in
from rgr.results.replication.registry import Basis, FewSeeds, Reduced, arithmetic, chapter_basis
from rgr.results.replication.rows import ClaimRow, Reading, Source, gpt2_source
from rgr.results.replication.verdicts import LAW_BASE, Verdict


def _limits(reduced, gpt2_preset, gpt2_runs, cost, few=()):
    """:func:`limits_words` of a :class:`Basis` of ``reduced`` and ``few`` beside the GPT-2 rows ``gpt2_runs``."""
    m, d = (int(gpt2_runs["m"].max()), int(gpt2_runs["d_model"].max())) if len(gpt2_runs) else (0, 0)
    return limits_words(Basis(reduced, few, gpt2_preset, m, d, is_stand_in(gpt2_runs["embedding_source"]), cost))


def _data(name, preset, seeds=2, h=(1, 32), m=(128, 1024)):
    runs = pd.DataFrame([dict(seed=s, h=hh, m=mm) for s in range(seeds) for hh in h for mm in m])
    return SimpleNamespace(name=name, preset=preset, runs=runs)


GPT2 = pd.DataFrame(dict(m=[256, 256], d_model=[768, 768], embedding_source=["stand-in (not GPT-2)"] * 2))
COST = PresetCost(runs=112, steps=100_000, m=6144, flops=3.0e17)


def _basis(loaded):
    """:func:`chapter_basis` of ``loaded`` beside the GPT-2 block's rows :data:`GPT2` (read on book)."""
    return chapter_basis(loaded, Source("gpt2", "book", GPT2))


def test_basis_names_each_reduced_experiment_once_and_leaves_out_paper_rows_and_gpt2():
    loaded = {"base": {"base": _data("base", "paper", seeds=10)}, "lambda8": {"lambda8": _data("lambda8", "book")},
              "diagonal": {"base": _data("base", "book", seeds=3, m=(64, 512)), "lambda8": _data("lambda8", "book")}}
    done = {name: preset_completeness(name, "paper") for name in ("base", "lambda8")}  # from data/
    got = _basis(loaded).reduced
    assert got == (Reduced("lambda8", "book", 2, 32, 1024, done["lambda8"]),
                   Reduced("base", "book", 3, 32, 512, done["base"]))


def test_words_say_which_sweep_is_short_and_which_are_read_along_with_it():
    reduced = (Reduced("lambda8", "book", 2, 32, 1024, 0.99), Reduced("base", "book", 3, 32, 512, 1.0))
    words = _limits(reduced, "book", GPT2, COST).presets
    assert "lambda8 (book preset: 2 seeds, h up to 32, m up to 1024; its paper sweep 99% done)" in words
    assert "base is complete at the paper preset but read on the reduced one" in words
    assert "With 2 or 3 seeds" in words
    assert "paper sweep 100%" not in words
    almost = (Reduced("lambda8", "book", 2, 32, 1024, 0.998),)
    assert "99% done" in _limits(almost, "book", GPT2, COST).presets  # not rounded up to 100% early


def test_words_when_every_sweep_but_gpt2_is_read_on_paper():
    assert _limits((), "book", GPT2, COST).presets.startswith("Every experiment but the GPT-2 block is read on its "
                                                             "paper preset")


def test_few_seeds_are_named_per_experiment_and_where_only_some_cells_have_them():
    diag = pd.concat([_data("lambda8", "paper", seeds=10, m=(512, 1024)).runs,
                      _data("lambda8", "paper", seeds=3, m=(2048, 4096)).runs])
    loaded = {"base": {"base": _data("base", "paper", seeds=10)},
              "lambda8": {"lambda8": SimpleNamespace(name="lambda8", preset="paper", runs=diag)},
              "softmax": {"softmax": _data("softmax", "paper", seeds=3)},
              "value": {"value": _data("value", "book", seeds=2)},  # read on book: among the reduced, not the few
              "joint": {"softmax": _data("softmax", "paper", seeds=3), "gpt2": _data("gpt2", "paper", seeds=3)}}
    few = _basis(loaded).few
    assert few == (FewSeeds("lambda8", 3, (2048, 4096)), FewSeeds("softmax", 3, ()))
    words = _limits((), "book", GPT2, COST, few=few).presets
    assert words.startswith("Every experiment but the GPT-2 block is read on its paper preset")
    assert "lambda8 (3 seeds at m = 2048 and 4096) and softmax (3 seeds)" in words
    assert "10 distinct resamples" in words  # C(5, 3): multisets of 3 from 3
    assert _basis({"base": {"base": _data("base", "paper", seeds=10)}}).few == ()
    assert "seed counts are small" not in _limits((), "book", GPT2, COST).presets


def test_gpt2_words_give_the_cost_and_vanish_once_its_paper_rows_are_read():
    words = _limits((), "book", GPT2, COST).gpt2
    assert "m = 256 items against d_model = 768 (m / d_model = 0.33, not compressive" in words
    assert "112 runs of 100,000 steps at m = 6144" in words and "0.30 EFLOP" in words
    assert f"{3.0e17 / (0.5 * GPU_FP32_PEAK) / 3600:.1f} h of one H100 at half" in words
    assert "leases of 15 minutes" in words
    compressive = GPT2.assign(m=6144, embedding_source="openai-community/gpt2")
    assert "compressive, but smaller" in _limits((), "book", compressive, COST).gpt2
    assert _limits((), "paper", GPT2, COST).gpt2 == "The GPT-2 block is read on its paper preset."


def test_gpu_hours_in_closed_form_and_share_checked():
    assert COST.hours(0.5) == pytest.approx(3.0e17 / (0.5 * GPU_FP32_PEAK) / 3600)
    assert gpu_hours(3.0e17, 0.1, peak=1e12) == pytest.approx(3.0e17 / 1e11 / 3600)
    with pytest.raises(ValueError, match="share"):
        COST.hours(0)


def test_chapter_limits_reads_completeness_from_data_and_costs_the_gpt2_paper_preset():
    loaded = {"diagonal": {"base": _data("base", "book", seeds=3)}}
    got = limits_words(chapter_basis(loaded, Source("gpt2", "book", GPT2)))
    assert got.presets.startswith("base is complete at the paper preset")  # data/base.csv: the paper sweep is done
    assert f"{preset_cost('paper').flops / 1e18:.2f} EFLOP" in got.gpt2


def test_the_limits_name_the_preset_the_gpt2_rows_read():
    """Asked for "auto", the GPT-2 rows read the compressive preset once data/ holds it complete, and so do the
    limits (rgr.results.replication.rows.gpt2_source); asked for "book", the book preset."""
    loaded = {"diagonal": {"base": _data("base", "book", seeds=3)}}
    rows = lambda asked: gpt2_source(Source("gpt2", "book", GPT2), asked)  # noqa: E731  (as sources_of reads them)
    complete = preset_completeness("gpt2", "compressive") == 1.0
    assert ("read on its compressive preset" in limits_words(chapter_basis(loaded, rows("auto"))).gpt2) == complete
    assert "read on its book preset" in limits_words(chapter_basis(loaded, rows("book"))).gpt2


def test_chapter_words_read_the_base_rows_and_the_arithmetic():
    runs = pd.DataFrame([dict(h=h, seed=s) for h in (1, 8) for s in range(3)])
    words = chapter_words(runs, arithmetic())
    assert words.law_base == LAW_BASE
    assert "h = 8 with 3 seeds" in words.t1_basis
    assert words.arith_summary.startswith("Of every power-of-two head assignment at the paper's own Table 1 d_k, ")
    assert chapter_words(runs.iloc[:0], ()).t1_basis == "No base rows are read here."


def test_law_words_read_the_rows():
    rows = [ClaimRow("law_slope_all", "1", "[0, 2]", "b", Verdict("deviates", "", near_miss=True), 1.5, 1.0, 2.0),
            ClaimRow("heads_slope", "", "", "b", Verdict("agrees", ""), 1.6, 1.5, 1.7)]
    w = law_words(rows)
    assert w.slope_all_ln == "1.50 (95% noise interval 1.00–2.00)"
    assert w.slope_pre_ln == "not testable here" and w.heads_slope.startswith("1.60")
    assert w.paper_law_slope_all == rep.claim("law_slope_all").paper and w.base_all.startswith("outside")


def test_row_value_wording():
    rows = [ClaimRow("law_slope_all", "", "", "", Verdict("agrees", ""), 1.234, 1.0, 1.5,
                     readings=(Reading("with log2", 0.5, 0.4, 0.6, False),)),
            ClaimRow("law_slope_pre", "", "", "", Verdict("agrees", ""), 1.234, 1.0, 1.5),
            ClaimRow("heads_slope", "", "", "", Verdict("not testable", "why", cause="no_data"))]
    w = law_words(rows)
    assert w.slope_all_ln == "1.23 (95% noise interval 1.00–1.50)"
    assert w.slope_all_log2 == "0.50 (95% noise interval 0.40–0.60)"
    assert w.slope_pre_log2 == "not testable here"  # no such reading
    assert w.heads_slope == w.regular_slope == "not testable here"  # not testable; no row


def test_fit_words_follow_the_verdict_and_the_side():
    paper = rep.claim("law_r2_pre").value
    row = lambda status, v: [ClaimRow("law_r2_pre", "", "", "",
                                      Verdict(status, "", cause="no_data" if status == "not testable" else ""),
                                      v, v - 0.1, v + 0.1)]
    fit_words = lambda rows: law_words(rows).r2_pre_words  # noqa: E731
    assert fit_words(row("agrees", paper)) == "The line itself replicates"
    assert fit_words(row("deviates", paper - 0.2)) == "The line is looser than the paper's"
    assert fit_words(row("deviates", min(paper + 0.005, 1.0))) == "The line is tighter than the paper's"
    assert "cannot be compared" in fit_words(row("not testable", math.nan)) and "cannot" in fit_words([])


def test_table1_basis_words_says_a_shortfall_only_where_there_is_one():
    def runs(h_max, seeds):
        return pd.DataFrame([dict(h=h, seed=s) for h in (1, h_max) for s in range(seeds)])

    def table1_basis_words(runs: pd.DataFrame) -> str:
        return chapter_words(runs, ()).t1_basis

    full = table1_basis_words(runs(64, 10))
    assert "h = 64 with 10 seeds" in full and "same head counts and seeds" in full and "Fewer" not in full
    short = table1_basis_words(runs(32, 3))
    assert "h = 32 with 3 seeds" in short and "Fewer seeds or head counts" in short
    assert "Fewer" in table1_basis_words(runs(64, 3))
