"""What the chapter *Does it replicate?* computes: one verdict row per claim of the paper.

- :mod:`.reported` — the paper's numbers (the only place they are typed) and :data:`~.reported.CLAIMS`;
- :mod:`.registry` — :data:`~.registry.READERS`, claim key -> the function that reads that row;
- the readers: :mod:`.sec61` (Sec. 6.1 / App. A.2), :mod:`.fig4` (Fig. 4 and App. A.3), :mod:`.extensions`
  (softmax, value channel, GPT-2 block), on the shared rows of :mod:`.rows`;
- :mod:`.table` — :func:`~.table.evaluate` (every claim once) and the chapter's words about the rows;
- :mod:`.verdicts` (the verdict rules), :mod:`.seed_bootstrap` (noise intervals), :mod:`.paper_arithmetic`
  (the paper's Table 1 against its fits), :mod:`.law_constants` (the law's constant read three ways),
  :mod:`.budget` (second readings with a longer step budget), :mod:`.value_decision` (the E6 decision run),
  :mod:`.sources` (how the chapter gathers its rows).

The verdict table's HTML, the bottom line and the frames the chapter shows live in :mod:`rgr.chapters`
(verdict_table, bottom_line, glossary_links, replication_frames): words and display, not numbers.
"""
