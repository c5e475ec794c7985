"""What chapters touch: loaders, style, one figure module per chapter."""
