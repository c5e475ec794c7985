"""``python -m rgr <command>``: dispatches to :mod:`rgr.cli`."""

from __future__ import annotations

import sys

from .cli import COMMANDS, main

__all__ = ["COMMANDS", "main"]

if __name__ == "__main__":
    sys.exit(main())
