"""rgr — Relational Graph Recognition.

The importable package behind the book "A Capacity-Based Rationale for
Multi-Head Attention" (Adler, arXiv:2509.22840). Chapters call it; it holds
the plumbing:

- :mod:`rgr.graphs`, :mod:`rgr.embeddings`, :mod:`rgr.contexts` — the RGR task
  (book chapter *theory*);
- :mod:`rgr.rng` — a counter-based random stream, so a run's contexts depend on
  its seed alone, never on which other runs share its tensor program.
"""

__version__ = "0.1.0"
