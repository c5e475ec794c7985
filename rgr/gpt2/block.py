"""One GPT-style pre-LN Transformer block on frozen GPT-2 embeddings (protocol E7; chapter *GPT-2 block*).

The task (matching retrieval with superposed pairs). A run fixes a random
derangement ``pi`` on the m items. An example draws a query q, its successor
s = pi(q), and 2*ell - 1 further items distinct from each other and from q and
s; the 2*ell items {s, others} are split into ell pairs by a uniformly random
perfect matching. The label is y = the partner of s. The input sequence
(length ell + 2, no positional embeddings) is::

    E[a_1] + E[b_1], ..., E[a_ell] + E[b_ell], E[NULL], E[q]

To answer, the block must look up pi(q) (stored in its attention weights),
find the slot that holds s, and read out the other item superposed there.

The model, written the way nanoGPT writes its block::

    x = x + W_O attn(LN_1(x))        # h heads; queries/keys of width d_k = D_K / h, values d_v = d_model / h
    x = x + W_2 gelu(W_1 LN_2(x))    # d_ff = 16
    logits = LN_f(x[-1]) @ E^T       # tied to the frozen table, m + 1 classes (NULL included)

No biases anywhere (LayerNorms have a gain only). Scores are scaled by
1/sqrt(d_k) as in GPT-2.

Only the last position is read out, and in a single block the last position
attends to every position with or without a causal mask. So the mask cannot
change the output, and computing the block at the last position alone is exact;
training does that (``last_only=True``), the full-sequence path exists for
checking it (tests/gpt2/test_block.py).

Training (stacked runs, the grid of a preset) is in :mod:`rgr.gpt2.training`.

Every choice protocol E7 leaves open is a field of :class:`Config` with its
default documented there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from ..task.rng import derive_seed, randint, uniform
from .experiment import Config

# ----------------------------------------------------------------------------- the task


@dataclass(frozen=True)
class TaskBatch:
    """Examples of R runs: pairs (R, n, ell, 2), query/succ/label (R, n), all long."""

    pairs: torch.Tensor
    query: torch.Tensor
    succ: torch.Tensor
    label: torch.Tensor

    def take(self, start: int, stop: int) -> "TaskBatch":
        """Examples start..stop-1 of every run."""
        return TaskBatch(self.pairs[:, start:stop], self.query[:, start:stop], self.succ[:, start:stop],
                         self.label[:, start:stop])


def _kth_outside(u: torch.Tensor, taken: torch.Tensor) -> torch.Tensor:
    """The u-th smallest integer (0-based) not in ``taken``: u (...), taken (..., k), distinct.

    v = u + #{t in taken : t <= v} is iterated from v = u; it rises monotonically
    to the first fixed point, which is the answer (at most k + 1 rounds).
    """
    v = u
    while True:
        nxt = u + (taken <= v.unsqueeze(-1)).sum(-1)
        if torch.equal(nxt, v):
            return v
        v = nxt


def sample_task(keys: torch.Tensor, pi: torch.Tensor, index: torch.Tensor, ell: int) -> TaskBatch:
    """Examples ``index`` (R, n) of R runs with stream keys ``keys`` (R,) and derangements ``pi`` (R, m).

    Example ``index[r, i]`` of run r depends only on (keys[r], pi[r], index[r, i]):
    its 4*ell uniforms are slot 0 -> q; slots 1..2ell-1 -> the further items,
    each uniform among the items not yet taken; slots 2ell..4ell-1 -> random
    keys whose sort order pairs up the 2*ell items (positions 2j, 2j+1 form pair j).
    """
    R, m = pi.shape
    if keys.shape != (R,) or index.dim() != 2 or index.shape[0] != R:
        raise ValueError(f"keys must be (R,) and index (R, n) with R={R}; got {tuple(keys.shape)}, "
                         f"{tuple(index.shape)}")
    if 2 * ell + 1 > m:
        raise ValueError(f"ell must satisfy 2*ell + 1 <= m (ell={ell}, m={m})")
    n = index.shape[1]
    u = uniform(keys, index, 4 * ell)  # (R, n, 4 ell)
    q = randint(u[..., 0], m)  # (R, n)
    s = torch.gather(pi, 1, q)  # (R, n); pi is a derangement, so s != q
    taken = torch.stack([q, s], dim=-1)  # (R, n, 2)
    for t in range(2 * ell - 1):
        k = randint(u[..., 1 + t], m - 2 - t)  # uniform rank among the m - 2 - t free items
        taken = torch.cat([taken, _kth_outside(k, taken).unsqueeze(-1)], dim=-1)
    items = taken[..., 1:]  # (R, n, 2 ell): s first, then the others
    order = torch.argsort(u[..., 2 * ell :], dim=-1)  # (R, n, 2 ell) random permutation
    shuffled = torch.gather(items, 2, order)  # (R, n, 2 ell)
    pos_s = torch.argsort(order, dim=-1)[..., 0]  # where s (items[0]) landed
    label = torch.gather(shuffled, 2, (pos_s ^ 1).unsqueeze(-1)).squeeze(-1)  # its pair partner
    return TaskBatch(pairs=shuffled.view(R, n, ell, 2), query=q, succ=s, label=label)


def _embed_inputs(E: torch.Tensor, batch: TaskBatch) -> torch.Tensor:
    """The input sequence (R, n, ell + 2, d_model): superposed pairs, E[NULL], E[q]. E is (m + 1, d)."""
    R, n, ell, _ = batch.pairs.shape
    null = E.shape[0] - 1
    slots = E[batch.pairs].sum(-2)  # (R, n, ell, d)
    tail = E[torch.stack([torch.full_like(batch.query, null), batch.query], dim=-1)]  # (R, n, 2, d)
    return torch.cat([slots, tail], dim=2)


# ----------------------------------------------------------------------------- the block


MATRICES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")
GAINS = ("ln_1", "ln_2", "ln_f")


def init_params(configs: Sequence[Config], device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Stacked parameters (R, ...) of runs with equal shapes; run r's draws depend on its seed alone."""
    c = configs[0]
    if any(k.shape_key() != c.shape_key() for k in configs):
        raise ValueError("configs of one stack must be equal up to their seeds")
    d, D, f = c.d_model, c.D_K, c.d_ff
    shapes = {"W_Q": (d, D), "W_K": (d, D), "W_V": (d, d), "W_O": (d, d), "W_1": (d, f), "W_2": (f, d)}
    scale = {"W_O": 2**-0.5, "W_2": 2**-0.5}  # residual projections, as GPT-2 (1/sqrt(2 * n_layer))
    params: dict[str, list[torch.Tensor]] = {k: [] for k in (*MATRICES, *GAINS)}
    for cfg in configs:
        g = torch.Generator().manual_seed(derive_seed(cfg.seed, "init"))
        for k in MATRICES:
            params[k].append(torch.randn(shapes[k], generator=g) * cfg.init_std * scale.get(k, 1.0))
        for k in GAINS:
            params[k].append(torch.ones(d))
    out = {k: torch.stack(v).to(device) for k, v in params.items()}
    if not c.final_ln:
        del out["ln_f"]
    return out


def _ln(x: torch.Tensor, gain: torch.Tensor) -> torch.Tensor:
    """LayerNorm over the last axis with a per-run gain (R, d) and no bias; x is (R, ..., d)."""
    y = F.layer_norm(x, x.shape[-1:])
    return y * gain.view(gain.shape[0], *([1] * (x.dim() - 2)), gain.shape[1])


def forward(params: dict[str, torch.Tensor], x: torch.Tensor, cfg: Config, last_only: bool = True) -> torch.Tensor:
    """The block's output at the last position, after the final LN when configured: (R, B, d).

    x is (R, B, T, d). With ``last_only`` the attention and MLP are computed for
    the last position only (exact, see the module doc).
    """
    R, B, T, d = x.shape
    h, dk, dv = cfg.h, cfg.d_k, cfg.d_v
    a = _ln(x, params["ln_1"])  # (R, B, T, d)
    a_q = a[:, :, -1:] if last_only else a  # (R, B, Tq, d)
    Tq = a_q.shape[2]
    q = torch.einsum("rbtd,rdk->rbtk", a_q, params["W_Q"]).view(R, B, Tq, h, dk).transpose(2, 3)  # (R, B, h, Tq, dk)
    k = torch.einsum("rbtd,rdk->rbtk", a, params["W_K"]).view(R, B, T, h, dk).transpose(2, 3)  # (R, B, h, T, dk)
    v = torch.einsum("rbtd,rde->rbte", a, params["W_V"]).view(R, B, T, h, dv).transpose(2, 3)  # (R, B, h, T, dv)
    att = q @ k.transpose(-1, -2) / math.sqrt(dk)  # (R, B, h, Tq, T)
    if cfg.causal:
        qpos = torch.arange(T - Tq, T, device=x.device)
        att = att.masked_fill(torch.arange(T, device=x.device)[None, :] > qpos[:, None], float("-inf"))
    y = att.softmax(-1) @ v  # (R, B, h, Tq, dv)
    y = y.transpose(2, 3).reshape(R, B, Tq, d)  # heads side by side: (R, B, Tq, d)
    z = x[:, :, -Tq:] + torch.einsum("rbtd,rde->rbte", y, params["W_O"])  # (R, B, Tq, d)
    mlp = F.gelu(torch.einsum("rbtd,rdf->rbtf", _ln(z, params["ln_2"]), params["W_1"]))  # (R, B, Tq, d_ff)
    z = z + torch.einsum("rbtf,rfd->rbtd", mlp, params["W_2"])
    out = z[:, :, -1]  # (R, B, d)
    return _ln(out, params["ln_f"]) if cfg.final_ln else out


def block_logits(params: dict[str, torch.Tensor], E: torch.Tensor, batch: TaskBatch, cfg: Config) -> torch.Tensor:
    """(R, n, m + 1) scores of every item and NULL, through the tied frozen table."""
    return forward(params, _embed_inputs(E, batch), cfg) @ E.T
