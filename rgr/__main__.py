"""Command line: ``python -m rgr <command>``.

Each command lives in its own module and registers itself in ``COMMANDS``
(name -> "module:function" that takes the argv list after the command name).
"""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    # name: (module:function taking argv, one-line help)
    "gpt2": ("rgr.gpt2:main", "build data/gpt2_items.npz: GPT-2 embeddings of the E7 items (needs the hub or RGR_GPT2_DIR)"),
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
