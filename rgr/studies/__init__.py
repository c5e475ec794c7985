"""The live studies: what the theory chapters compute while the book builds (issue 31 item 2).

Between ``theory`` (formulas) and ``results`` (which reads tables and never trains): each module here draws,
searches or trains, sized by one frozen preset type per chapter (smoke / book / paper each, picked by
:func:`rgr.protocol.pick_preset`), kept beside the chapter's studies. Its modules: the package map in :mod:`rgr`.
"""
