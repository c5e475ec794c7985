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
checking it (tests/test_transformer.py).

Stacked runs: R runs with the same shapes (configs equal but for ``seed``) are
one program; every parameter has a leading run axis, the loss is the sum over
runs of each run's mean loss, and AdamW works elementwise, so each run's
update is the one it would get alone. Each run's randomness (its derangement,
its initial weights, its training/validation/test examples) comes from its own
seed through :mod:`rgr.task.rng`.

Every choice protocol E7 leaves open is a field of :class:`Config` with its
default documented there.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from ..task.graphs import permutation_graph
from ..task.rng import derive_seed, randint, stream_key, uniform
from .items import ItemTable, StandInSpec, items_available, load_items, stand_in_items

__all__ = [
    "Config",
    "TaskBatch",
    "PRESETS",
    "experiment_grid",
    "item_table",
    "sample_task",
    "embed_inputs",
    "init_params",
    "forward",
    "train_runs",
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
    """One scale of the experiment: the grid (D_K x h x seeds) and the training budget."""

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


PRESETS: dict[str, Preset] = {
    # the paper's protocol (for a GPU): 4 x 4 x 7 = 112 runs of 100,000 steps
    "paper": Preset(m=6144, ell=16, D_K=(64, 128, 256, 512), h=(1, 2, 4, 8), seeds=7, steps=100_000,
                    batch_size=256, eval_interval=1000, n_val=4096, n_test=16384, lr=1e-3),
    # a 2-core CPU in under an hour (48 runs): 256 items, 2,000 steps, 3 seeds, and ell = 4 pairs, not 16;
    # at ell = 16 no configuration leaves the initial loss plateau (loss = ln(m + 1)) within a CPU budget
    "book": Preset(m=256, ell=4, D_K=(64, 128, 256, 512), h=(1, 2, 4, 8), seeds=3, steps=2000, batch_size=64,
                   eval_interval=250, n_val=1024, n_test=2048, lr=3e-3),
    # seconds: the pipeline end to end
    "smoke": Preset(m=64, ell=4, D_K=(64, 128), h=(1, 2), seeds=2, steps=20, batch_size=16, eval_interval=10,
                    n_val=64, n_test=64, lr=3e-3),
}


def experiment_grid(preset: str = "book", embeddings: str = "auto", **overrides) -> list[Config]:
    """The E7 grid of a preset: one Config per (D_K, h, seed), seeds 0..seeds-1.

    ``embeddings="auto"`` resolves to "gpt2" when a real table is available
    without network (:func:`rgr.gpt2.items.items_available`) and to "stand-in"
    otherwise; the choice is written into every config. ``overrides`` replace
    Config fields other than the grid's own (``D_K``, ``h``, ``seed``), e.g.
    ``ell=16`` or ``lr=3e-4``.
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {preset!r}")
    if embeddings not in ("auto", *EMBEDDINGS):
        raise ValueError(f"embeddings must be 'auto' or one of {EMBEDDINGS}, got {embeddings!r}")
    allowed = set(Config.__dataclass_fields__) - {"D_K", "h", "seed", "embeddings"}
    if set(overrides) - allowed:
        raise ValueError(f"overrides must be Config fields in {sorted(allowed)}, got {sorted(set(overrides) - allowed)}")
    if embeddings == "auto":
        embeddings = "gpt2" if items_available() else "stand-in"
    p = PRESETS[preset]
    base = dict(m=p.m, ell=p.ell, steps=p.steps, batch_size=p.batch_size, eval_interval=p.eval_interval, n_val=p.n_val,
                n_test=p.n_test, lr=p.lr, embeddings=embeddings)
    base.update(overrides)
    return [Config(D_K=dk, h=h, seed=s, **base) for dk in p.D_K for h in p.h for s in range(p.seeds)]


# ----------------------------------------------------------------------------- embeddings


def item_table(cfg: Config) -> ItemTable:
    """The config's table: GPT-2's (saved or local copy; an error if neither) or the stand-in."""
    if cfg.embeddings == "stand-in":
        return stand_in_items(cfg.m, StandInSpec(d_model=cfg.d_model))
    table = load_items(cfg.m)
    if table.d_model != cfg.d_model:
        raise ValueError(f"d_model={cfg.d_model} but the GPT-2 table has width {table.d_model}")
    return table


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
        raise ValueError(f"keys must be (R,) and index (R, n) with R={R}; got {tuple(keys.shape)}, {tuple(index.shape)}")
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


def embed_inputs(E: torch.Tensor, batch: TaskBatch) -> torch.Tensor:
    """The input sequence (R, n, ell + 2, d_model): superposed pairs, E[NULL], E[q]. E is (m + 1, d)."""
    R, n, ell, _ = batch.pairs.shape
    null = E.shape[0] - 1
    slots = E[batch.pairs].sum(-2)  # (R, n, ell, d)
    tail = E[torch.stack([torch.full_like(batch.query, null), batch.query], dim=-1)]  # (R, n, 2, d)
    return torch.cat([slots, tail], dim=2)


# ----------------------------------------------------------------------------- the block


_MATRICES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")
_GAINS = ("ln_1", "ln_2", "ln_f")


def init_params(configs: Sequence[Config], device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Stacked parameters (R, ...) of runs with equal shapes; run r's draws depend on its seed alone."""
    c = configs[0]
    if any(k.shape_key() != c.shape_key() for k in configs):
        raise ValueError("configs of one stack must be equal up to their seeds")
    d, D, f = c.d_model, c.D_K, c.d_ff
    shapes = {"W_Q": (d, D), "W_K": (d, D), "W_V": (d, d), "W_O": (d, d), "W_1": (d, f), "W_2": (f, d)}
    scale = {"W_O": 2**-0.5, "W_2": 2**-0.5}  # residual projections, as GPT-2 (1/sqrt(2 * n_layer))
    params: dict[str, list[torch.Tensor]] = {k: [] for k in (*_MATRICES, *_GAINS)}
    for cfg in configs:
        g = torch.Generator().manual_seed(derive_seed(cfg.seed, "init"))
        for k in _MATRICES:
            params[k].append(torch.randn(shapes[k], generator=g) * cfg.init_std * scale.get(k, 1.0))
        for k in _GAINS:
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


def _logits(params: dict[str, torch.Tensor], E: torch.Tensor, batch: TaskBatch, cfg: Config) -> torch.Tensor:
    """(R, n, m + 1) scores of every item and NULL, through the tied frozen table."""
    return forward(params, embed_inputs(E, batch), cfg) @ E.T


# ----------------------------------------------------------------------------- training


def _autocast(device: torch.device):
    """bf16 autocast on CUDA (mixed precision), plain fp32 elsewhere."""
    return torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else nullcontext()


@torch.no_grad()
def _accuracy(params, E, batch: TaskBatch, cfg: Config, device: torch.device, chunk: int) -> torch.Tensor:
    """Per-run accuracy (R,) of argmax over the m + 1 classes, in chunks of examples."""
    correct = torch.zeros(batch.label.shape[0], device=device)
    n = batch.label.shape[1]
    for i in range(0, n, chunk):
        part = batch.take(i, i + chunk)
        with _autocast(device):
            pred = _logits(params, E, part, cfg).argmax(-1)
        correct += (pred == part.label).sum(1)
    return correct / n


def _train_stack(
    configs: list[Config],
    table: ItemTable,
    device: torch.device,
    tick: Callable[[int], None],
    history: list[dict] | None = None,
) -> list[dict]:
    """Train runs with equal shapes as one program; one row per run."""
    c = configs[0]
    R, B = len(configs), c.batch_size
    t0 = time.perf_counter()
    E = table.head(c.m).table(device)  # (m + 1, d), frozen
    if E.shape[1] != c.d_model:
        raise ValueError(f"d_model={c.d_model} but the table has width {E.shape[1]}")
    pi = torch.stack([torch.from_numpy(permutation_graph(c.m, k.seed).pi) for k in configs]).to(device)  # (R, m)
    keys = {s: torch.tensor([stream_key(k.seed, s) for k in configs], device=device) for s in ("train", "val", "test")}

    def fixed_set(stream: str, n: int) -> TaskBatch:
        return sample_task(keys[stream], pi, torch.arange(n, device=device).expand(R, n), c.ell)

    val, test = fixed_set("val", c.n_val), fixed_set("test", c.n_test)
    params = {k: v.requires_grad_() for k, v in init_params(configs, device).items()}
    opt = torch.optim.AdamW(
        [
            {"params": [params[k] for k in _MATRICES], "weight_decay": c.weight_decay},
            {"params": [params[k] for k in _GAINS if k in params], "weight_decay": 0.0},
        ],
        lr=c.lr,
        betas=(c.beta1, c.beta2),
    )
    best = {k: v.detach().clone() for k, v in params.items()}
    best_val = torch.full((R,), -1.0, device=device)
    best_step = torch.zeros(R, dtype=torch.long, device=device)
    window = min(100, c.steps)  # "final train loss": mean over the last `window` steps
    loss_tail = torch.zeros(R, device=device)
    loss_since = torch.zeros(R, device=device)  # summed train loss since the last check
    last_check = 0
    block = 32  # steps whose examples are drawn in one sampler call (the draws do not depend on it)
    for step in range(1, c.steps + 1):
        if (step - 1) % block == 0:
            n = min(block, c.steps - step + 1) * B
            drawn = sample_task(keys["train"], pi, ((step - 1) * B + torch.arange(n, device=device)).expand(R, n), c.ell)
        j = (step - 1) % block * B
        batch = drawn.take(j, j + B)
        with _autocast(device):
            logits = _logits(params, E, batch, c)  # (R, B, m + 1)
        loss = F.cross_entropy(logits.float().flatten(0, 1), batch.label.flatten(), reduction="none")
        per_run = loss.view(R, B).mean(1)  # (R,)
        opt.zero_grad(set_to_none=True)
        per_run.sum().backward()  # runs do not interact: each gets its own gradient
        opt.step()
        if step > c.steps - window:
            loss_tail += per_run.detach() / window
        loss_since += per_run.detach()
        if step % c.eval_interval == 0 or step == c.steps:
            acc = _accuracy(params, E, val, c, device, chunk=max(B, 256))
            if history is not None:
                for r, cfg in enumerate(configs):
                    history.append({"D_K": cfg.D_K, "h": cfg.h, "m": cfg.m, "seed": cfg.seed, "step": step,
                                    "train_loss": float(loss_since[r]) / (step - last_check), "val_acc": float(acc[r])})
            loss_since.zero_()
            last_check = step
            better = acc > best_val  # strict: the earliest best checkpoint is kept
            best_val = torch.where(better, acc, best_val)
            best_step = torch.where(better, torch.full_like(best_step, step), best_step)
            for k, v in params.items():
                best[k] = torch.where(better.view(R, *([1] * (v.dim() - 1))), v.detach(), best[k])
        tick(1)
    test_acc = _accuracy(best, E, test, c, device, chunk=max(B, 256))
    wall = time.perf_counter() - t0
    rows = []
    for r, cfg in enumerate(configs):
        rows.append(
            {
                **asdict(cfg),
                "test_acc": float(test_acc[r]),
                "best_val_acc": float(best_val[r]),
                "best_step": int(best_step[r]),
                "steps_done": int(c.steps),
                "final_train_loss": float(loss_tail[r]),
                "wall_s": wall,
                "stack_size": R,
                "device": str(device),
                "precision": "bf16 autocast" if device.type == "cuda" else "fp32",
                "embedding_source": table.source,
            }
        )
    return rows


def train_runs(
    configs: Sequence[Config],
    device: torch.device | str = "cpu",
    progress: bool | Callable[[int, int], None] = False,
    max_stack: int = 64,
    table: ItemTable | None = None,
    history: list[dict] | None = None,
) -> list[dict]:
    """Train every config; return one row per config, in the given order.

    Configs equal up to their seed are stacked (at most ``max_stack`` per
    program). Each row holds the config's fields and ``test_acc`` (test accuracy
    of the best-validation checkpoint), ``best_val_acc``, ``best_step``,
    ``steps_done``, ``final_train_loss`` (mean over the last 100 steps), ``wall_s``
    (the stack's wall time), ``stack_size``, ``device``, ``precision`` and
    ``embedding_source`` (the table's ``provenance["source"]``; a stand-in says
    "stand-in (not GPT-2)"). ``progress`` is a bool (a tqdm bar over all steps)
    or a callable ``(steps_done, steps_total)``. ``table`` overrides the
    configs' embedding table (for tests and fixtures). When ``history`` is a
    list, every validation check appends one dict per run (``D_K``, ``h``, ``m``,
    ``seed``, ``step``, ``train_loss`` = mean since the previous check, ``val_acc``).
    """
    configs = list(configs)
    if not configs:
        return []
    device = torch.device(device)
    groups: dict[Config, list[int]] = {}
    for i, c in enumerate(configs):
        groups.setdefault(c.shape_key(), []).append(i)
    total = sum(configs[idx[0]].steps * math.ceil(len(idx) / max_stack) for idx in groups.values())
    bar, done = None, 0
    if progress is True:
        from tqdm import tqdm

        bar = tqdm(total=total, desc="E7 runs", unit="step")

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if bar is not None:
            bar.update(n)
        elif callable(progress):
            progress(done, total)

    rows: list[dict | None] = [None] * len(configs)
    tables: dict[tuple, ItemTable] = {}
    try:
        for key, idx in groups.items():
            tk = (key.embeddings, key.d_model)
            if table is not None:
                tab = table
            else:
                if tk not in tables:  # one table per source, large enough for every m asked of it
                    m_max = max(c.m for c in configs if (c.embeddings, c.d_model) == tk)
                    tables[tk] = item_table(replace(key, m=m_max))
                tab = tables[tk]
            for j in range(0, len(idx), max_stack):
                part = idx[j : j + max_stack]
                for i, row in zip(part, _train_stack([configs[i] for i in part], tab, device, tick, history)):
                    rows[i] = row
    finally:
        if bar is not None:
            bar.close()
    return rows  # type: ignore[return-value]
