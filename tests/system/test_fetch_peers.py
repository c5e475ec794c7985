"""scripts/fetch_peers.py fails in one line, writing nothing (issue 44, case 6): no network, a --git-dir that is
not a repository or does not hold the pinned commit."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import urllib.error

import pytest

from tests import ROOT

_spec = importlib.util.spec_from_file_location("fetch_peers", ROOT / "scripts" / "fetch_peers.py")
fetch_peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fetch_peers)


def _one_line(capsys) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and len(captured.err.strip().splitlines()) == 1, captured.err
    return captured.err.strip()


def test_no_network_is_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    def offline(*a, **k):
        raise urllib.error.URLError(OSError(-3, "Temporary failure in name resolution"))

    monkeypatch.setattr(fetch_peers.urllib.request, "urlopen", offline)
    assert fetch_peers.main(["--out", str(tmp_path / "peers")]) == 1
    err = _one_line(capsys)
    assert "cannot reach raw.githubusercontent.com" in err and "no network?" in err and "--git-dir" in err
    assert not (tmp_path / "peers").exists()


@pytest.mark.parametrize("git_dir", ["nonexistent", "this repository"])
def test_a_git_dir_without_the_pinned_commit_is_one_line(tmp_path, capsys, git_dir):
    if git_dir == "this repository":  # a real repository that does not hold the peer's commit
        git_dir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=ROOT, capture_output=True,
                                 text=True).stdout.strip() or pytest.skip("not a git checkout")
    else:
        git_dir = str(tmp_path / "nonexistent")
    assert fetch_peers.main(["--git-dir", git_dir, "--out", str(tmp_path / "peers")]) == 1
    err = _one_line(capsys)
    assert f"--git-dir {git_dir}: does not hold {fetch_peers.COMMIT[:12]}" in err
    assert not (tmp_path / "peers").exists()


def test_the_script_runs_as_a_command_and_fails_in_one_line(tmp_path):
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "fetch_peers.py"), "--git-dir",
                          str(tmp_path / "none"), "--out", str(tmp_path / "peers")], capture_output=True, text=True)
    assert run.returncode == 1 and len(run.stderr.strip().splitlines()) == 1 and "Traceback" not in run.stderr
