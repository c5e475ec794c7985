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
from dataclasses import dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from ..task.rng import derive_seed, randint, uniform

__all__ = [
    "EMBEDDINGS",
    "Config",
    "Preset",
    "PRESETS",
    "TaskBatch",
    "sample_task",
    "MATRICES",
    "GAINS",
    "init_params",
    "forward",
    "block_logits",
    "step_flops",
    "run_flops",
]

EMBEDDINGS = ("gpt2", "stand-in")


@dataclass(frozen=True)
class Config:
    """One run of E7. Fields marked *open* are choices the protocol leaves to us."""

    # --- task
    m: int = 6144  # items: the m most frequent GPT-2 tokens of WikiText-103 (a prefix of the table)
    ell: int = 16  # pairs per example; sequence length ell + 2
    d_model: int = 768  # width of the embedding table (GPT-2 small: 768)
    embeddings: str = "gpt2"  # "gpt2" (data/gpt2_items.npz or RGR_GPT2_DIR) or "stand-in" (NOT GPT-2)
    # --- model
    D_K: int = 256  # total query/key width, split over heads
    h: int = 1  # heads; d_k = D_K / h, d_v = d_model / h
    d_ff: int = 16  # MLP hidden width
    causal: bool = True  # open: GPT's causal mask (cannot change the last position's output; see module doc)
    final_ln: bool = True  # open: GPT-2's final LayerNorm before the tied read-out
    init_std: float = 0.02  # GPT-2 init: N(0, 0.02^2); W_O and W_2 scaled by 1/sqrt(2) (one block, two residual writes)
    # --- training
    steps: int = 100_000  # fixed update budget
    batch_size: int = 256  # open: examples per step and run
    lr: float = 1e-3  # open: AdamW's constant learning rate (the book preset uses 3e-3)
    weight_decay: float = 0.01  # AdamW, on weight matrices only (not on LayerNorm gains, as nanoGPT)
    beta1: float = 0.9  # AdamW
    beta2: float = 0.95  # nanoGPT/GPT-3; escapes the initial loss plateau much sooner than 0.999
    eval_interval: int = 1000  # open: steps between validation checks (also after the last step)
    n_val: int = 4096  # open: validation examples (fixed set, stream "val")
    n_test: int = 16384  # open: test examples (fixed set, stream "test")
    seed: int = 0

    def __post_init__(self) -> None:
        for f in ("m", "ell", "d_model", "D_K", "h", "d_ff", "steps", "batch_size", "eval_interval", "n_val", "n_test"):
            v = getattr(self, f)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{f} must be an integer >= 1, got {v!r}")
        if not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        if self.embeddings not in EMBEDDINGS:
            raise ValueError(f"embeddings must be one of {EMBEDDINGS}, got {self.embeddings!r}")
        if self.D_K % self.h:
            raise ValueError(f"D_K must be a multiple of h (D_K={self.D_K}, h={self.h})")
        if self.d_model % self.h:
            raise ValueError(f"d_model must be a multiple of h (d_model={self.d_model}, h={self.h})")
        if self.ell < 1 or 2 * self.ell + 1 > self.m:
            raise ValueError(f"ell must satisfy 2*ell + 1 <= m (ell={self.ell}, m={self.m})")
        for f in ("lr", "init_std", "weight_decay", "beta1", "beta2"):
            v = getattr(self, f)
            if not isinstance(v, (int, float, np.floating)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{f} must be a finite number, got {v!r}")
        for f in ("lr", "init_std"):
            if not getattr(self, f) > 0:
                raise ValueError(f"{f} must be > 0, got {getattr(self, f)}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        for f in ("beta1", "beta2"):
            if not 0 <= getattr(self, f) < 1:
                raise ValueError(f"{f} must be in [0, 1), got {getattr(self, f)}")

    @property
    def d_k(self) -> int:
        return self.D_K // self.h

    @property
    def d_v(self) -> int:
        return self.d_model // self.h

    def shape_key(self) -> "Config":
        """Runs whose configs agree up to the seed can be stacked."""
        return replace(self, seed=0)


# ----------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class Preset:
    """One scale of the experiment: the grid (variants x D_K x h x seeds) and the training budget.

    ``variants``: Config overrides, each a full copy of the D_K x h x seeds grid (a pilot's candidate settings;
    one empty variant otherwise). Seeds are ``first_seed .. first_seed + seeds - 1``.
    """

    m: int
    ell: int
    D_K: tuple[int, ...]
    h: tuple[int, ...]
    seeds: int
    steps: int
    batch_size: int
    eval_interval: int
    n_val: int
    n_test: int
    lr: float
    d_model: int = 768
    first_seed: int = 0
    variants: tuple[tuple[tuple[str, object], ...], ...] = ((),)
    embeddings: str | None = None  # None: "auto"; "stand-in" where the width is not GPT-2's


PRESETS: dict[str, Preset] = {
    # the paper's protocol (for a GPU): 4 x 4 x 7 = 112 runs of 100,000 steps
    "paper": Preset(m=6144, ell=16, D_K=(64, 128, 256, 512), h=(1, 2, 4, 8), seeds=7, steps=100_000,
                    batch_size=256, eval_interval=1000, n_val=4096, n_test=16384, lr=1e-3),
    # a 2-core CPU in under an hour (48 runs): 256 items, 2,000 steps, 3 seeds, and ell = 4 pairs, not 16;
    # at ell = 16 no configuration leaves the initial loss plateau (loss = ln(m + 1)) within a CPU budget
    "book": Preset(m=256, ell=4, D_K=(64, 128, 256, 512), h=(1, 2, 4, 8), seeds=3, steps=2000, batch_size=64,
                   eval_interval=250, n_val=1024, n_test=2048, lr=3e-3),
    # compressive at CPU scale (issue 46): m / d_model = 8 as in the paper, at width 64 (m = 512), on the stand-in
    # (GPT-2's table is 768 wide); D_K spans the paper's x = D_K d_model / (m ln m) (0.92-7.3 at its 64-512) and one
    # point below: 24-384 give x = 0.48-7.7. lr, steps and ell were settled by the pilot below, by rules declared
    # before it ran (README, "GPT-2 block, compressive preset"), before this preset's first row: ell = 4 (at ell = 16
    # the better rate reached a mean best validation accuracy of 0.39 < 0.5), lr 1e-3 (0.455 against 0.454 at 3e-3,
    # a near tie the rule breaks as written), 40,000 steps (median best check 9,750 of 10,000); batch 64 for the
    # CPU's budget (the paper's is open)
    "compressive": Preset(m=512, ell=4, D_K=(24, 48, 96, 192, 384), h=(1, 2, 4, 8), seeds=5, steps=40_000,
                          batch_size=64, eval_interval=1000, n_val=1024, n_test=4096, lr=1e-3, d_model=64,
                          embeddings="stand-in"),
    # its pilot, on seeds the preset does not use (100, 101): two learning rates at the paper's ell = 16, one head
    # and four, at two budgets; 10,000 steps with a check every 500 (the curves decide the preset's steps). At
    # ell = 16 the better rate's mean best validation accuracy was 0.39, below the declared 0.5, so by the declared
    # rule the pilot is rerun at ell = 4 (the last two variants)
    "compressive_pilot": Preset(m=512, ell=16, D_K=(48, 192), h=(1, 4), seeds=2, steps=10_000, batch_size=64,
                                eval_interval=500, n_val=512, n_test=1024, lr=1e-3, d_model=64, first_seed=100,
                                variants=((("lr", 1e-3),), (("lr", 3e-3),), (("lr", 1e-3), ("ell", 4)),
                                          (("lr", 3e-3), ("ell", 4))), embeddings="stand-in"),
    # seconds: the pipeline end to end
    "smoke": Preset(m=64, ell=4, D_K=(64, 128), h=(1, 2), seeds=2, steps=20, batch_size=16, eval_interval=10,
                    n_val=64, n_test=64, lr=3e-3),
}

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


# ----------------------------------------------------------------------------- cost


def _forward_flops(cfg: Config) -> tuple[int, int]:
    """Matmul FLOPs of one example's forward pass: (the block, the tied read-out); see :func:`step_flops`."""
    d, D, T = cfg.d_model, cfg.D_K, cfg.ell + 2
    block = 2 * d * D + 2 * T * d * D + 2 * T * d * d + 2 * T * D + 2 * T * d + 2 * d * d + 4 * d * cfg.d_ff
    return block, 2 * d * (cfg.m + 1)


def step_flops(cfg: Config) -> int:
    """Matmul FLOPs of one training step of one run (``batch_size`` examples), forward and backward.

    Per example, forward (a multiply-add is 2 FLOPs; T = ell + 2; the query, the attention and the MLP at the last
    position only, as :func:`forward` computes them): Q 2 d D_K, K 2 T d D_K, V 2 T d^2, scores 2 T D_K, their
    values 2 T d, W_O 2 d^2, the MLP 4 d d_ff, the tied read-out 2 d (m + 1). Backward: twice the forward, but once
    for the read-out (the table is frozen: only the block's output needs its gradient). An estimate from the FLOP
    count, not a measurement; LayerNorms, softmax and AdamW are left out.
    """
    block, read_out = _forward_flops(cfg)
    return cfg.batch_size * (3 * block + 2 * read_out)


def run_flops(cfg: Config) -> int:
    """Matmul FLOPs of one whole run: every step (:func:`step_flops`), then forward passes of the validation set at
    every check and after the last step, and of the test set once."""
    checks = cfg.steps // cfg.eval_interval + 1
    return cfg.steps * step_flops(cfg) + (checks * cfg.n_val + cfg.n_test) * sum(_forward_flops(cfg))
