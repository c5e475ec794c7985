"""Issue 49: the chapters' cell sources that name a moved rgr module, updated (run once after merging issue-49,
before re-executing the chapters: `python scripts/_issue49_nb_edits.py`).

Idempotent: an edit already made is skipped; a pattern found neither before nor after its edit stops the script
with the notebook and the pattern, before anything is written. Only cell sources change (no outputs, no metadata).
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

BOOK = Path(__file__).resolve().parents[1] / "book"

# (chapter, text before, text after): exact substrings of cell sources
EDITS: list[tuple[str, str, str]] = [
    # experiment_grid and preset_cost moved from rgr.gpt2.training (the trainer) to rgr.gpt2.experiment (the table)
    ("gpt2_block.ipynb", "from rgr.gpt2.training import preset_cost", "from rgr.gpt2.experiment import preset_cost"),
    ("gpt2_block.ipynb", "`rgr.gpt2.training.preset_cost`", "`rgr.gpt2.experiment.preset_cost`"),
    # reading a lease log's bench moved from rgr.gpt2.bench (which times the block) to rgr.gpt2.experiment
    ("gpt2_block.ipynb", "from rgr.gpt2.bench import latest_lease_bench",
     "from rgr.gpt2.experiment import latest_lease_bench"),
    # the peers' experiments moved to rgr.experiments.peers (markdown cells name them)
    ("peers.ipynb", "re-implemented in `rgr.experiments.aot` (", "re-implemented in `rgr.experiments.peers.aot` ("),
    ("peers.ipynb", "`rgr.experiments.pal` re-implements", "`rgr.experiments.peers.pal` re-implements"),
    ("peers.ipynb", "(`rgr.experiments.dk_sweep`)", "(`rgr.experiments.peers.dk_sweep`)"),
    # the claim registry dispatches: READERS maps a key to the reader of its group, which evaluate walks
    ("replication.ipynb", "one per claim key, listed in\n  `rgr.results.replication.registry.READERS` beside the "
     "paper's value (a verdict row's key names its reader there:\n  `READERS[\"law_slope_pre\"]` is `sec61.law_rows`); "
     "`rgr.results.replication.table.evaluate` reads them all.",
     "listed per claim key in\n  `rgr.results.replication.registry.READERS` beside the paper's value (a verdict "
     "row's key names its reader there:\n  `READERS[\"law_slope_pre\"]` is `registry.sec61_claims`, whose row "
     "`sec61.law_rows` makes);\n  `rgr.results.replication.table.evaluate` walks them in the claims' order."),
    # DEFAULT_C (and dk_from_C) moved from rgr.theory.constructions to rgr.theory.laws
    ("constructions.ipynb", "from rgr.theory.constructions import DEFAULT_C",
     "from rgr.theory.laws import DEFAULT_C"),
]


def apply(edits: list[tuple[str, str, str]] = EDITS, book: Path = BOOK) -> list[str]:
    """Make the edits; what was done, one line each. Raises SystemExit naming a pattern found nowhere."""
    done, books = [], {}
    for name, old, new in edits:
        nb = books.setdefault(name, nbformat.read(book / name, as_version=4))
        hits = [c for c in nb.cells if old in c.source]
        if hits:
            for c in hits:
                c.source = c.source.replace(old, new)
            done.append(f"{name}: {old!r} -> {new!r} in {len(hits)} cell(s)")
        elif any(new in c.source for c in nb.cells):
            done.append(f"{name}: already {new!r}")
        else:
            raise SystemExit(f"{name}: neither {old!r} nor {new!r} is in any cell; nothing written")
    for name, nb in books.items():
        nbformat.write(nb, book / name)
    return done


if __name__ == "__main__":
    for line in apply():
        print(line)
    sys.exit(0)
