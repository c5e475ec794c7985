"""The peers' experiments (chapter *the law beside other capacity results*), each a table of the one runner.

Its modules (engine_sweeps, reimplemented, aot, pal) are mapped in README *Layout*.

Nothing is re-exported: import a name from the module that defines it.
"""
