"""A chapter imports what it reads (issue 49): reading tables never loads the engine or a trainer, and the modules
a data chapter's first imports pull in stay few (each is an input of its freshness stamp: book/_ext/rgr_fresh.py).
Measured in a fresh interpreter, from its sys.modules."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests import ROOT

# what training is: the engine's loop and stacks, the runner, every trainer, the peers' and E7's training loops
TRAINING = ("rgr.experiments.engine.loop", "rgr.experiments.engine.stack",
            "rgr.experiments.runner", "rgr.experiments.trainer", "rgr.experiments.peers.trainers",
            "rgr.experiments.sizing.projection", "rgr.trainers", "rgr.gpt2.training", "rgr.gpt2.trainer",
            "rgr.studies.construction_trainer")
# before issue 49 (measured the same way): rgr.catalog 61 modules of rgr, rgr.chapters.loading 66,
# rgr.chapters.style 42; the bounds are half of those or less
MOST = {"rgr.catalog": 30, "rgr.chapters.loading": 33, "rgr.chapters.style": 5}


def rgr_modules(statement: str) -> list[str]:
    """The rgr modules loaded by running ``statement`` in a fresh interpreter."""
    listed = "sorted(n for n in sys.modules if n.split('.')[0] == 'rgr')"
    code = f"{statement}\nimport json, sys\nprint(json.dumps({listed}))"
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    out = run.stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize("module", sorted(MOST))
def test_reading_tables_loads_no_trainer_and_few_modules(module):
    loaded = rgr_modules(f"import {module}")
    assert not set(TRAINING) & set(loaded), f"{module} pulls in {sorted(set(TRAINING) & set(loaded))}"
    assert len(loaded) <= MOST[module], f"{module} loads {len(loaded)} rgr modules (at most {MOST[module]}): {loaded}"


def test_a_table_declared_elsewhere_is_imported_when_read():
    """rgr.catalog loads E7's declaration when E7's table is asked for, not before; still no trainer."""
    assert "rgr.gpt2.experiment" not in rgr_modules("import rgr.catalog")
    loaded = rgr_modules("from rgr import catalog\ncatalog.get('gpt2')")
    assert "rgr.gpt2.experiment" in loaded and not set(TRAINING) & set(loaded)


def test_the_check_can_fail():
    """The trainers' own module does load the engine."""
    assert "rgr.experiments.engine.loop" in rgr_modules("import rgr.trainers")
