"""Constructions, edge colouring, bounds and their checks."""
