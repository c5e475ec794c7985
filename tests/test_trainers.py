"""rgr.trainers: every table of data/ has a trainer, and a trainer is its table plus how it trains."""

from __future__ import annotations

import pytest

from rgr import catalog, trainers
from rgr.experiments.runner import Sweepable
from rgr.experiments.trainer import ExperimentTrainer
from rgr.gpt2.training import GPT2Trainer
from rgr.studies.construction_trainer import ConstructionTrainer
from rgr.trainers import trainer


@pytest.mark.parametrize("name", catalog.NAMES)
def test_every_table_has_a_trainer_that_plans_as_the_table(name):
    table, sweep = catalog.get(name), trainer(name)
    assert sweep.table is table and sweep.name == name and sweep.schema == table.schema
    assert sweep.presets == table.presets and sweep.shardable == table.shardable
    runs = table.planned_runs("smoke", None, (0, 1))
    assert sweep.planned_runs("smoke") == runs
    assert [sweep.run_key(c, "smoke") for c in runs] == [table.run_key(c, "smoke") for c in runs]
    groups = sweep.stack_groups(runs, None)
    assert sorted(i for g in groups for i in g) == list(range(len(runs)))


def test_each_kind_of_table_gets_its_own_trainer():
    kinds = {n: type(trainer(n)) for n in ("base", "settled", "gpt2", "constructions", "aot", "pal")}
    peers = kinds.pop("aot"), kinds.pop("pal")  # one run at a time on the re-implemented models, a trainer each
    assert kinds == {"base": ExperimentTrainer, "settled": ExperimentTrainer, "gpt2": GPT2Trainer,
                     "constructions": ConstructionTrainer}
    assert peers[0] is not peers[1] and all(issubclass(k, Sweepable) and k not in kinds.values() for k in peers)


def test_a_table_without_a_trainer_is_named(monkeypatch):
    monkeypatch.setattr(trainers, "get", lambda name: object())  # a table of a kind no trainer knows
    with pytest.raises(ValueError, match="table: no trainer for object"):
        trainer("base")
    with pytest.raises(NotImplementedError, match="does not say how"):
        Sweepable(catalog.get("base")).train_stack([], "smoke", None)
