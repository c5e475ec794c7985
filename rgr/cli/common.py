"""What every command shares: one-line usage errors naming the parameter, writable-path and device checks."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import torch


class UsageError(ValueError):
    """Bad input to a command; the message names the parameter."""


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not usage + error
        self.exit(2, f"{self.prog}: {message}\n")


def fail(prog: str, message: str, code: int = 2) -> int:
    print(f"{prog}: {' '.join(str(message).split())}" if code == 2 else f"{prog}: {message}", file=sys.stderr)
    return code


def writable_dir(path: Path, param: str) -> Path:
    """``path`` (a folder, possibly not there yet) can be written: checked without writing anything."""
    if path.exists() and not path.is_dir():
        raise UsageError(f"{param}: {path} is a file, not a folder")
    probe = path
    while not probe.exists():
        probe = probe.parent
    try:
        if not probe.is_dir():
            raise OSError(f"{probe} is not a folder")
        with tempfile.TemporaryFile(dir=probe):  # gone when closed; os.access would say yes to root everywhere
            pass
    except OSError as e:  # named by the folder tried, not by the random name of the probe file
        raise UsageError(f"{param}: cannot write to {path} ({e.strerror or e}, in {probe})") from None
    return path


def writable_file(path: Path, param: str) -> Path:
    if path.is_dir() or str(path).endswith(os.sep):
        raise UsageError(f"{param}: {path} is a folder; give a file path")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{param}: cannot write {path}")
    writable_dir(path.parent, param)
    return path


def at_least(value: int | None, low: int, param: str) -> None:
    if value is not None and value < low:
        raise UsageError(f"{param} must be >= {low}, got {value}")


def device(text: str, param: str = "--device") -> torch.device:
    from ..experiments.engine.config import resolve_device

    try:
        return resolve_device(text)
    except ValueError as e:
        raise UsageError(f"{param}: {e}") from None
