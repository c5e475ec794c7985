"""Peers' set-ups re-implemented in this book's own code (chapter *the law beside other capacity results*)."""
