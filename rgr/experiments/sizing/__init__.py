"""Sizing the compute before and around a sweep (chapter *permutation sweeps*; README *Performance*):

- :mod:`.projection` — runs, model-steps and wall time of a sweep before it starts; :mod:`.calibration` — the cost
  model behind it, timed here or fitted to a table's finished stacks;
- :mod:`.loops` — one-run loops the engine is measured against; :mod:`.bench` — ``python -m rgr bench``;
- :mod:`.device_check` — one stack trained on two devices (CPU, GPU) and compared.

Nothing is re-exported: import a name from the module that defines it.
"""
