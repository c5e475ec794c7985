"""Cabannes et al.'s associative memory, re-implemented (chapter *the law beside other capacity results*; their
``AssociativeMemory`` in facebookresearch/pal, ``projects/gradient_descent/model.py``, is read, not copied).

N input tokens with frozen random embeddings e_x in R^d, N output tokens with frozen random output embeddings
u_y in R^d, and one trained d x d matrix W: the score of output y for input x is u_y^T W e_x, a softmax over the N
outputs, cross-entropy. As in their experiments:

- the embeddings are Gaussian vectors scaled to the unit sphere (their ``get_embeddings(norm=True)``), input and
  output tables drawn independently;
- input x's target is output x (their ``f(x) = x``): a bijection, and with independent random tables the same in
  law as a random permutation;
- W starts at zero (their ``random_init=False``).

Where this differs from their experiments, and why: they weight the loss by a Zipf law over inputs and train by
full-batch gradient descent with large steps for 100-1000 iterations (they study its dynamics, not capacity);
here every input weighs the same (capacity is accuracy over all N inputs, as RGR's is over all pairs) and the
optimiser is full-batch Adam (learning rate ``lr``, at most ``steps`` steps); ``optimizer="gd"`` trains with
their full-batch gradient descent instead, to compare the capacity found under each. The loss is convex in W, so the
budget only has to bring training near its minimiser; the chapter checks the capacity against a four times
larger budget. A run stops early once every input is right (checked every ``_CHECK_EVERY`` steps).

The embeddings of a seed are nested in N: the input table comes from numpy's generator 2 seed and the output
table from 2 seed + 1, filled row by row, so the first N rows of the tables for a larger N are the tables for N.
A smaller N then asks a subset of a larger one's constraints (fewer inputs, fewer competing outputs): a W that
stores the larger set stores the smaller, so whether some W stores N is monotone in N for each seed.
"""

from __future__ import annotations

import numpy as np
import torch

from .reimplemented import PalConfig

_CHECK_EVERY = 50  # steps between the accuracy checks that may stop a run early


def embeddings(N: int, d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(E, U): N input and N output embeddings on the unit sphere of R^d, nested in N (module doc)."""
    out = []
    for offset in (0, 1):  # numpy fills row by row from one stream (torch.randn's vectorised path does not)
        v = torch.from_numpy(np.random.default_rng(2 * seed + offset).standard_normal((N, d))).float()
        out.append(v / v.norm(dim=1, keepdim=True))
    return out[0], out[1]


def _pal_logits(E: torch.Tensor, U: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """Scores u_y^T W e_x of every output y (columns) for every input x (rows)."""
    return E @ W @ U.T


def train_pal(cfg: PalConfig) -> dict:
    """Train W on all N inputs at once (module doc); accuracy over the N inputs, final loss, steps taken."""
    E, U = embeddings(cfg.N, cfg.d, cfg.seed)
    target = torch.arange(cfg.N)
    W = torch.zeros(cfg.d, cfg.d, requires_grad=True)
    opt = torch.optim.Adam([W], lr=cfg.lr) if cfg.optimizer == "adam" else torch.optim.SGD([W], lr=cfg.lr)
    step = 0
    while step < cfg.steps:
        logits = _pal_logits(E, U, W)
        if step % _CHECK_EVERY == 0 and bool((logits.argmax(1) == target).all()):
            break
        loss = torch.nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        step += 1
    with torch.no_grad():
        logits = _pal_logits(E, U, W)
        acc = (logits.argmax(1) == target).float().mean().item()
        loss = torch.nn.functional.cross_entropy(logits, target).item()
    return dict(accuracy=float(acc), final_loss=float(loss), steps_run=int(step), n_params=cfg.d * cfg.d)
