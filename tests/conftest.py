"""Shared test settings: hypothesis profiles (CI runs the same examples every time)."""

import os
import sys
from pathlib import Path

import pytest
import torch
from hypothesis import settings

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
# one thread: the stacked tiny matmuls gain nothing from more, and a shared 2-core CI box loses a lot
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every pyplot figure a test drew (they pile up across tests: matplotlib warns past 20)."""
    yield
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is not None:
        plt.close("all")


@pytest.fixture
def empty_checkout(tmp_path) -> Path:
    """A checkout with the package but no tables: _config.yml, rgr/ (a link) and an empty data/ (chapter tests)."""
    root = tmp_path / "checkout"
    (root / "data").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: empty checkout\n")
    (root / "rgr").symlink_to(Path(__file__).resolve().parent.parent / "rgr", target_is_directory=True)
    return root


@pytest.fixture(scope="session")
def committed_verdict():
    """The verdict rows of data/, read as the replication chapter reads them (``preset = "auto"``), and the groups
    it loaded: evaluated once per test process (three test files read them)."""
    from rgr.chapters.loading import load_groups
    from rgr.results.replication.registry import GROUPS, evaluate, sources_of

    loaded = load_groups(GROUPS, "auto", "cpu")
    sources, joint = sources_of(loaded)
    return tuple(evaluate(sources, joint)), loaded
