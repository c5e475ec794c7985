"""The live studies: what the theory chapters compute while the book builds (issue 31 item 2).

Between ``theory`` (formulas) and ``results`` (which reads tables and never trains): each module here draws,
searches or trains, sized by one frozen preset type per chapter (smoke / book / paper each, picked by
:func:`rgr.protocol.pick_preset`), kept beside the chapter's studies.

- :mod:`.construction_search`: the explicit constructions by name, their success criteria, the smallest widths;
- :mod:`.construction_trainer`: ``data/constructions.csv``'s rows, the smallest D_K per cell, computed as an
  experiment of the one runner (``python -m rgr constructions``; what the table is:
  :mod:`rgr.experiments.construction_table`; chapters read it through :func:`rgr.catalog.load_complete`);
- :mod:`.construction_sweeps`: the constructions chapter's sweeps (success rates, limits, interference) and its
  preset, :class:`~.construction_sweeps.ConstructionsPreset`;
- :mod:`.theory_checks`: Algorithm 1's onset, Proposition 8.4, Corollaries B.7 and B.10, and Algorithm 2 against
  head width, inside and outside Theorem 8.1's bounds;
- :mod:`.softmax_cells`: Algorithm 2 at the trained cells (data/softmax_cells.csv's rows, which chapter *softmax*
  reads);
- :mod:`.lower_bounds`: chapter *lower bounds*: Theorem 9.2's normalised margin of trained models, the seed paper's
  per-context width, and the chapter's preset :class:`~.lower_bounds.LowerBoundsPreset`;
- :mod:`.sampler_check`: the context sampler against its closed forms, the finding the chapter *theory* glues,
  and that chapter's preset :class:`~.sampler_check.TheoryPreset`.
"""
