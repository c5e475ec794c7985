"""Dana et al.'s memorisation task and attention-only layer, re-implemented (chapter *the law beside other
capacity results*; their code is read, not copied).

The task: N tokens and a random map f(t1, t2) -> t3 over all N^2 pairs (their trigram distribution with one
possible next token); the layer sees (t1, t2) and predicts t3 at the second position. The layer: trained token
embeddings E (N x d), positional embeddings, H heads of width d_h with causal softmax attention, a residual
connection and a trained unembedding U (N x d). Two ways to give the heads their input (``param``):

- ``"code"`` — as in their ``models.py``: when d != d_h one shared map C (d -> d_h) compresses the residual, the
  positional embedding (width d_h) is added, each head has its own d_h x d_h query, key, value and output maps,
  and one shared map (d_h -> d) decompresses the sum of the heads;
- ``"paper"`` — as in their paper's formalism (and RGR): each head reads the full embedding with its own
  d x d_h query, key and value maps and writes back with its own d_h x d output map; positions of width d.

Training follows their notebook's settings as coded: Adam, batches of 256 pairs drawn uniformly, the learning rate
falling linearly from 0.01 to 5e-4, cross-entropy on t3; accuracy is the argmax accuracy over all N^2 pairs.
"""

from __future__ import annotations

import math

import torch

from .reimplemented import AoTConfig


def _random_map(N: int, generator: torch.Generator) -> torch.Tensor:
    """f as an (N, N) table of next tokens, uniform and independent per pair."""
    return torch.randint(N, (N, N), generator=generator)


def _param(generator: torch.Generator, *shape: int) -> torch.nn.Parameter:
    fan_in = shape[-2] if len(shape) >= 2 else shape[-1]
    return torch.nn.Parameter(torch.randn(*shape, generator=generator) / math.sqrt(fan_in))


class _AoT(torch.nn.Module):
    """One attention-only layer on two-token inputs, heads fed as ``cfg.param`` says (module doc)."""

    def __init__(self, cfg: AoTConfig, generator: torch.Generator) -> None:
        super().__init__()
        self.cfg = cfg
        d, dh, H = cfg.d, cfg.d_h, cfg.H
        self.compress = cfg.param == "code" and d != dh
        d_in = dh if cfg.param == "code" else d  # what each head reads
        self.E = _param(generator, cfg.N, d)
        self.U = _param(generator, cfg.N, d)
        self.P = _param(generator, 2, d_in)
        self.Wq, self.Wk, self.Wv = (_param(generator, H, d_in, dh) for _ in range(3))
        self.Wo = _param(generator, H, dh, d_in)  # "code": each head's d_h x d_h output map
        if self.compress:
            self.C = _param(generator, d, dh)
            self.D = _param(generator, dh, d)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        """Logits over the N tokens for t3, from pairs ``t`` of shape (B, 2)."""
        x = self.E[t]  # (B, 2, d)
        z = (x @ self.C if self.compress else x) + self.P
        q = torch.einsum("bi,hij->bhj", z[:, 1], self.Wq)
        k = torch.einsum("bpi,hij->bhpj", z, self.Wk)
        v = torch.einsum("bpi,hij->bhpj", z, self.Wv)
        att = torch.softmax(torch.einsum("bhj,bhpj->bhp", q, k) / math.sqrt(self.cfg.d_h), dim=-1)
        o = torch.einsum("bhp,bhpj->bhj", att, v)
        out = torch.einsum("bhj,hjo->bo", o, self.Wo)
        if self.compress:
            out = out @ self.D
        return (x[:, 1] + out) @ self.U.T


def train_aot(cfg: AoTConfig) -> dict:
    """Train one run on CPU threads of this process; its accuracy over all N^2 pairs and final loss."""
    g = torch.Generator().manual_seed(cfg.seed)
    table = _random_map(cfg.N, g)
    model = _AoT(cfg, g)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 1 + (cfg.lr_end / cfg.lr - 1) * min(s, cfg.steps - 1) / max(cfg.steps - 1, 1))
    loss = torch.tensor(math.nan)
    for _ in range(cfg.steps):
        t = torch.randint(cfg.N, (cfg.batch_size, 2), generator=g)
        loss = torch.nn.functional.cross_entropy(model(t), table[t[:, 0], t[:, 1]])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        pairs = torch.cartesian_prod(torch.arange(cfg.N), torch.arange(cfg.N))
        acc = (model(pairs).argmax(-1) == table[pairs[:, 0], pairs[:, 1]]).float().mean().item()
    n_params = sum(p.numel() for p in model.parameters())
    return dict(accuracy=float(acc), final_loss=float(loss.item()), n_params=int(n_params))
