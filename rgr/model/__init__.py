"""Key-query scoring: reference scores and the stacked model."""
