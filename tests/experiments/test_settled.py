"""The settled-threshold extension's declared design (rgr.experiments.settled; README "settled", issue 45)."""

import pandas as pd

from rgr.experiments.planner import SCHEMA
from rgr.experiments.runner import run_sweep
from rgr.experiments.settled import SETTLED, UNITS, WIDE_UNITS, Unit, planned_runs
from rgr.protocol import F1_TARGET
from rgr.results.stats import dk_star, reaches_target, summarize
from rgr.store import load_results
from rgr.trainers import trainer

DIAGONAL = [("lambda8", m, m // 8) for m in (128, 256, 512, 1024, 2048)]


def _design(tables: dict[str, pd.DataFrame], cells) -> tuple[Unit, ...]:
    """The rule of the module doc, applied to the paper tables."""
    out = []
    for name, m, d in cells:
        runs = tables[name][(tables[name].m == m) & (tables[name].d_model == d)]
        summary = summarize(runs, ["h", "D_K"], "test_f1")
        star = dk_star(summary)
        per_h = summary[reaches_target(summary["mean"], F1_TARGET)].groupby("h")["D_K"].min()
        hs = int(star.h_star)
        heads = sorted({h for h in (hs // 2, hs, 2 * hs) if h in set(runs.h)} | ({1} if (m, d) == (512, 64) else set()))
        for h in heads:
            top = 2 * star.central if (h, m, d) == (1, 512, 64) else min(int(per_h.get(h, 2 * star.central)),
                                                                        2 * star.central)
            out.append(Unit(m, d, h, tuple(sorted(int(k) for k in set(runs[runs.h == h].D_K)
                                                  if star.central / 2 <= k <= top))))
    return tuple(out)


def _cut_share_at_star(runs: pd.DataFrame) -> float:
    summary = summarize(runs, ["h", "D_K"], "test_f1")
    star = dk_star(summary)
    at = runs[(runs.D_K == star.central) & (runs.h == star.h_star)]
    return float((at.stop_reason == "cutoff").mean())


def test_the_units_are_the_declared_rule_on_the_committed_tables():
    tables = {n: load_results(SCHEMA.renamed(n), "paper") for n in ("base", "lambda8")}
    base = tables["base"]
    cut = [(m, d) for (m, d), runs in base.groupby(["m", "d_model"]) if _cut_share_at_star(runs) >= 0.5]
    diagonal = {(m, d) for _, m, d in DIAGONAL}
    cells = DIAGONAL + [("base", m, d) for m, d in sorted(cut) if (m, d) not in diagonal]
    assert [c[1:] for c in cells[5:]] == [(128, 64), (256, 16), (256, 64), (512, 32)]
    assert _design(tables, cells) == UNITS
    assert _design(tables, [("lambda8", 4096, 512)]) == WIDE_UNITS


def test_budgets_seeds_and_stacks():
    runs = planned_runs(UNITS)
    assert len(runs) == 1350 and sum(c.max_steps for c in runs) == 409_600_000
    assert {c.futility for c in runs} == {None}
    by_cell = {}
    for c in runs:
        by_cell.setdefault((c.m, c.d_model), set()).add(c.max_steps)
    assert by_cell[(1024, 128)] == {320_000, 1_280_000} and by_cell[(2048, 256)] == {320_000}
    assert {c.seed for c in runs if c.m == 2048} == {0, 1, 2}
    groups = trainer("settled").stack_groups(runs, None)
    assert sorted(i for g in groups for i in g) == list(range(len(runs)))
    assert all(len({(runs[i].m, runs[i].d_model, runs[i].max_steps) for i in g}) == 1 and len(g) <= 40
               for g in groups)


def test_the_smoke_preset_runs_through_the_one_runner(tmp_path):
    exp = SETTLED
    out = run_sweep(trainer("settled"), "smoke", device="cpu", root=tmp_path, progress=False)
    assert len(out) == len(exp.planned_runs("smoke")) == 6
    assert set(out["max_steps"]) == {100} and out["reused_from"].isna().all()
    parts = [exp.planned_runs("smoke", None, (i, 2)) for i in range(2)]
    assert sum(map(len, parts)) == 6


def test_the_wide_preset_is_the_rule_at_4096_and_stacks_one_point_at_a_time():
    runs = SETTLED.planned_runs("wide")
    assert len(runs) == 30 and {(c.m, c.d_model, c.max_steps) for c in runs} == {(4096, 512, 800_000)}
    assert {(c.h, c.h * c.d_k) for c in runs} == {(u.h, k) for u in WIDE_UNITS for k in u.D_K}
    assert {c.seed for c in runs} == {0, 1, 2} and SETTLED.planned_runs("paper") == planned_runs(UNITS)
    groups = trainer("settled").stack_groups(runs, 3)
    assert all(len({(runs[i].h, runs[i].d_k) for i in g}) == 1 and len(g) == 3 for g in groups)
