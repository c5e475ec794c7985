"""The E7 block: items, the transformer block, its experiment."""
