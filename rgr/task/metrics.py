"""Micro-averaged precision, recall and F1 over all scored pairs (protocol E1); the level a mean F1 must reach
(E2) is :data:`rgr.protocol.F1_TARGET`."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Counts:
    """True/false positives and false negatives per run, shape (R,) each."""

    tp: torch.Tensor
    fp: torch.Tensor
    fn: torch.Tensor

    @property
    def precision(self) -> torch.Tensor:
        return self.tp / (self.tp + self.fp).clamp_min(1)

    @property
    def recall(self) -> torch.Tensor:
        return self.tp / (self.tp + self.fn).clamp_min(1)

    @property
    def f1(self) -> torch.Tensor:
        """Micro-F1 = 2 tp / (2 tp + fp + fn); 1 when there is nothing to find and nothing found."""
        den = 2 * self.tp + self.fp + self.fn
        return torch.where(den > 0, 2 * self.tp / den.clamp_min(1), torch.ones_like(den))


def counts(pred: torch.Tensor, labels: torch.Tensor) -> Counts:
    """Counts per run from boolean predictions and labels of shape (R, ...)."""
    if pred.shape != labels.shape:
        raise ValueError(f"pred and labels must have the same shape, got {tuple(pred.shape)} and {tuple(labels.shape)}")
    p, y = pred.flatten(1), labels.flatten(1)
    return Counts(
        tp=(p & y).sum(1).double(), fp=(p & ~y).sum(1).double(), fn=(~p & y).sum(1).double()
    )

