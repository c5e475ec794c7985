"""Sizing the compute before and around a sweep (chapter *permutation sweeps*; README *Performance*).

Its modules (projection, calibration, loops, bench, device_check) are mapped in README *Layout*.

Nothing is re-exported: import a name from the module that defines it.
"""
