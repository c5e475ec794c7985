"""The project's tests, laid out like the package (``tests/<wing>/``), with system tests (chapters, site, PDF,
CLI processes, house rules) apart in ``tests/system/``. See tests/README.md."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository root
