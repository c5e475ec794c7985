"""AdamW with weight decay 0 for a stack, straight through PyTorch's fused kernel (chapter *permutation sweeps*).

The same update as ``torch.optim.AdamW(..., weight_decay=0, fused=True)``
(the same kernel, ``torch._fused_adamw_``, with the same float32 step
counters), without ``torch.optim``'s per-step Python (parameter groups, state
look-ups, hooks), which costs more than the update itself in a small stack.
The update is elementwise, so runs never mix; a parameter whose gradient is
zero from the start (a mixed stack's padding) stays exactly where it is.
"""

from __future__ import annotations

from typing import Sequence

import torch


class StackAdam:
    """Adam(W) state and update for a list of parameters with a leading run axis."""

    def __init__(self, params: Sequence[torch.Tensor], lr: float) -> None:
        if not params:
            raise ValueError("params must be a non-empty list")
        self.params = list(params)
        self.lr = float(lr)
        self.exp_avg = [torch.zeros_like(p) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p) for p in self.params]
        # one counter per parameter, on its device (as fused AdamW keeps them; a CUDA graph can replay them)
        self.steps = [torch.zeros((), dtype=torch.float32, device=p.device) for p in self.params]

    @torch.no_grad()
    def step(self) -> None:
        """One update from the parameters' ``.grad``, with the protocol's betas (0.9, 0.999) and eps 1e-8."""
        torch._foreach_add_(self.steps, 1)
        torch._fused_adamw_(
            self.params, [p.grad for p in self.params], self.exp_avg, self.exp_avg_sq, [], self.steps,
            amsgrad=False, lr=self.lr, beta1=0.9, beta2=0.999, weight_decay=0.0, eps=1e-8,
            maximize=False, grad_scale=None, found_inf=None,
        )  # fmt: skip

    def carry(self, old: "StackAdam", idx: torch.Tensor) -> None:
        """Take ``old``'s state for runs ``idx`` (the moments are per run; the step count is the stack's)."""
        for i in range(len(self.params)):
            self.exp_avg[i] = old.exp_avg[i][idx].clone()
            self.exp_avg_sq[i] = old.exp_avg_sq[i][idx].clone()
            self.steps[i] = old.steps[i].clone()
