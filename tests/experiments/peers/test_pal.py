"""pal's associative memory re-implemented (rgr.experiments.peers.pal), its bisection table
(rgr.experiments.peers.reimplemented) and the reading the chapter glues (rgr.results.peers.single_head), on
synthetic inputs whose capacity is known."""

import dataclasses
import math

import pandas as pd
import pytest
import torch

from rgr.experiments.peers.pal import embeddings, train_pal
from rgr.experiments.peers.reimplemented import PAL, PASS, PalConfig
from rgr.protocol import law_x
from rgr.results.peers.single_head import capacities, capacity_table, pal_reading


def test_embeddings_are_unit_vectors_nested_in_N_and_scores_are_u_W_e():
    E5, U5 = embeddings(5, 6, seed=3)
    E9, U9 = embeddings(9, 6, seed=3)
    assert torch.equal(E9[:5], E5) and torch.equal(U9[:5], U5)
    assert torch.allclose(E9.norm(dim=1), torch.ones(9)) and not torch.allclose(E9, U9)
    assert law_x(1, 4, 4, 10) == pytest.approx(16 / (10 * math.log(10)))


def test_scores_are_u_W_e_in_their_orientation():
    """One step of gradient descent from W = 0, done here on scores u_y^T W e_x, ends at train_pal's loss; the
    other orientation (e_y^T W u_x) does not."""
    def one_step_loss(E: torch.Tensor, U: torch.Tensor) -> float:
        W = torch.zeros(6, 6, requires_grad=True)
        torch.nn.functional.cross_entropy(E @ W @ U.T, torch.arange(5)).backward()
        return torch.nn.functional.cross_entropy(E @ (-20.0 * W.grad) @ U.T, torch.arange(5)).item()

    E, U = embeddings(5, 6, seed=3)
    got = train_pal(PalConfig(N=5, d=6, seed=3, steps=1, lr=20.0, optimizer="gd"))
    assert got["steps_run"] == 1 and got["final_loss"] == pytest.approx(one_step_loss(E, U), rel=1e-5)
    assert got["final_loss"] != pytest.approx(one_step_loss(U, E), rel=0.05)


def test_a_roomy_memory_stores_everything_and_a_cramped_one_does_not():
    roomy = train_pal(PalConfig(N=8, d=8, steps=500))
    assert roomy["accuracy"] == 1.0 and roomy["steps_run"] < 500 and roomy["n_params"] == 64
    cramped = train_pal(PalConfig(N=60, d=4, steps=300))
    assert cramped["accuracy"] < PASS and cramped["steps_run"] == 300


def test_config_and_preset_reject_bad_fields():
    for bad, name in ((dict(N=1), "N"), (dict(d=0), "d"), (dict(seed=-1), "seed"), (dict(lr=0.0), "lr"),
                      (dict(steps=2.5), "steps")):
        with pytest.raises(ValueError, match=name):
            PalConfig(**bad)
    with pytest.raises(ValueError, match="x_easy"):
        dataclasses.replace(PAL.presets["book"], x_easy=0.5, x_hard=1.0)
    with pytest.raises(ValueError, match="tol"):
        dataclasses.replace(PAL.presets["book"], tol=0.0)


def n_at_x(d: int, x: float) -> int:
    """The integer N >= 2 whose law_x(1, d, d, N) is nearest x from above (the bisection's N at x, module doc)."""
    N = 2
    while law_x(1, d, d, N + 1) >= x:
        N += 1
    return N


def _next(tried: dict[int, float]) -> int | None:
    """The next N the sweep plans for the book preset's first bisection (d = 8, seed 0) after ``tried``."""
    first = PAL.planned_runs("book")[0]
    line = {k: getattr(first, k) for k in ("d", "seed", "steps", "lr", "optimizer")}
    done = pd.DataFrame([{**line, "N": n, "accuracy": a} for n, a in tried.items()],
                        columns=[*line, "N", "accuracy"])
    new = [c.N for c in PAL.planned_runs("book", done)
           if all(getattr(c, k) == v for k, v in line.items()) and c.N not in tried]
    assert len(new) <= 1
    return new[0] if new else None


def test_each_bisection_starts_at_the_presets_x_easy_then_x_hard():
    for name, p in PAL.presets.items():
        firsts = {(c.d, c.seed, c.steps, c.lr, c.optimizer): c.N for c in reversed(PAL.planned_runs(name))}
        assert len(firsts) == len(p.lines) and all(N == n_at_x(d, p.x_easy) for (d, *_), N in firsts.items())
    for d, x in ((8, 1.0), (32, 0.5), (64, 4.0)):
        N = n_at_x(d, x)
        assert law_x(1, d, d, N) >= x > law_x(1, d, d, N + 1)
    a = _next({})
    assert a == n_at_x(8, PAL.presets["book"].x_easy) and _next({a: 1.0}) == n_at_x(8, PAL.presets["book"].x_hard)


def test_next_n_brackets_then_bisects_then_stops():
    a, b = n_at_x(8, PAL.presets["book"].x_easy), n_at_x(8, PAL.presets["book"].x_hard)  # 7, 27
    assert _next({a: 1.0, b: 1.0}) == 2 * b  # every N passed: double
    tried = {a: 1.0, b: 1.0}
    while (n := _next(tried)) is not None:
        tried[n] = 1.0
    assert max(tried) <= n_at_x(8, PAL.presets["book"].x_hard / 16) < 2 * max(tried)  # ... up to n_max
    assert _next({a: 0.5, b: 0.0}) == a // 2  # nothing stored: halve
    assert _next({a: 1.0, b: 0.0}) == round(math.sqrt(a * b))
    assert _next({a: 1.0, 15: 1.0, 16: 0.9, b: 0.0}) is None  # the bracket is closed
    assert _next({a: 1.0, b: 1.0, 100: 1.0, 102: 0.0}) is None  # within the tolerance (3%)
    assert _next({a: 1.0, b: 1.0, 100: 1.0, 104: 0.0}) == 102


def _simulate(preset: str, capacity) -> pd.DataFrame:
    """The runner's rounds with an oracle trainer: N is stored iff N <= capacity(d, seed, steps)."""
    rows: list[dict] = []
    for _ in range(60):
        done = pd.DataFrame(rows, columns=["N", "d", "seed", "steps", "lr", "optimizer", "accuracy"])
        keys = {PAL.run_key(PalConfig(**{k: r[k] for k in ("N", "d", "seed", "steps", "lr", "optimizer")}), preset)
                for r in rows}
        todo = [c for c in PAL.planned_runs(preset, done) if PAL.run_key(c, preset) not in keys]
        if not todo:
            break
        for c in todo:
            acc = 1.0 if c.N <= capacity(c.d, c.seed, c.steps) else 0.5
            rows.append(dict(N=c.N, d=c.d, seed=c.seed, steps=c.steps, lr=c.lr, optimizer=c.optimizer, accuracy=acc,
                             wall_time_s=6.0))
    else:
        raise AssertionError("the bisection did not close")
    return pd.DataFrame(rows)


def test_the_bisection_finds_a_known_capacity_within_its_tolerance():
    def law(d, seed, steps):  # the law's form at x* = 1, N ln N = d^2
        return n_at_x(d, 1.0)
    runs = _simulate("book", law)
    caps = capacities(runs)
    assert len(caps) == len(PAL.presets["book"].lines)
    cap = pd.Series([law(d, 0, 0) for d in caps.d])
    assert ((caps.N_pass <= cap) & (cap < caps.N_fail)).all()  # the bracket holds the capacity
    assert (caps.N_fail <= caps.N_pass * (1 + PAL.presets["book"].tol) + 1).all()
    assert (caps.runs <= 12).all()


def test_the_reading_sees_no_drift_under_the_law_and_a_drift_when_capacity_grows_slower():
    flat = pal_reading(_simulate("book", lambda d, s, steps: n_at_x(d, 1.0)))
    assert abs(flat.x_exponent) < 0.05 and flat.x_spread < 1.1 and flat.x_drifts.startswith("stays")
    assert flat.growth == "as fast as"
    assert flat.N_exponent == pytest.approx(flat.law_N_exponent, abs=0.05)
    assert flat.seeds == "0, 1, 2" and flat.steps == 3000 and (flat.d_min, flat.d_max, flat.n_d) == (8, 64, 4)
    assert flat.budget_steps == 12000 and flat.budget_lines == 6 and flat.budget_change == 0.0

    slow = pal_reading(_simulate("book", lambda d, s, steps: round(2 * d**1.5 * (1.2 if steps > 3000 else 1))))
    assert slow.growth == "slower than" and slow.x_drifts == "rises" and slow.x_exponent > 0.15
    assert slow.N_exponent == pytest.approx(1.5, abs=0.05)
    assert slow.budget_change == pytest.approx(0.2, abs=0.03)
    assert slow.budget_x_ratio_main > 1 and slow.budget_x_ratio_big > 1  # x* rises from d = 16 to 32 at both
    assert flat.budget_x_ratio_main == pytest.approx(1, abs=0.05) and "same at both budgets" in flat.budget_reading
    only_big_drifts = pal_reading(_simulate("book", lambda d, s, steps: n_at_x(d, d / 16 if steps > 3000 else 1.0)))
    assert "differs between the budgets" in only_big_drifts.budget_reading
    assert slow.cpu_minutes == pytest.approx(slow.runs * 0.1)
    table = capacity_table(capacities(_simulate("book", lambda d, s, steps: n_at_x(d, 1.0))))
    assert set(zip(table.d, table.steps)) == {(8, 3000), (16, 3000), (32, 3000), (64, 3000), (16, 12000), (32, 12000)}


def test_the_reading_needs_two_widths():
    runs = _simulate("book", lambda d, s, steps: n_at_x(d, 1.0))
    with pytest.raises(ValueError, match="two widths"):
        pal_reading(runs[runs.d == 8])
    with pytest.raises(ValueError, match="no rows"):
        capacities(runs.iloc[:0])


def test_the_figure_draws_both_panels_from_a_synthetic_table():
    from rgr.chapters.figures.peers import plot_pal_capacity

    runs = _simulate("book", lambda d, s, steps: n_at_x(d, 1.0))
    fig = plot_pal_capacity(capacities(runs), pal_reading(runs))
    left, right = fig.axes
    assert left.get_yscale() == "linear" and right.get_yscale() == "log"
    assert len(left.get_legend().get_texts()) == 3  # two budgets and the law's line
