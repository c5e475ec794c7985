"""The peers' experiments (chapter *the law beside other capacity results*), each a table of the one runner:

- :mod:`.engine_sweeps` — on rgr's engine: Dana et al.'s design (d_k = d_model, heads swept: the ``peers`` table)
  and one head with d_k swept past the context length (Mahdavi et al.'s contrast: ``dk_saturation``);
- :mod:`.reimplemented` — the tables of the two peers re-implemented: ``aot`` (Dana et al.'s task and attention-only
  layer) and ``pal`` (pal's associative memory, by bisection);
- :mod:`.aot`, :mod:`.pal` — how those two train (through :mod:`rgr.trainers`).

Nothing is re-exported: import a name from the module that defines it.
"""
