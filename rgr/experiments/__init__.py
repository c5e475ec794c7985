"""The experiments wing: many runs of the paper's protocol, planned, trained as stacks, written to data/.

Its modules and subpackages are mapped in :mod:`rgr`'s package map and README *Layout*.

Nothing is re-exported: import a name from the module that defines it.
"""
