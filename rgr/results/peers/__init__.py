"""The chapter *the law beside other capacity results* (book/peers.ipynb): its findings, one module per peer
result (dana: Dana et al.'s rule re-applied; refit: their tables reduced; sweep: their design on rgr's engine;
aot: their two contrary conclusions; pal: the one-head associative memory)."""
