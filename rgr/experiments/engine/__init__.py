"""The stacked engine: R runs of the paper's protocol trained as one tensor program (chapter *permutation sweeps*).

Read it top to bottom; each module imports only those above it:

- :mod:`.config`: what a stack of runs is: :class:`~.config.RunConfig` (one run fully described),
  :class:`~.config.RunResult`, which runs stack (:func:`~.config.stack_groups`) and the device they train on;
- :mod:`.stack`: :class:`~.stack.Stack`, the state of R runs, how it is built from their seeds, and its loss;
- :mod:`.loop`: the step, the validation checks and the test, and the loop (:func:`~.loop.train`);

and the two special parts the step runs through: :mod:`.adam` (AdamW for parameters with a leading run axis,
PyTorch's fused kernel) and :mod:`.graphed` (a step as a replayable program: a CUDA graph on a GPU).

Nothing is re-exported here: import a name from the module that defines it.
"""
