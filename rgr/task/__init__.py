"""The RGR task: graphs, embeddings, contexts, counter-based randomness, micro-F1."""
