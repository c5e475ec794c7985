"""Command line: ``python -m rgr <command>``.

Each command lives in its own module and registers itself in ``COMMANDS``
(name -> "module:function" that takes the argv list after the command name).
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module:function taking argv, one-line help)
    "bench": ("rgr.experiments.bench:main", "time the paper's one-run loop against the stacked training engine"),
    "sweep": ("rgr.experiments.sweeps:main", "run an experiment's grid, resumably, into data/ (--list to see them)"),
    "schema": ("rgr.schema_doc:main", "write data/SCHEMA.md from the tables' schemas (--check to compare)"),
    "constructions": ("rgr.experiments.construction_sweeps:main", "smallest D_K of the explicit constructions -> data/constructions.csv"),
    "gpt2": ("rgr.gpt2.items:main", "build data/gpt2_items.npz: GPT-2 embeddings of the E7 items (needs the hub or RGR_GPT2_DIR)"),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m rgr <command> [options]\n\ncommands:")
        for name, (_, help_) in sorted(COMMANDS.items()):
            print(f"  {name:<10} {help_}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"rgr: unknown command {name!r}; choose from {sorted(COMMANDS)}", file=sys.stderr)
        return 2
    mod, fn = COMMANDS[name][0].split(":")
    return int(getattr(importlib.import_module(mod), fn)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
