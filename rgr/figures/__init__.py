"""Figure functions of the book, one module per chapter group (each figure drawn by one function)."""
