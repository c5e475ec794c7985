"""rgr.experiments.engine.graphed: the CUDA-graph step and its CPU twin train exactly as the eager step."""

from __future__ import annotations

import pytest
import torch

from rgr.experiments.engine.config import RunConfig
from rgr.experiments.engine.graphed import StepProgram
from rgr.experiments.engine.loop import train

TINY = dict(d_model=16, ell=8, check_every=25, patience=2, n_val=64, n_test=128, lr=1e-2)
CUDA = pytest.mark.skipif(not torch.cuda.is_available(),
                          reason="no CUDA device on this machine: the graph capture path needs one "
                                 "(its CPU twin is tested above)")


def _cfgs(model: str, dtype: str) -> list[RunConfig]:
    return [RunConfig(m=16 + 4 * i, seed=i, h=h, d_k=k, model=model, max_steps=n, dtype=dtype, **TINY)
            for i, (h, k, n) in enumerate([(4, 8, 300), (2, 8, 120), (4, 4, 60)])]  # fmt: skip


@pytest.mark.parametrize("model", ["max", "softmax", "value"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_static_buffer_twin_equals_eager(model, dtype):
    """The twin runs the captured body on static buffers, gradients zeroed in place: bit for bit the eager step."""
    cfgs = _cfgs(model, dtype)
    eager = train(cfgs, progress=False, keep_weights=True, cuda_graphs=False)
    twin = train(cfgs, progress=False, keep_weights=True, cuda_graphs=True)
    for a, b in zip(eager, twin):
        assert a == b  # steps, stop reason, curve, test metrics, tau: exactly
        for k in a.weights:
            assert torch.equal(a.weights[k], b.weights[k])


def test_capture_needs_cuda_and_static_buffers():
    w = torch.zeros(2)
    body = lambda x: w.sub_(0.1 * x)
    with pytest.raises(ValueError, match="CUDA"):
        StepProgram(body, [torch.ones(2)], capture=True)
    with pytest.raises(ValueError, match="static"):
        StepProgram(body, [torch.ones(2)], capture=True, static=False)
    prog = StepProgram(body, [torch.ones(2)])
    x = torch.tensor([1.0, 2.0])
    prog.step(x)
    x.zero_()  # the program read its own copy
    assert prog.steps == 1 and torch.equal(w, torch.tensor([-0.1, -0.2]))
    assert torch.equal(prog.static[0], torch.tensor([1.0, 2.0]))


@CUDA
@pytest.mark.parametrize("model", ["max", "softmax", "value"])
def test_cuda_graph_equals_eager_on_gpu(model):
    cfgs = _cfgs(model, "float64")
    eager = train(cfgs, device="cuda", progress=False, keep_weights=True, cuda_graphs=False)
    graphed = train(cfgs, device="cuda", progress=False, keep_weights=True, cuda_graphs=True)
    for a, b in zip(eager, graphed):
        assert (a.steps, a.stop_reason) == (b.steps, b.stop_reason)
        torch.testing.assert_close(a.weights["W_Q"], b.weights["W_Q"], rtol=1e-9, atol=1e-10)


@CUDA
def test_cuda_stack_equals_cpu_stack():
    cfgs = _cfgs("max", "float64")
    for a, b in zip(train(cfgs, device="cuda", progress=False), train(cfgs, device="cpu", progress=False)):
        assert (a.steps, a.stop_reason) == (b.steps, b.stop_reason) and a.tau == pytest.approx(b.tau, abs=1e-8)
