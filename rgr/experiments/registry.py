"""The protocol's experiments E1-E6 as named grids (chapters *permutation sweeps*, *denser graphs*, *softmax*,
*value channel*).

An experiment (``base``, ``lambda8``, ``lambda32``, ``regular``, ``softmax``, ``linear``, ``value``,
``value_long``, ...: a :class:`rgr.experiments.planner.Experiment`) has three presets, each a frozen
:class:`rgr.experiments.planner.Grid`:

- ``paper``: the protocol's grid, seeds and step cutoffs — for a GPU;
- ``book``: the same protocol on a reduced grid (fewer seeds, heads and
  largest points) that a 2-core CPU finishes in about an hour;
- ``smoke``: seconds, for tests.

Two tables of the same kind are declared in their own modules, so a chapter that reads neither loads neither: the
peers' head sweep (:data:`rgr.experiments.peers.engine_sweeps.PEERS`) and the settled-threshold extension
(:data:`rgr.experiments.settled.SETTLED`); :func:`rgr.catalog.get` finds every table by name.

An experiment is what its table is (:class:`rgr.store.Table`): it plans its runs and keys them, and its
rows follow :data:`rgr.experiments.planner.SCHEMA` (the class, its schema and its planning: :mod:`.planner`; here,
the protocol's instances). How its runs train (stacks of the engine) is
:class:`rgr.experiments.trainer.ExperimentTrainer`, which only the runner's callers import.
"""

from __future__ import annotations

from ..protocol import HEADS_ALL
from .planner import SMOKE_FIELDS, Cell, Experiment, Grid, smoke_grid

_FUTILITY = "trend-v1"  # the rule of the paper sweeps still to run (README "Futility stopping", data/SCHEMA.md)


_BASE_CELLS = tuple(Cell(m, d) for m in (64, 128, 256, 512) for d in (16, 32, 64))
_LAMBDA8_CELLS = tuple(Cell(m, m // 8) for m in (128, 256, 512, 1024, 2048, 4096))
_LAMBDA32_CELLS = (Cell(1024, 32), Cell(512, 16))
_REGULAR_CELLS = tuple(Cell(128, 32, r) for r in (1, 2, 4, 8, 16, 32))
_SOFTMAX_CELLS = (Cell(64, 32), Cell(64, 16), Cell(128, 32), Cell(256, 32))
_VALUE_CELLS = (Cell(64, 16), Cell(64, 32))
_LINEAR_CELLS = (Cell(64, 16), Cell(128, 32), Cell(256, 32))
_DESIGN_CHECK_CELLS = (Cell(384, 48),)
# patience above any step cutoff / check interval: a run stops only at its cutoff
_NO_EARLY_STOP: tuple[tuple[str, object], ...] = (("patience", 1_000_000),)
# value_long, a decision run declared before it ran (README "value_long"): E6 at (64, 32), the ladder 64..512 and a
# cutoff of 80,000 steps (the protocol's is 20,000), where value's top budget was cut still improving for h >= 4
_VALUE_LONG = Grid((Cell(64, 32),), (1, 2, 4, 8, 16), (0, 1, 2), dk_min=512, dk_max=512, dk_from=64, refine_rounds=0)

EXPERIMENTS: dict[str, Experiment] = {
    e.name: e
    for e in (
        Experiment(
            "base", "E1, E2", "base grid: m in {64..512} x d_model in {16, 32, 64}, max over heads", "max",
            "permutation",
            {
                "paper": Grid(_BASE_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(_BASE_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 8), Cell(32, 8))),
            },
        ),
        Experiment(
            "lambda8", "E1, E2", "fixed compression m / d_model = 8, m up to 4096", "max", "permutation",
            {
                "paper": Grid(_LAMBDA8_CELLS, HEADS_ALL, tuple(range(10)), few_seeds_from_m=2048, futility=_FUTILITY),
                # the first three diagonal cells are base-grid cells: the book runs the next one
                "book": Grid(_LAMBDA8_CELLS[3:4], (1, 4, 8, 16, 32), (0, 1), dk_factor=2.0, dk_max=1024,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 2), Cell(32, 4))),
            },
            reuse_from=("base",),
        ),
        Experiment(
            "lambda32", "E1, E2", "extreme compression m / d_model = 32", "max", "permutation",
            {
                "paper": Grid(_LAMBDA32_CELLS, HEADS_ALL, tuple(range(10)), futility=_FUTILITY),
                # (512, 16) is a base-grid cell: the book runs (1024, 32)
                "book": Grid(_LAMBDA32_CELLS[:1], (1, 4, 16, 32), (0, 1), dk_factor=2.0, dk_max=2048, refine_rounds=2),
                "smoke": smoke_grid((Cell(32, 1),)),
            },
            reuse_from=("base",),
        ),
        Experiment(
            "regular", "E4", "directed r-regular graphs, m = 128, d_model = 32, r in {1..32}", "max", "regular",
            {
                "paper": Grid(_REGULAR_CELLS, HEADS_ALL, tuple(range(10)), futility=_FUTILITY),
                "book": Grid(_REGULAR_CELLS, (1, 2, 4, 8, 16, 32), (0, 1, 2), dk_factor=2.0, dk_max=4096,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(16, 8, 1), Cell(16, 8, 2))),
            },
        ),
        Experiment(
            "softmax", "E5", "softmax per head, summed over heads", "softmax", "permutation",
            {
                "paper": Grid(_SOFTMAX_CELLS, HEADS_ALL, (0, 1, 2), dk_factor=8.0),
                "book": Grid(_SOFTMAX_CELLS[:3], (1, 2, 4, 8, 16), (0, 1), dk_factor=4.0, dk_max=1024, refine_rounds=1),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
            fixed_cutoff=80_000,
        ),
        Experiment(
            "linear", "ablation", "heads summed without a nonlinearity (not in the paper): one head of width D_K?",
            "sum", "permutation",
            {
                "paper": Grid(_LINEAR_CELLS, (1, 4, 16, 64), tuple(range(10))),
                "book": Grid(_LINEAR_CELLS, (1, 4, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024, refine_rounds=1),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
        ),
        Experiment(
            "value", "E6", "value channel: S_max V_C against the target's message, MSE", "value", "permutation",
            {
                # the ladder reaches 8x the permutation law: at 2x the error was still falling at the top rung
                "paper": Grid(_VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "book": Grid(_VALUE_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=8.0, refine_rounds=0),
                "smoke": smoke_grid((Cell(16, 8),)),
            },
            refine=False,
        ),
        Experiment(
            "design_check", "E1, E2", "held-out cell (384, 48) for the design rule (chapter choosing heads)", "max",
            "permutation",
            {
                "paper": Grid(_DESIGN_CHECK_CELLS, HEADS_ALL, tuple(range(10))),
                "book": Grid(_DESIGN_CHECK_CELLS, (1, 2, 4, 8, 16), (0, 1, 2), dk_factor=2.0, dk_max=1024,
                             refine_rounds=2),
                "smoke": smoke_grid((Cell(24, 6),)),
            },
        ),
        Experiment(
            "value_nostop", "E6 ablation", "value channel, one head, early stopping off: every run trains to the step "
            "cutoff (chapter value channel: is the one-head error's rise with D_K an early stop?)", "value",
            "permutation",
            {
                "paper": Grid(_VALUE_CELLS, (1,), (0, 1, 2), dk_factor=8.0, refine_rounds=0, run_fields=_NO_EARLY_STOP),
                "book": Grid(_VALUE_CELLS, (1,), (0, 1, 2), dk_factor=8.0, refine_rounds=0, run_fields=_NO_EARLY_STOP),
                "smoke": Grid((Cell(16, 8),), (1,), (0, 1), dk_factor=1.0, dk_min=8, dk_max=32, refine_rounds=0,
                              max_steps=100, run_fields=(*SMOKE_FIELDS, *_NO_EARLY_STOP)),
            },
            refine=False,
        ),
        Experiment(
            "value_long", "E6 deviation", "value channel at (64, 32), D_K 64..512, 80,000-step cutoff (the protocol's: "
            "20,000): decides value_d32_best, undecided at value's cutoff (chapter does it replicate?)", "value",
            "permutation",
            {"paper": _VALUE_LONG, "book": _VALUE_LONG, "smoke": smoke_grid((Cell(16, 8),))},
            fixed_cutoff=80_000, refine=False, book_scope="identical to the paper preset (one cell, three seeds)",
        ),
    )
}


def get_experiment(name: str) -> Experiment:
    """The protocol experiment called ``name`` (every table, E7 and constructions included: :func:`rgr.catalog.get`)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}, got {name!r}")
    return EXPERIMENTS[name]
