"""rgr — Relational Graph Recognition.

The importable package behind the book "A Capacity-Based Rationale for
Multi-Head Attention" (Adler, arXiv:2509.22840). Chapters call it; it holds
the plumbing in wings that follow the data flow; a module imports only from its own wing or
one below it (tests/system/test_style.py checks it):

- ground: :mod:`rgr.store` (typed tables: what a table of data/ is, where it lives, the strict loader (shards
  merged), locked atomic writes, seals (a cut table is refused), repair, provenance), :mod:`rgr.paths` (where
  things are; files replaced whole), :mod:`rgr.protocol` (the numbers every wing shares: head counts, model
  kinds, the GPU peak of estimates);
- :mod:`rgr.task` — graphs, embeddings (and E6's frozen value projection), contexts (a run's task, built from
  its seed, and the sampler), rng (counter-based: a run's draws depend on its seed alone, never on its stack),
  metrics (the F1 target);
- :mod:`rgr.model` — key–query scoring (max over heads, softmax summed, linear sum,
  value channel) and the stacked QK model;
- :mod:`rgr.theory` — template (the construction template, its matching blocks by colouring) and constructions
  (the paper's algorithms), bounds (and the scaling laws), checks, theorem81 (Theorem 8.1's constants made
  explicit);
- :mod:`rgr.experiments` — engine (the stacked engine, read top to bottom: config, stack, loop; plus adam and
  graphed), planner (``Experiment``: named grids and their table's schema; ``Cell``, ``Grid``; D_K ladder,
  refinement rounds, shards), registry (E1-E6 by name: what they are), trainer (how they train), futility (the
  stopping rule) and reuse (runs copied from other tables), construction_table (what ``data/constructions.csv``
  is), softmax_cells_table (what ``data/softmax_cells.csv`` is), runner (jobs, executors, ``run_sweep`` for
  every experiment), cluster (Dask); sizing/ (projection and calibration: a sweep's runs, model-steps and time
  before it starts; loops: one-run loops; bench; device_check)
  and peers/ (the peers' experiments: engine_sweeps, reimplemented, aot, pal);
- :mod:`rgr.studies` — what the theory chapters compute while the book builds, sized by one frozen preset
  type per chapter (presets): construction_search (constructions by name, smallest widths),
  construction_trainer (``data/constructions.csv``'s rows computed), construction_sweeps, theory_checks
  (Algorithm 2 against d_k among them),
  softmax_cells (Algorithm 2 at trained cells: ``data/softmax_cells.csv``'s rows computed), lower_bounds
  (Theorem 9.2 on trained models, the per-context width), sampler_check;
- :mod:`rgr.gpt2` — table (the item table, the stand-in), sources (checkpoint, tokenizer, token counts),
  items (building, saving, loading GPT-2's table), block (the E7 task and model), experiment (what E7's table
  is: grid, keys, a preset's cost), training (stacked runs, and E7's trainer for the runner), bench (a preset's
  cost at the pace measured here);
- :mod:`rgr.catalog` — every table of data/ by name (``catalog.load(name, preset)``), what it is, no trainer;
  :mod:`rgr.trainers` — each table's trainer, for the command line;
- :mod:`rgr.results` — t-intervals, D_K*, h*, law fits (thresholds); per chapter X its findings as a frozen
  result in ``results.X`` (theory, constructions, lower_bounds, permutation_sweeps, denser_graphs, softmax,
  value_channel, gpt2_block; ``shown``: which cells a figure shows), packages where a chapter needs several
  modules: choosing_heads (design rule, checks, readings: what its prose pastes), peers (dana, refit, sweep,
  single_head, claims), reported (the paper's numbers) and replication (registry: claim key -> reader,
  ``evaluate``; readers sec61 / fig4 / extensions / paper_arithmetic on shared rows; verdicts, seed_bootstrap
  (noise intervals), second_readings (longer-budget readings));
  it reads tables and never trains;
- :mod:`rgr.chapters` — loading (``load_experiment``), params, style, display, prose (``glue_finding``: a
  chapter glues its finding by field name), the verdict table's HTML, bottom line, glossary links and display
  frames (verdict_table, bottom_line), and one figure module per chapter
  (``figures.softmax`` for book/softmax.ipynb, ...);
- commands: :mod:`rgr.cli` (``python -m rgr <command>``, via :mod:`rgr.__main__`), :mod:`rgr.schema_doc`.
"""

__version__ = "0.4.0"
