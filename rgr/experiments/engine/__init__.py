"""The stacked engine: R runs of the paper's protocol trained as one tensor program (chapter *permutation sweeps*).

Read it top to bottom (config, stack, loop; then adam and graphed, the two parts the step runs through; README
*Layout*); each module imports only those above it.

Nothing is re-exported here: import a name from the module that defines it.
"""
