"""Result tables in data/: typed columns, provenance, locked atomic writes, strict loading (ground wing).

A table is a CSV file, one row per run, keyed by ``run_key`` (a hash of the
run's config and preset). Writes merge new rows into the table under an
exclusive lock (``fcntl``) through a temporary file and a rename, so a table on
disk is always complete and two writers never lose each other's rows: an
interrupted sweep loses at most the stack it was training. A sweep holds
:func:`sweep_lock` on its table for its whole run, so a second sweep of the
same table refuses to start and names the holder.

The loader checks every column's presence, type and range, refuses columns the
schema does not know, checks the file's integrity (every line complete) and
recomputes each row's ``run_key`` from its columns (:class:`RowKey`, passed in by
the module that declares the table), so a row edited in place is refused; it
stops with a message that names the file and the problem rather than return
half a table. The package reads; writing is :mod:`rgr.store.write` (:func:`~rgr.store.write.write_rows`,
:func:`~rgr.store.write.replace_table`, :func:`~rgr.store.write.sweep_lock`, ...), imported by the writers
alone, so a chapter that reads tables does not load it. A truncated table is recovered by
``python -m rgr repair <file>`` (:func:`rgr.store.write.repair_table`): every intact row is kept.

Every write also records the table's seal beside it, ``<table>.seal`` (row count, size, sha256, first and last rows:
:mod:`rgr.store.seal`), so a table cut at a line boundary, which still parses, is refused too; a table
written by a writer that does not seal (an rgr from before seals) is read with an :class:`UnsealedTable`
warning until ``python -m rgr repair <file> --seal`` records it.
"""


from __future__ import annotations

from .read import finished_keys, load_table
from .schema import PROVENANCE, Column, RowKey, Schema, TableBusy, TableError, code_version, provenance
from .seal import UnsealedTable, seal_path

__all__ = ["Column", "RowKey", "Schema", "TableError", "TableBusy", "UnsealedTable", "PROVENANCE", "code_version",
           "provenance", "load_table", "finished_keys", "seal_path"]
