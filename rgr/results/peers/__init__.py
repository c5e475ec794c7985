"""The chapter *the law beside other capacity results* (book/peers.ipynb): its findings (dana: Dana et al.'s rule
re-applied; refit: their tables reduced; sweep: their design on rgr's engine and their two contrary conclusions;
single_head: one head's capacity, pal's memory and d_k past ell; claims: each peer's words, and bits per parameter)."""
