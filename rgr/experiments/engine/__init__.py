"""The stacked engine: R runs of the paper's protocol trained as one tensor program (chapter *permutation sweeps*).

Read it in this order; each module imports only those above it:

- :mod:`.config`: :class:`~.config.RunConfig`, one run fully described, and :class:`~.config.RunResult`;
- :mod:`.device`: the device a caller names, resolved the same way everywhere;
- :mod:`.groups`: which runs may share a stack (:func:`~.groups.stack_groups`);
- :mod:`.adam`: AdamW for parameters with a leading run axis;
- :mod:`.graphed`: a step as a replayable program (a CUDA graph on a GPU);
- :mod:`.stack`: :class:`~.stack.Stack`, the state of R runs, and how it is built from their seeds;
- :mod:`.step`: the losses and one training step of a stack;
- :mod:`.evaluate`: validation checks (early and futility stops) and the test;
- :mod:`.train`: the loop, :func:`~.train.train` and :func:`~.train.train_run`.

Nothing is re-exported here: import a name from the module that defines it.
"""
