"""Chapter *the law beside other capacity results* (book/peers.ipynb) end to end, in a checkout with no sweep tables
and no peer files (data/peers/ absent, as in a fresh clone): from a peers_refit table reduced from synthetic peer
files of a known power it glues that power; from the repository's committed table it glues what that table gives."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from rgr.cli import main
from rgr.results.peers.refit import dana_refit
from tests import ROOT
from tests.glued import prose
from tests.results.peers.synthetic import write_peer_files

pm = pytest.importorskip("papermill")


def _glue(nb: nbformat.NotebookNode) -> dict[str, str]:
    return {o["metadata"]["scrapbook"]["name"]: o["data"].get("application/papermill.record/text/plain", "").strip("'")
            for c in nb.cells for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}


def _run(root: Path, tmp_path: Path) -> dict[str, str]:
    assert not (root / "data" / "peers").exists()  # the chapter cannot read their files: there are none
    out = tmp_path / "peers.ipynb"
    pm.execute_notebook(str(ROOT / "book" / "peers.ipynb"), str(out), parameters=dict(preset="book"),
                        cwd=str(root / "book"), kernel_name="python3", progress_bar=False, log_output=False)
    return _glue(nbformat.read(out, 4))


def test_chapter_glues_the_power_of_synthetic_peer_files(empty_checkout, tmp_path):
    root = empty_checkout
    write_peer_files(tmp_path / "raw", 2.0)
    assert main(["peers-refit", "--peers", str(tmp_path / "raw"), "--out", str(root / "data" / "peers_refit.csv")]) == 0
    shutil.rmtree(tmp_path / "raw")
    glued = _run(root, tmp_path)
    assert glued["best_p"] == "2.00" and glued["slope_below"] == "0.100"
    assert float(glued["rss_ratio"]) > 1  # their own rule prefers p = 2 on a p = 2 table
    # no pal table in the checkout: its smoke preset (d = 4, 6, one seed) stands in, glued by field name
    assert (glued["pal_d_min"], glued["pal_d_max"], glued["pal_seeds"]) == ("4", "6", "0")
    assert glued["pal_budget_lines"] == "0" and float(glued["pal_x_at_d_min"]) > 0


def test_chapter_runs_from_the_committed_table_alone(empty_checkout, tmp_path):
    root = empty_checkout
    shutil.copy(ROOT / "data" / "peers_refit.csv", root / "data")
    fit, exp3, _ = dana_refit(ROOT)
    glued = _run(root, tmp_path)
    assert (glued["best_p"], glued["best_p_low"], glued["best_p_high"]) == tuple(
        map(prose, (fit.best_p, fit.best_p_low, fit.best_p_high)))
    assert glued["slope_below"] == prose(exp3.slope_below, 3) and glued["acc_at_d_head"] == prose(exp3.acc_at_d_head)
