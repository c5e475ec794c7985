"""rgr — Relational Graph Recognition.

The importable package behind the book "A Capacity-Based Rationale for
Multi-Head Attention" (Adler, arXiv:2509.22840). Chapters call it; it holds
the plumbing, module by module in the order data flows:

- :mod:`rgr.task.graphs`, :mod:`rgr.task.embeddings`, :mod:`rgr.task.contexts` — the RGR task
  (chapter *theory*); :mod:`rgr.task.rng` — counter-based randomness, so a run's
  draws depend on its seed alone, never on which runs share its tensor program;
- :mod:`rgr.model.attention`, :mod:`rgr.model.qk`, :mod:`rgr.task.metrics` — key–query
  scoring (max over heads, softmax summed, linear sum, value channel) and micro-F1;
- :mod:`rgr.experiments.train` — the paper's protocol with many runs stacked in one program
  (:mod:`~rgr.experiments.config` the run's description, :mod:`~rgr.experiments.stacking` which runs
  stack and how, :mod:`~rgr.experiments.step` the step and losses, :mod:`~rgr.experiments.adam` the
  update, :mod:`~rgr.experiments.evaluate` checks and test, :mod:`~rgr.experiments.graphed` the CUDA
  graph); :mod:`rgr.experiments.baselines` — one-run loops; :mod:`rgr.experiments.bench` —
  ``python -m rgr bench``; :mod:`rgr.experiments.projection` — runs, model-steps and wall time of a
  sweep before it starts;
- :mod:`rgr.experiments.sweeps`, :mod:`rgr.store`, :mod:`rgr.experiments.cluster` — experiment grids and
  presets, the resumable runner writing data/ with provenance, Dask scale-out
  (``python -m rgr sweep``);
- :mod:`rgr.results.stats`, :mod:`rgr.results.thresholds` — t-intervals, D_K*, h*, law fits;
- :mod:`rgr.chapters.figures`, :mod:`rgr.chapters.style`, :mod:`rgr.chapters.loading` — one function per
  figure, one colour per head count, and the chapters' data loading.
"""

__version__ = "0.1.0"
