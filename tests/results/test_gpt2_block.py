"""Findings of the chapter *GPT-2 block* (rgr.results.gpt2_block) on synthetic E7 tables."""

import pandas as pd
import pytest

from rgr.gpt2.experiment import STAND_IN_SOURCE, PresetCost
from rgr.paths import data_dir
from rgr.results.gpt2_block import (
    compressive_finding,
    embedding_label,
    gpt2_finding,
    is_stand_in,
    latest_lease_bench,
)
from tests import ROOT


def _runs(acc, m=256, d_model=768, source=STAND_IN_SOURCE, steps=2000):
    return pd.DataFrame([dict(m=m, d_model=d_model, D_K=dk, h=h, seed=s, test_acc=acc(dk, h, s),
                              embedding_source=source, best_step=steps if s else steps // 2, steps_done=steps,
                              final_train_loss=5.0 * (1 - acc(dk, h, s)))
                         for dk in (64, 128, 256) for h in (1, 2, 4) for s in (0, 1, 2)])


PAPER = PresetCost(runs=112, steps=100_000, m=6144, flops=3e17)


def test_reading_of_a_known_table():
    # more heads better; accuracy rises with D_K except h = 1 at 256; seed 2 of h = 2, D_K = 64 far ahead
    def acc(dk, h, s):
        if (dk, h, s) == (64, 2, 2):
            return 1.0
        return 0.2 * h / 4 + dk / 1000 - (0.2 if (h, dk) == (1, 256) else 0)

    runs = _runs(acc).assign(wall_time_s=60.0)
    r = compressive_finding(runs, done=1.0)
    # at 64 h = 2's mean leads on one lucky seed: paired over seeds it is tied with h = 1 and h = 4
    assert r.best_h == "2 (h = 1, 4 tied); 4; 4" and r.multi_head_best == 3 == r.n_budgets
    # h = 4 rises at every step; h = 1 falls at 256 on every seed; h = 2's mean dips after its lucky seed, but paired
    # over seeds that is no fall (a mean-only rule counted it as one)
    assert (r.n_rising, r.n_heads) == (1, 3)
    assert r.falls == "h = 1 at D_K 128 → 256" and r.dips == "h = 2 at D_K 64 → 128"
    assert r.pct_best_last == pytest.approx(100 * 2 / 3)
    assert (r.n_split, r.n_settings) == (1, 9)
    assert r.lam == pytest.approx(1 / 3)
    w = gpt2_finding(runs, paper=PAPER)
    assert w.embeddings.startswith("STAND-IN") and w.regime == "at or below"
    # the split setting (64, 2): its lowest seed did not collapse, it stalled at 0.164 (loss 5 * (1 - 0.164))
    assert w.n_split_collapsed == 0 and w.low_acc_lo == w.low_acc_hi == pytest.approx(0.164)
    assert w.low_loss_lo == pytest.approx(5 * (1 - 0.164))
    assert r.h_max == 4 and r.n_seeds == 3 and r.multi_head_collapsed == "none"
    assert r.falling_budgets == "no budget"  # more heads do better here


def test_the_compressive_preset_names_where_more_heads_lose():
    """Two heads best, four worse, on every seed at D_K = 64 and 128; at 256 seed 0 of h = 4 beats h = 2; one head
    beats four at the smallest budget on every seed; a two-head run collapsed."""
    def acc(dk, h, s):
        if (dk, h, s) == (256, 2, 1):
            return 0.001
        if (dk, h, s) == (256, 4, 0):
            return 0.9
        return {1: 0.5, 2: 0.6, 4: 0.4}[h] + dk / 10000

    r = compressive_finding(_runs(acc, m=512, d_model=64), done=1.0)
    assert (r.h_max, r.falling_budgets, r.h1_over_hmax, r.n_seeds) == (4, "64 and 128", 3, 3)
    assert r.acc_h1_small == pytest.approx(0.5064) and r.acc_hmax_small == pytest.approx(0.4064)
    assert r.multi_head_collapsed == "h = 2 at D_K = 256 (seed 1)"
    assert r.dips == "h = 2 at D_K 128 → 256 (a seed collapsed)" and r.falls == "none" and r.n_rising == 1
    assert r.best_h == "2; 2; 4 (h = 1, 2 tied)"  # h = 4's lead at 256 is one seed's
    w = gpt2_finding(_runs(acc, m=512, d_model=64).assign(wall_time_s=1.0), paper=PAPER)
    assert w.n_split_collapsed == 1  # (256, 2): its lowest seed collapsed; (256, 4)'s stalled at 0.4256
    assert w.low_acc_lo == w.low_acc_hi == pytest.approx(0.4256)


def test_compressive_and_real_embeddings():
    w = gpt2_finding(_runs(lambda dk, h, s: 0.5, m=6144, source="gpt2 (openai-community/gpt2)").assign(
        wall_time_s=1.0), paper=PAPER)
    assert w.regime == "above" and w.lam == 8 and w.embeddings == "frozen embeddings: gpt2 (openai-community/gpt2)"
    assert w.n_split == 0


def test_bad_tables():
    with pytest.raises(ValueError, match="no rows"):
        gpt2_finding(_runs(lambda dk, h, s: 0.5).iloc[:0], paper=PAPER)
    mixed = pd.concat([_runs(lambda dk, h, s: 0.5), _runs(lambda dk, h, s: 0.5, m=512)])
    with pytest.raises(ValueError, match="one m"):
        compressive_finding(mixed, done=1.0)


def test_embedding_label():
    assert is_stand_in([STAND_IN_SOURCE, "gpt2"]) and embedding_label([STAND_IN_SOURCE]).startswith("STAND-IN")
    assert not is_stand_in(["gpt2"]) and embedding_label(["gpt2", "gpt2"]) == "frozen embeddings: gpt2"


def test_titles_say_which_embeddings_the_table_used():
    """Issue 30: the chapter's title (and sidebar) and *Choosing heads* name the embeddings data/gpt2.csv used."""
    import json

    root = ROOT
    sources = pd.read_csv(root / "data" / "gpt2.csv")["embedding_source"]

    def text(name: str, first_only: bool = False) -> str:
        cells = [c for c in json.loads((root / "book" / name).read_text())["cells"] if c["cell_type"] == "markdown"]
        return "\n".join("".join(c["source"]) for c in (cells[:1] if first_only else cells))

    title = text("gpt2_block.ipynb", first_only=True).splitlines()[0]
    where = [s for s in text("choosing_heads.ipynb").split(". ") if "gpt2_block" in s]
    if is_stand_in(sources):
        assert "stand-in" in title and "frozen GPT-2" not in title
        assert where and all("stand-in" in s and "frozen GPT-2" not in s for s in where)
    else:
        assert "stand-in" not in title and "GPT-2" in title


def test_words_of_a_table_are_its_reading():
    runs = _runs(lambda dk, h, s: 0.2 * h + dk / 1000).assign(wall_time_s=60.0)
    paper = PAPER
    w = gpt2_finding(runs, paper=paper, split=0.3)
    assert (w.m, w.d_model, w.multi_head_best, w.n_budgets, w.n_rising, w.n_heads) == (256, 768, 3, 3, 3, 3)
    assert w.best_h == "4; 4; 4" and w.regime == "at or below" and w.lam == pytest.approx(1 / 3)
    assert w.pct_best_last == pytest.approx(100 * 2 / 3) and w.wall_min == pytest.approx(len(runs))
    assert w.embeddings.startswith("STAND-IN")
    assert w.paper_eflop == 0.3


def test_the_compressive_preset_is_worded_so_far_and_without_rows():
    def acc(dk, h, s):  # one head's seed 0 collapses at every budget; two heads best
        return 0.001 if (h, s) == (1, 0) else 0.3 + 0.1 * (h == 2) + dk / 1000

    w = compressive_finding(_runs(acc, m=512, d_model=64), done=0.45)
    best = "; ".join(["2 (h = 1 tied)"] * 3)  # one head's collapsed seed widens its interval to hold h = 2
    assert (w.pct_done, w.n_runs, w.lam, w.budgets, w.best_h) == (45.0, 27, 8.0, "64, 128, 256", best)
    assert (w.one_head_collapsed, w.one_head_runs) == (3, 9) and w.multi_head_best == 3
    assert w.one_head_collapsed_at == "D_K = 64 (seed 0), D_K = 128 (seed 0) and D_K = 256 (seed 0)"
    assert w.pct_median_best == 100.0  # seeds 1, 2 peak at their last step, seed 0 halfway (h = 1: collapsed)
    empty = compressive_finding(_runs(acc).iloc[:0], done=0.0)
    assert (empty.n_runs, empty.budgets, empty.one_head_runs) == (0, "—", 0)


def test_a_missing_gpt2_table_reads_as_no_rows_and_a_broken_one_fails(tmp_path):
    from rgr.catalog import load_if_present
    from rgr.store import TableError

    assert len(load_if_present("gpt2", "compressive", root=tmp_path)) == 0
    (tmp_path / "gpt2.csv").write_text("not,a,table\n1,2,3\n")
    with pytest.raises(TableError):
        load_if_present("gpt2", "compressive", root=tmp_path)


def test_a_lease_log_gives_its_bench_projection(tmp_path):
    """The chapters quote the GPU-minutes that a lease's bench printed (scripts/gpu_gpt2.sh writes the log)."""
    text = ("E7 paper preset on NVIDIA H200 (bf16); matmul reference 776.8 TFLOP/s\n"
            "projection: the whole paper preset (112 runs in 16 stacks of 7, 100,000 steps each) 1,066.9 minutes of "
            "one process here\n")
    (tmp_path / "leases").mkdir()
    (tmp_path / "leases" / "2026-01-01-0.log").write_text(text)
    got = latest_lease_bench(tmp_path)
    assert (got.path, got.device, got.preset, got.minutes) == (
        f"{tmp_path.name}/leases/2026-01-01-0.log", "NVIDIA H200", "paper", 1066.9)
    (tmp_path / "leases" / "2026-01-01-1.log").write_text(text.replace("1,066.9", "5"))
    (tmp_path / "leases" / "2026-01-01-2.log").write_text("a lease without a bench")
    (tmp_path / "leases" / "2026-01-01-3-sweep.log").write_text(text.replace("1,066.9", "7"))  # a training-only lease
    assert latest_lease_bench(tmp_path).minutes == 5 and latest_lease_bench(tmp_path / "none") is None
    committed = latest_lease_bench(data_dir())  # the H200 lease of 2026-11-27
    assert committed is not None and committed.preset == "paper" and committed.minutes > 0
