"""A stack's training step as a replayable program: a CUDA graph on a GPU, its eager twin elsewhere
(chapter *permutation sweeps*).

A stack step is a few dozen small kernels; on a GPU, launching them one by one
from Python costs more than running them (launch-bound). A stack of fixed
shape (R runs; it changes only when runs stop and the stack is compacted)
does the same step over and over on new contexts, so the step is captured once
in a CUDA graph (``torch.cuda.CUDAGraph``) and replayed: each step copies its
contexts into static input buffers and replays the graph (forward, the
hand-written backward, the fused AdamW update; :func:`rgr.experiments.engine.loop.train_steps`).

The twin (``capture=False`` with ``static=True``; ``train(..., cuda_graphs=True)``
on a CPU) runs the same body on the same static buffers eagerly: the same code,
tested on any machine. Plain eager training (``static=False``, the CPU default)
skips the buffers' copies. A capture happens only after real steps have
warmed the side stream and the libraries' workspaces (as CUDA graphs need),
so no step is taken twice and none out of order: a graphed stack trains as
the eager one (up to float rounding of the GPU's kernels). Never executed in
this project so far: no GPU was available when it was written (the CUDA tests
skip with that reason).
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

import torch

_WARMUP_STEPS = 3  # eager steps on a side stream before a capture, as torch.cuda.graphs asks


class StepProgram:
    """``step(*inputs)``: one optimisation step ``body(*inputs)``, eager or replayed from a CUDA graph.

    ``body`` computes the gradients from the input tensors and updates the
    parameters in place (no host synchronisation, no Python decisions on
    tensor values); ``examples`` fixes the inputs' shapes, dtypes and device.
    With ``capture=True`` (CUDA only) the first ``_WARMUP_STEPS`` steps run
    eagerly on a side stream, then the step is captured and replayed.
    """

    def __init__(
        self,
        body: Callable[..., None],
        examples: Sequence[torch.Tensor],
        capture: bool = False,
        static: bool = True,
    ) -> None:
        device = examples[0].device
        if capture and not static:
            raise ValueError("capture needs static input buffers (static=True)")
        if capture and device.type != "cuda":
            raise ValueError(f"capture needs CUDA tensors, got device {device}")
        self.body, self.capture = body, capture
        self.static = [torch.empty_like(x) for x in examples] if static else None
        self.graph: torch.cuda.CUDAGraph | None = None
        self.steps = 0

    def step(self, *inputs: torch.Tensor) -> None:
        if self.static is None:
            self.body(*inputs)
            self.steps += 1
            return
        for buf, x in zip(self.static, inputs, strict=True):
            buf.copy_(x)
        if not self.capture:
            self.body(*self.static)
        elif self.graph is not None:
            self.graph.replay()
        elif self.steps < _WARMUP_STEPS:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.body(*self.static)
            torch.cuda.current_stream().wait_stream(side)
        else:
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):  # records the kernels; nothing runs yet
                self.body(*self.static)
            self.graph.replay()  # this step
        self.steps += 1


def graphs_enabled(dev: torch.device) -> bool:
    """CUDA graphs on a GPU unless ``RGR_CUDA_GRAPHS=0``; never on a CPU by default."""
    return dev.type == "cuda" and os.environ.get("RGR_CUDA_GRAPHS", "1") != "0"
