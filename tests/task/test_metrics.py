"""Micro-F1 over pairs (rgr.task.metrics): counts against a hand count, F1 against its closed form; the target
(rgr.protocol)."""

import pytest
import torch

from rgr.protocol import F1_TARGET, reaches_target
from rgr.task.metrics import Counts, counts


def test_counts_and_f1_match_a_hand_count_per_run():
    pred = torch.tensor([[[True, False], [True, True]], [[False, False], [False, False]]])
    labels = torch.tensor([[[True, True], [False, True]], [[False, False], [False, False]]])
    c = counts(pred, labels)
    assert c.tp.tolist() == [2, 0] and c.fp.tolist() == [1, 0] and c.fn.tolist() == [1, 0]
    assert c.f1[0].item() == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))  # 2 tp / (2 tp + fp + fn)
    assert c.precision[0].item() == pytest.approx(2 / 3) and c.recall[0].item() == pytest.approx(2 / 3)
    assert c.f1[1].item() == 1.0  # nothing to find and nothing found


def test_counts_add_up_over_batches_to_the_micro_average():
    g = torch.Generator().manual_seed(0)
    pred, labels = (torch.rand(3, 8, 5, generator=g) > 0.5 for _ in range(2))
    whole = counts(pred, labels)
    a, b = counts(pred[:, :4], labels[:, :4]), counts(pred[:, 4:], labels[:, 4:])
    parts = Counts(a.tp + b.tp, a.fp + b.fp, a.fn + b.fn)
    assert torch.equal(whole.f1, parts.f1)


def test_the_target_forgives_round_off_only():
    assert reaches_target(sum([F1_TARGET] * 3) / 3) and not reaches_target(F1_TARGET - 1e-6)


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="pred and labels"):
        counts(torch.zeros(2, 3, dtype=torch.bool), torch.zeros(2, 4, dtype=torch.bool))
