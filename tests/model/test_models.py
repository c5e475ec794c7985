"""rgr.model.qk: the stacked key–query models against rgr.model.attention, and their hand-written backward."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call

from rgr.model.attention import QKWeights, scores
from rgr.model.qk import QKModel, context_scores
from rgr.protocol import MODEL_KINDS

KINDS = ("max", "softmax", "sum")


def _model(kind: str, R: int = 3, d: int = 5, h: int = 3, d_k: int = 2, seed: int = 0) -> QKModel:
    g = torch.Generator().manual_seed(seed)
    W = lambda: torch.randn(R, d, h * d_k, generator=g, dtype=torch.float64)
    W_V = torch.randn(R, d, 4, generator=g, dtype=torch.float64) if kind == "value" else None
    return QKModel(W(), W(), torch.randn(R, generator=g, dtype=torch.float64), h, kind, W_V)


def _contexts(R: int = 3, n: int = 2, ell: int = 4, d: int = 5, seed: int = 1) -> torch.Tensor:
    return torch.randn(R, n, ell, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("kind", KINDS)
def test_forward_matches_attention_scores(kind):
    model, X_C = _model(kind), _contexts()
    ref = scores(X_C, model.weights(), kind)
    torch.testing.assert_close(model(X_C), ref, rtol=1e-12, atol=1e-12)


def test_value_model_scores_by_max():
    model, X_C = _model("value"), _contexts()
    torch.testing.assert_close(model(X_C), scores(X_C, model.weights(), "max"))
    V = model.messages(X_C)
    assert V.shape == (3, 2, 4, 4)
    torch.testing.assert_close(V, torch.einsum("rnld,rdm->rnlm", X_C, model.W_V))
    assert not model.tau.requires_grad and model.W_V is not None


@pytest.mark.parametrize("kind", KINDS)
def test_backward_matches_autograd_of_reference(kind):
    model, X_C = _model(kind), _contexts()
    G = torch.randn(3, 2, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    (model(X_C) * G).sum().backward()
    W_Q = model.W_Q.detach().clone().requires_grad_()
    W_K = model.W_K.detach().clone().requires_grad_()
    split = lambda W: W.view(3, 5, 3, 2).permute(0, 2, 1, 3)  # (R, h, d_model, d_k)
    (scores(X_C, QKWeights(split(W_Q), split(W_K), model.tau.detach()), kind) * G).sum().backward()
    torch.testing.assert_close(model.W_Q.grad, W_Q.grad, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(model.W_K.grad, W_K.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck(kind):
    model, X_C = _model(kind, R=2, d=3, h=2, d_k=2), _contexts(R=2, n=1, ell=3, d=3)
    fn = lambda a, b: functional_call(model, {"W_Q": a, "W_K": b}, (X_C,))  # the forward, with its own backward
    assert torch.autograd.gradcheck(fn, (model.W_Q.detach().requires_grad_(), model.W_K.detach().requires_grad_()))


@pytest.mark.parametrize("kind", KINDS)
def test_gradcheck_masked(kind):
    """With a head masked and per-run softmax scales, the hand-written backward is still the derivative."""
    base, X_C = _model(kind, R=2, d=3, h=2, d_k=2), _contexts(R=2, n=1, ell=3, d=3)
    # run 1 without its second head and with d_k = 1: a head mask and softmax scales (2^-1/2, 1) per run
    model = QKModel(base.W_Q.detach(), base.W_K.detach(), base.tau.detach(), 2, kind,
                    heads=torch.tensor([2, 1]), d_ks=torch.tensor([2, 1]))
    assert model.head_mask is not None and not isinstance(model.scale, float)
    fn = lambda a, b: functional_call(model, {"W_Q": a, "W_K": b}, (X_C,))
    assert torch.autograd.gradcheck(fn, (model.W_Q.detach().requires_grad_(), model.W_K.detach().requires_grad_()))


def _padded(W: torch.Tensor, h: int, d_k: int, H: int, w: int) -> torch.Tensor:
    R, d, _ = W.shape
    out = torch.zeros(R, d, H, w, dtype=W.dtype)
    out[:, :, :h, :d_k] = W.view(R, d, h, d_k)
    return out.view(R, d, H * w)


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_mixed_stack_equals_runs_alone(kind):
    """Runs of shapes (h, d_k) = (3, 2), (1, 4), (2, 3) padded into one (3, 4) stack: each run's scores,
    evaluation tables and gradients equal its own model's; the padding's gradient is exactly zero."""
    shapes, H, w, d = [(3, 2), (1, 4), (2, 3)], 3, 4, 5
    alone = [_model(kind, R=1, d=d, h=h, d_k=k, seed=i) for i, (h, k) in enumerate(shapes)]
    W_V = torch.cat([m.W_V for m in alone]) if kind == "value" else None
    mixed = QKModel(
        torch.cat([_padded(m.W_Q.detach(), h, k, H, w) for m, (h, k) in zip(alone, shapes)]),
        torch.cat([_padded(m.W_K.detach(), h, k, H, w) for m, (h, k) in zip(alone, shapes)]),
        torch.cat([m.tau.detach() for m in alone]), H, kind, W_V,
        heads=torch.tensor([h for h, _ in shapes]), d_ks=torch.tensor([k for _, k in shapes]),
    )  # fmt: skip
    X_C = _contexts(R=3, n=2, ell=4, d=d)
    X = torch.randn(3, 6, d, dtype=torch.float64, generator=torch.Generator().manual_seed(9))
    items = torch.randint(0, 6, (3, 2, 4), generator=torch.Generator().manual_seed(1))
    S = mixed(X_C)
    S.square().sum().backward()
    S_tab = mixed.scores_from_tables(mixed.item_tables(X), items)
    for r, (m, (h, k)) in enumerate(zip(alone, shapes)):
        S_r = m(X_C[r : r + 1])
        S_r.square().sum().backward()
        torch.testing.assert_close(S[r : r + 1], S_r, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(S_tab[r : r + 1],
                                   m.scores_from_tables(m.item_tables(X[r : r + 1]), items[r : r + 1]))
        if kind != "softmax":
            torch.testing.assert_close(mixed.pair_scores(X)[r : r + 1], m.pair_scores(X[r : r + 1]))
        for name in ("W_Q", "W_K"):
            grad = getattr(mixed, name).grad[r].view(d, H, w)
            torch.testing.assert_close(grad[:, :h, :k].reshape(d, h * k), getattr(m, name).grad[0],
                                       rtol=1e-12, atol=1e-12)
            padding = torch.ones(d, H, w, dtype=torch.bool)
            padding[:, :h, :k] = False
            assert bool((grad[padding] == 0).all())  # exactly zero, not merely small
        torch.testing.assert_close(mixed.run_weights(r)[0], m.weights().W_Q[0])


@pytest.mark.parametrize("kind", KINDS)
def test_runs_do_not_mix(kind):
    """Changing run 1's contexts changes neither run 0's scores nor its gradient."""
    X_C = _contexts()
    grads = []
    for shift in (0.0, 3.0):
        model = _model(kind)
        X = X_C.clone()
        X[1] += shift
        S = model(X)
        S.square().sum().backward()
        grads.append((S[0].detach(), model.W_Q.grad[0].clone(), model.W_K.grad[0].clone()))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("kind", (*KINDS, "value"))
def test_scores_from_tables_equal_forward(kind):
    model = _model(kind)
    X = torch.randn(3, 9, 5, dtype=torch.float64)
    items = torch.stack([torch.randperm(9)[:4] for _ in range(6)]).view(3, 2, 4)
    X_C = X[torch.arange(3).view(3, 1, 1), items]
    torch.testing.assert_close(model.scores_from_tables(model.item_tables(X), items), model(X_C).detach())


@pytest.mark.parametrize("kind", ("max", "sum", "value"))
def test_pair_scores_hold_every_context(kind):
    model = _model(kind)
    X = torch.randn(3, 9, 5, dtype=torch.float64)
    items = torch.stack([torch.randperm(9)[:4] for _ in range(6)]).view(3, 2, 4)
    X_C = X[torch.arange(3).view(3, 1, 1), items]
    table = model.pair_scores(X)
    assert table.shape == (3, 9, 9)
    torch.testing.assert_close(context_scores(table, items), model(X_C).detach())


def test_pair_scores_reject_softmax():
    with pytest.raises(ValueError, match="softmax"):
        _model("softmax").pair_scores(torch.zeros(3, 4, 5, dtype=torch.float64))


def test_weights_and_select():
    model = _model("softmax")
    w = model.weights()
    assert (w.h, w.d_k) == (3, 2) and w.W_Q.shape == (3, 3, 5, 2)
    # head k of the per-head view is columns k*d_k .. (k+1)*d_k - 1 of the fused map
    torch.testing.assert_close(w.W_Q[:, 1], model.W_Q.detach()[:, :, 2:4])
    sub = model.select(torch.tensor([2, 0]))
    assert sub.R == 2
    torch.testing.assert_close(sub.W_K, model.W_K.detach()[[2, 0]])
    X_C = _contexts()
    torch.testing.assert_close(sub(X_C[[2, 0]]), model(X_C)[[2, 0]])


def test_predict_edges_uses_each_runs_tau():
    model = _model("max")
    S = torch.zeros(3, 1, 2, 2, dtype=torch.float64)
    with torch.no_grad():
        model.tau.copy_(torch.tensor([-1.0, 1.0, -1.0]))
    assert model.predict_edges(S)[:, 0, 0, 0].tolist() == [True, False, True]


def test_bad_arguments():
    W = torch.zeros(2, 4, 6)
    with pytest.raises(ValueError, match="kind"):
        QKModel(W, W, torch.zeros(2), 2, "mean")
    with pytest.raises(ValueError, match="h must"):
        QKModel(W, W, torch.zeros(2), 4, "max")
    with pytest.raises(ValueError, match="tau"):
        QKModel(W, W, torch.zeros(3), 2, "max")
    with pytest.raises(ValueError, match="W_Q and W_K"):
        QKModel(W, torch.zeros(2, 4, 5), torch.zeros(2), 1, "max")
    with pytest.raises(ValueError, match="W_V"):
        QKModel(W, W, torch.zeros(2), 2, "value")
    with pytest.raises(ValueError, match="W_V"):
        QKModel(W, W, torch.zeros(2), 2, "max", torch.zeros(2, 4, 4))
    with pytest.raises(ValueError, match="messages"):
        QKModel(W, W, torch.zeros(2), 2, "max").messages(torch.zeros(2, 1, 3, 4))
    assert MODEL_KINDS == ("max", "softmax", "sum", "value")
