"""From tables to the paper's quantities: stats, thresholds, findings."""
