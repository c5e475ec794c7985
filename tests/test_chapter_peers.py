"""Chapter *the law beside other capacity results* (book/peers.ipynb) end to end, in a checkout with no tables:
with synthetic peer files of a known power in d it glues that power; without them it says they were not fetched."""

from __future__ import annotations

from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest

pm = pytest.importorskip("papermill")

ROOT = Path(__file__).resolve().parent.parent


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "data").mkdir(parents=True)
    (root / "book").mkdir()
    (root / "_config.yml").write_text("title: empty checkout\n")
    (root / "rgr").symlink_to(ROOT / "rgr", target_is_directory=True)
    return root


def _write_peer_files(root: Path, p: float) -> None:
    """Their files' shape: per d in 3..13, accuracy linear in H = 1, 6, ..., 31 with slope 1e-4 d^p, capped at 1."""
    out = root / "data" / "peers"
    out.mkdir()
    H = np.arange(1, 32, 5)
    for d in range(3, 14):
        acc = np.minimum(1.0, 0.02 + 1e-4 * d**p * H)
        pd.DataFrame(dict(acc=acc, para=H, N=50, d=d, d_head=d)).to_csv(out / f"Data_exp_1_{d}.csv", index=False)
    d = np.arange(5, 16)
    pd.DataFrame(dict(acc=np.where(d <= 10, 0.1 * d - 0.2, 0.8), para=20, N=50, d=d, d_head=10)).to_csv(
        out / "Data_exp_3.csv", index=False)


def _glue(nb: nbformat.NotebookNode) -> dict[str, str]:
    return {o["metadata"]["scrapbook"]["name"]: o["data"].get("application/papermill.record/text/plain", "") for c in nb.cells
            for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


def _run(root: Path, tmp_path: Path) -> dict[str, str]:
    out = tmp_path / "peers.ipynb"
    pm.execute_notebook(str(ROOT / "book" / "peers.ipynb"), str(out), parameters=dict(preset="book"),
                        cwd=str(root / "book"), kernel_name="python3", progress_bar=False, log_output=False)
    return _glue(nbformat.read(out, 4))


def test_chapter_glues_the_power_of_synthetic_peer_files(tmp_path):
    root = _checkout(tmp_path)
    _write_peer_files(root, 2.0)
    glued = _run(root, tmp_path)
    assert glued["p_best"].strip("'") == "2.00" and glued["below"].strip("'") == "0.100"
    assert float(glued["rss_ratio"].strip("'")) > 1  # their own rule prefers p = 2 on a p = 2 table


def test_chapter_runs_without_peer_files_and_says_so(tmp_path):
    glued = _run(_checkout(tmp_path), tmp_path)
    assert "not fetched" in glued["p_best"]
