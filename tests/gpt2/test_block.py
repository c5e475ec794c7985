"""The E7 task sampler, the one-block Transformer, stacked training and Fig. 7 (tiny configs)."""

from dataclasses import replace

import matplotlib
import numpy as np
import pandas as pd
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from rgr.chapters.figures.gpt2_block import plot_accuracy_vs_dk
from rgr.gpt2.block import block_logits, forward, init_params, sample_task
from rgr.gpt2.experiment import PRESETS, STAND_IN_SOURCE, Config, experiment_grid, preset_cost, step_flops
from rgr.gpt2.table import StandInSpec, stand_in_items
from rgr.gpt2.training import train_runs
from rgr.results.stats import t_interval
from rgr.task.graphs import permutation_graph
from rgr.task.rng import stream_key

matplotlib.use("Agg")

TINY = Config(m=24, ell=4, d_model=16, embeddings="stand-in", D_K=8, h=2, steps=30, batch_size=16,
              eval_interval=10, n_val=64, n_test=64, lr=1e-2)



def _task(seeds, m=24, ell=4, n=50, start=0, stream="train"):
    pi = torch.stack([torch.from_numpy(permutation_graph(m, s).pi) for s in seeds])
    keys = torch.tensor([stream_key(s, stream) for s in seeds])
    idx = (start + torch.arange(n)).expand(len(seeds), n)
    return pi, sample_task(keys, pi, idx, ell)


def test_config_validation():
    with pytest.raises(ValueError, match="D_K must be a multiple of h"):
        replace(TINY, D_K=6, h=4)
    with pytest.raises(ValueError, match="d_model must be a multiple of h"):
        replace(TINY, d_model=18, h=4, D_K=8)
    with pytest.raises(ValueError, match="2\\*ell \\+ 1 <= m"):
        replace(TINY, m=8, ell=4)
    with pytest.raises(ValueError, match="embeddings"):
        replace(TINY, embeddings="glove")
    with pytest.raises(ValueError, match="lr"):
        replace(TINY, lr=0.0)
    assert TINY.d_k == 4 and TINY.d_v == 8


@pytest.mark.parametrize("m", [24, 9])  # 9 = 2 ell + 1: every item is used
def test_sampler_labels_and_distinct_items(m):
    pi, b = _task([0, 3], m=m, n=200)
    R, n, ell = 2, 200, 4
    assert b.pairs.shape == (R, n, ell, 2) and b.query.shape == b.succ.shape == b.label.shape == (R, n)
    assert torch.equal(b.succ, torch.gather(pi, 1, b.query)) and bool((b.succ != b.query).all())
    items = b.pairs.flatten(2)  # (R, n, 2 ell)
    allx = torch.cat([items, b.query[..., None]], -1)
    assert bool((allx.sort(-1).values.diff(dim=-1) > 0).all())  # q and the 2 ell items all distinct
    assert bool(((allx >= 0) & (allx < m)).all())
    # y is the partner of s: s and y share a pair slot
    in_pair = (b.pairs == b.succ[..., None, None]).any(-1)  # (R, n, ell)
    assert bool((in_pair.sum(-1) == 1).all())
    pair = b.pairs[in_pair].view(R, n, 2)
    partner = torch.where(pair[..., 0] == b.succ, pair[..., 1], pair[..., 0])
    assert torch.equal(partner, b.label)


def test_sampler_deterministic_stackable_and_spread():
    _, both = _task([0, 3], n=40)
    _, alone = _task([3], n=40)
    _, again = _task([0, 3], n=40)
    for a, b, c in zip(vars(both).values(), vars(alone).values(), vars(again).values()):
        assert torch.equal(a, c) and torch.equal(a[1:], b)
    _, late = _task([0, 3], n=10, start=30)  # example i is the same whatever batch it is in
    assert torch.equal(late.pairs, both.pairs[:, 30:])
    _, big = _task([1], n=3000)
    assert set(big.query.unique().tolist()) == set(range(24)) and set(big.label.unique().tolist()) == set(range(24))
    pos = (big.pairs == big.succ[..., None, None]).any(-1).float().argmax(-1)  # slot of s: uniform over ell
    assert np.all(np.bincount(pos.flatten().numpy(), minlength=4) > 600)


def test_inputs_and_block_shapes():
    E = stand_in_items(24, StandInSpec(d_model=16)).table()
    _, b = _task([0, 1], n=5)
    # the input sequence (R, n, ell + 2, d): the superposed pairs, E[NULL], E[q]
    x = torch.cat([E[b.pairs].sum(-2), E[24].expand(2, 5, 1, 16), E[b.query].unsqueeze(2)], dim=2)
    assert x.shape == (2, 5, 6, 16)
    # the block as a probe of the sequence it reads: no scores (every position attended alike), values and output
    # maps the identity, no MLP, no final LN: the query's embedding plus the mean of every position's LN
    probe = init_params([replace(TINY, seed=s, final_ln=False) for s in (0, 1)])
    for k in ("W_Q", "W_K", "W_2"):
        probe[k] = torch.zeros_like(probe[k])
    for k in ("W_V", "W_O"):
        probe[k] = torch.eye(16).expand(2, 16, 16).clone()
    expected = (x[:, :, -1] + torch.nn.functional.layer_norm(x, (16,)).mean(2)) @ E.T
    assert torch.allclose(block_logits(probe, E, b, replace(TINY, final_ln=False)), expected, atol=1e-5)
    cfgs = [replace(TINY, seed=s) for s in (0, 1)]
    p = init_params(cfgs)
    assert p["W_Q"].shape == (2, 16, 8) and p["W_V"].shape == (2, 16, 16) and p["W_1"].shape == (2, 16, 16)
    torch.manual_seed(0)
    for k in ("W_O", "W_2"):  # exercise the residual paths: the initial ones are tiny
        p[k] = torch.randn_like(p[k])
    out = forward(p, x, TINY)
    assert out.shape == (2, 5, 16)
    # the last position sees every position: the mask and last-only evaluation change nothing
    for cfg in (TINY, replace(TINY, causal=False)):
        assert torch.allclose(forward(p, x, cfg, last_only=False), out, atol=1e-5)
    # distinct seeds, distinct weights; same seed, same weights
    assert not torch.equal(p["W_Q"][0], p["W_Q"][1])
    assert torch.equal(init_params([cfgs[1]])["W_Q"][0], p["W_Q"][1])
    nofinal = init_params([replace(TINY, final_ln=False)])
    assert "ln_f" not in nofinal


def test_stacked_equals_solo():
    cfgs = [replace(TINY, seed=s) for s in (0, 5)]
    both = train_runs(cfgs)
    solo = [train_runs([c])[0] for c in cfgs]
    for a, b in zip(both, solo):
        assert a["seed"] == b["seed"] and a["stack_size"] == 2 and b["stack_size"] == 1
        assert a["final_train_loss"] == pytest.approx(b["final_train_loss"], rel=1e-5)
        for k in ("test_acc", "best_val_acc", "best_step"):
            assert a[k] == b[k]
    assert both[0]["final_train_loss"] != both[1]["final_train_loss"]


def test_loss_decreases_and_beats_chance():
    cfg = replace(TINY, m=12, ell=2, steps=300, eval_interval=100, n_val=256, n_test=256, lr=2e-2)
    short, long_ = train_runs([replace(cfg, steps=5, eval_interval=5), cfg])
    assert long_["final_train_loss"] < short["final_train_loss"] - 0.5
    assert long_["test_acc"] > 3 / 13 and long_["best_step"] > 0
    assert long_["embedding_source"] == STAND_IN_SOURCE and long_["precision"] == "fp32"


def test_presets_and_smoke_grid():
    paper = experiment_grid("paper", embeddings="stand-in")
    assert len(paper) == 4 * 4 * 7
    assert {(c.m, c.ell, c.d_model, c.steps) for c in paper} == {(6144, 16, 768, 100_000)}
    assert {c.D_K for c in paper} == {64, 128, 256, 512} and {c.h for c in paper} == {1, 2, 4, 8}
    assert sorted({c.seed for c in paper}) == list(range(7))
    assert set(PRESETS) == {"paper", "book", "smoke", "compressive", "compressive_pilot"}
    comp = experiment_grid("compressive")  # the paper's m / d_model = 8 at width 64, on the stand-in
    assert {(c.m, c.d_model, c.ell, c.embeddings, c.lr, c.steps) for c in comp} == {(512, 64, 4, "stand-in", 1e-3,
                                                                                       40_000)}
    assert len(comp) == 5 * 4 * 5 and sorted({c.seed for c in comp}) == list(range(5))
    pilot = experiment_grid("compressive_pilot")  # seeds the preset does not use
    assert {c.seed for c in pilot} == {100, 101} and {c.lr for c in pilot} == {1e-3, 3e-3} and len(pilot) == 32
    assert {c.ell for c in pilot} == {4, 16}
    with pytest.raises(ValueError, match="overrides"):
        experiment_grid("book", embeddings="stand-in", D_K=3)
    assert {c.ell for c in experiment_grid("book", embeddings="stand-in", ell=16)} == {16}
    smoke = experiment_grid("smoke", embeddings="stand-in", steps=4, eval_interval=2)
    seen = []
    rows = train_runs(smoke, progress=lambda done, total: seen.append((done, total)))
    assert len(rows) == len(smoke) and seen[-1][0] == seen[-1][1]
    assert all(r["embedding_source"] == "stand-in (not GPT-2)" for r in rows)
    assert [(r["D_K"], r["h"], r["seed"]) for r in rows] == [(c.D_K, c.h, c.seed) for c in smoke]


def test_figure_states_the_embedding_source():
    rng = np.random.default_rng(0)
    rows = [{"D_K": dk, "h": h, "seed": s, "test_acc": rng.uniform(), "embedding_source": STAND_IN_SOURCE,
             "m": 256} for dk in (64, 128) for h in (1, 2) for s in range(3)]
    fig = plot_accuracy_vs_dk(pd.DataFrame(rows))
    assert "STAND-IN embeddings, not GPT-2" in fig._suptitle.get_text()
    assert len(fig.axes[0].collections) >= 4  # per-seed points
    real = pd.DataFrame(rows).assign(embedding_source="GPT-2 small (openai-community/gpt2)")
    assert "not GPT-2" not in plot_accuracy_vs_dk(real)._suptitle.get_text()
    mean, lo, hi = t_interval([0.2, 0.4, 0.6])
    assert mean == pytest.approx(0.4) and hi - mean == pytest.approx(4.302653 * 0.2 / 3**0.5, rel=1e-5)
    with pytest.raises(ValueError, match="missing"):
        plot_accuracy_vs_dk(pd.DataFrame({"D_K": [1]}))


@pytest.mark.parametrize("h, D_K, causal", [(1, 8, True), (2, 16, False), (4, 16, True)])
def test_step_flops_counts_every_matmul_of_a_training_step(h, D_K, causal):
    """The closed form against torch's own count of a forward and backward pass (the table frozen, as in training)."""
    cfg = Config(m=40, ell=3, d_model=24, D_K=D_K, h=h, d_ff=8, batch_size=5, causal=causal, embeddings="stand-in")
    params = {k: v.requires_grad_(True) for k, v in init_params([cfg]).items()}
    E = torch.randn(cfg.m + 1, cfg.d_model)
    _, batch = _task([0], m=cfg.m, ell=cfg.ell, n=cfg.batch_size)
    with FlopCounterMode(display=False) as counted:
        block_logits(params, E, batch, cfg).logsumexp(-1).sum().backward()
    assert counted.get_total_flops() == step_flops(cfg)


def test_a_preset_s_cost_adds_the_checks_and_the_test_as_forward_passes():
    """Each run's steps (:func:`step_flops`), then one forward pass (torch's own count) per validation example at
    every check and after the last step, and per test example once."""
    want = 0
    for cfg in experiment_grid("smoke", "stand-in"):
        params, E = init_params([cfg]), torch.randn(cfg.m + 1, cfg.d_model)
        _, one = _task([0], m=cfg.m, ell=cfg.ell, n=1)
        with FlopCounterMode(display=False) as counted, torch.no_grad():
            block_logits(params, E, one, cfg)  # one example, forward only
        checks = cfg.steps // cfg.eval_interval + 1  # every eval_interval steps and after the last
        want += cfg.steps * step_flops(cfg) + (checks * cfg.n_val + cfg.n_test) * counted.get_total_flops()
    smoke = preset_cost("smoke")
    assert smoke.flops == want
    assert (smoke.runs, smoke.steps, smoke.m) == (len(experiment_grid("smoke")), PRESETS["smoke"].steps,
                                                 PRESETS["smoke"].m)
    paper = preset_cost("paper")
    assert (paper.runs, paper.steps, paper.m) == (4 * 4 * 7, 100_000, 6144)  # the protocol's E7 grid


def test_the_e7_bench_times_a_stack_and_projects_a_preset():
    """`rgr bench --gpt2`: a stack's pace through the sweep's own loop, and a preset's minutes from it (a sanity
    check of the arithmetic: the projection is steps x pace plus the checks, at least the steps alone)."""
    import torch

    from rgr.gpt2.bench import project_minutes, time_stack
    from rgr.gpt2.experiment import experiment_grid

    cfg = experiment_grid("smoke", "stand-in")[0]
    pace = time_stack(cfg, runs=2, device=torch.device("cpu"), steps=3, warmup=1)
    assert pace.seconds > 0 and pace.model_steps_per_s == pytest.approx(2 * 3 / pace.seconds)
    minutes = project_minutes("smoke", [pace])
    assert minutes >= 4 * cfg.steps * pace.ms_per_step / 1e3 / 60
