"""What the chapter *Does it replicate?* computes: one verdict row per claim of the paper.

- the paper's numbers (the only place they are typed) and :data:`~rgr.results.reported.CLAIMS` are
  :mod:`rgr.results.reported`, which the peers and denser-graphs chapters read too;
- :mod:`.verdicts` — the verdict rules and the causes a deviation names;
- :mod:`.seed_bootstrap` — noise intervals from seed resamples, and the paired rule for "X beats Y";
- :mod:`.rows` — what every reader shares (a source, a row, a reading), and which tables the E6 and E7 rows read;
- the readers: :mod:`.sec61` (Sec. 6.1 / App. A.2), :mod:`.fig4` (Fig. 4), :mod:`.extensions` (softmax, value
  channel, GPT-2 block), :mod:`.paper_arithmetic` (the paper's Table 1 against its fits, and the law's constant read
  three ways); App. A.3's rows are read beside the regular table's other readings, in :mod:`rgr.results.denser_graphs`;
- :mod:`.second_readings` — the rows read again with a longer step budget, and without futility stopping;
- :mod:`.registry` — how the chapter gathers its rows and on which presets (:func:`~.registry.chapter_basis`),
  :data:`~.registry.READERS` (claim key -> its reader) and :func:`~.registry.evaluate` (every claim once).

The verdict table's HTML, the bottom line, the frames the chapter shows and its sentences that choose on a verdict
live in :mod:`rgr.chapters` (verdict_table, bottom_line, replication_words):
words and display, not numbers.
"""
