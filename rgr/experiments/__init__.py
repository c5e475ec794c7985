"""The experiments wing: many runs of the paper's protocol, planned, trained as stacks, written to data/.

- :mod:`.engine` — the stacked engine, read top to bottom (config, stack, loop; plus adam, the fused Adam, and
  graphed, the CUDA-graphed step): R runs as one tensor program, each run equal to training it alone;
- :mod:`.planner` — :class:`~.planner.Experiment` (named grids, one per preset, and their table's schema),
  :class:`~.planner.Cell` and :class:`~.planner.Grid` (one preset of an experiment), and the D_K ladder, refinement
  rounds and shards of a grid;
- :mod:`.registry` — experiments E1-E6 by name, each with its grids (presets): what they are (the peers' head sweep,
  the settled extension and the constructions' table are declared in :mod:`.peers.engine_sweeps`, :mod:`.settled`
  and :mod:`.construction_table`, whose rows :mod:`rgr.studies` computes); :mod:`.trainer` — how they train (the
  engine's stacks), imported only through :mod:`rgr.trainers`;
- :mod:`.futility` — the futility-stopping rule and its replay on stored curves;
- :mod:`.reuse` — copying identical runs from other tables instead of retraining them;
- :mod:`.runner` — the one resumable runner of every table (:class:`~.runner.Sweepable`: a table and how its
  stacks train, the one base of every trainer), its local executor, and merging a table's shards;
  :mod:`.cluster` — the Dask executor;
- :mod:`.sizing` — compute sizing: projection and calibration (a sweep's time before it starts), loops and
  bench (``python -m rgr bench``), device_check (one stack on two devices);
- :mod:`.peers` — the peers' experiments (chapter *the law beside other capacity results*): engine_sweeps
  (the peers and dk_saturation tables), reimplemented (the aot and pal tables), and aot and pal (how those two
  train). The constructions' searches live in
  :mod:`rgr.studies`.

Nothing is re-exported: import a name from the module that defines it.
"""
