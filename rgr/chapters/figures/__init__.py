"""Figures of the book: one function per figure, each taking data and returning a Figure.

Modules follow the chapters (``theory``, ...); every function sets the book's
style through :func:`rgr.chapters.style.set_style`.
"""
