"""Every command's arguments and errors: ``python -m rgr <command>`` (the top of the package).

One convention for all of them: bad input -> one line on stderr naming the
parameter, exit 2, checked before any work and before anything is written
(output folders must be writable before training starts); ``--help`` only
prints; a sweep interrupted with Ctrl-C says what was saved and how to resume
(exit 130); a sweep whose runs failed lists them on stderr (exit 1).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Callable, Sequence

from . import others
from .common import UsageError, fail
from .sweep import sweep

__all__ = ["COMMANDS", "UsageError", "main"]

COMMANDS: dict[str, tuple[Callable[[Sequence[str]], int], str]] = {
    "bench": (others.bench, "time the paper's one-run loop against the stacked training engine"),
    "sweep": (sweep, "run an experiment's grid, resumably, into data/ (--list to see them)"),
    "schema": (others.schema, "write data/SCHEMA.md from the tables' schemas (--check to compare)"),
    "constructions": (others.constructions, "smallest D_K of the explicit constructions -> data/constructions.csv"),
    "gpt2": (others.gpt2,
             "build data/gpt2_items.npz: GPT-2 embeddings of the E7 items (needs the hub or RGR_GPT2_DIR)"),
    "repair": (others.repair, "cut a damaged table back to its intact rows; check or record its seal (--seal)"),
    "peers-refit": (others.peers_refit,
                    "reduce Dana et al.'s fetched tables to data/peers_refit.csv (the peers chapter)"),
    "replay-stopping": (others.replay_stopping,
                        "replay a futility-stopping rule on a table: steps saved, answers changed"),
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m rgr <command> [options]\n\ncommands:")
        for name, (_, help_) in sorted(COMMANDS.items()):
            print(f"  {name:<14} {help_}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        return fail("rgr", f"unknown command {name!r}; choose from {sorted(COMMANDS)}")
    prog = f"rgr {name}"
    try:
        with warnings.catch_warnings():  # restores the warning printer after the command (main runs in tests too)
            warnings.showwarning = _one_line(prog)
            return int(COMMANDS[name][0](rest) or 0)
    except KeyboardInterrupt:  # one the command did not handle itself (e.g. while a cluster starts)
        print(f"{prog}: interrupted; tables are written whole or not at all, so rerun the same command to continue",
              file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`... | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:  # disk full, permissions, a folder where a file should be: one line, tables intact
        where = f" ({e.filename})" if e.filename else ""
        return fail(prog, f"{e.strerror or e}{where}; every table is written atomically, so none was left "
                          "half-written; fix this and rerun the same command", 1)


def _one_line(prog: str) -> Callable[..., None]:
    """A command's warnings as one line on stderr (``rgr <command>: warning: ...``), not Python's two-line form."""

    def show(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001 (warnings' signature)
        print(f"{prog}: warning: {message}", file=file or sys.stderr)

    return show
