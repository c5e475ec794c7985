"""What the chapter *Choosing heads* computes: the design rule fitted on the base grid (:mod:`.design`) and its
checks on held-out cells, an F1 prediction and real layers (:mod:`.checks`)."""
