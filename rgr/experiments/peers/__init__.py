"""The peers' experiments (chapter *the law beside other capacity results*), each a table of the one runner:

- :mod:`.head_sweep` — Dana et al.'s design on rgr's task (d_k = d_model, heads swept: the ``peers`` table);
- :mod:`.dk_sweep` — one head, d_k swept past the context length (Mahdavi et al.'s contrast: ``dk_saturation``);
- :mod:`.aot`, :mod:`.aot_sweep` — Dana et al.'s task and attention-only layer re-implemented, and its table;
- :mod:`.pal`, :mod:`.pal_sweep` — pal's associative memory re-implemented, and its bisection table (both tables train
  by :mod:`rgr.trainers`).

Nothing is re-exported: import a name from the module that defines it.
"""
