"""Training engine, experiment registry, runner, executors, bench."""
