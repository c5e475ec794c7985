"""Where things are: the repository root and its data/ folder, found from any working directory."""

from __future__ import annotations

from pathlib import Path

__all__ = ["repo_root", "data_dir"]


def repo_root(start: Path | None = None) -> Path:
    """The nearest ancestor holding both ``_config.yml`` and ``rgr/`` (the book's root)."""
    here = (start or Path.cwd()).resolve()
    for p in (here, *here.parents):
        if (p / "_config.yml").is_file() and (p / "rgr").is_dir():
            return p
    pkg = Path(__file__).resolve().parent.parent
    if (pkg / "_config.yml").is_file():
        return pkg
    raise FileNotFoundError(f"no repository root (a folder with _config.yml and rgr/) above {here}")


def data_dir(start: Path | None = None) -> Path:
    """The repository's data/ folder: tables the project's own commands produced."""
    return repo_root(start) / "data"
