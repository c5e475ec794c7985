"""Every tasks.py command runs in .venv, installed by uv with pip as the fallback, the same pins either way
(issue 47)."""

from __future__ import annotations

import subprocess

import tasks


def test_uv_reads_the_package_sources_pip_reads():
    env = tasks.uv_env({"PIP_FIND_LINKS": "/wheels", "PIP_INDEX_URL": "https://i", "UV_EXTRA_INDEX_URL": "x",
                        "PIP_EXTRA_INDEX_URL": "y"})
    assert env["UV_FIND_LINKS"] == "/wheels" and env["UV_INDEX_URL"] == "https://i"
    assert env["UV_EXTRA_INDEX_URL"] == "x"  # uv's own setting wins
    assert "UV_FIND_LINKS" not in tasks.uv_env({})


def test_pip_installs_where_uv_fails(monkeypatch, tmp_path):
    ran = []

    def fake_run(*cmd):
        ran.append([str(c) for c in cmd])

    def fail(cmd, **kw):
        raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(tasks, "_run", fake_run)
    monkeypatch.setattr(tasks.subprocess, "run", fail)
    monkeypatch.setattr(tasks, "BIN", tmp_path)
    assert tasks._install() == "pip"
    assert ran[0][-1] == tasks.UV_PIN  # uv was tried first, installed by the venv's pip
    assert ran[-1][1:] == ["-m", "pip", "install", "--quiet", "-e", ".[book,test]"]


def test_the_installers_install_the_same_requirement(monkeypatch, tmp_path):
    ran = []
    monkeypatch.setattr(tasks, "_run", lambda *cmd: ran.append([str(c) for c in cmd]))
    monkeypatch.setattr(tasks.subprocess, "run", lambda cmd, **kw: ran.append(list(cmd)))
    monkeypatch.setattr(tasks, "BIN", tmp_path)
    assert tasks._install() == "uv"
    assert ran[-1][:3] == [str(tmp_path / "uv"), "pip", "install"] and ran[-1][-2:] == ["-e", ".[book,test]"]
    monkeypatch.setenv("RGR_INSTALLER", "pip")
    ran.clear()
    assert tasks._install() == "pip" and ran[-1][-2:] == ["-e", ".[book,test]"]


def test_a_command_outside_the_venv_reruns_itself_there(monkeypatch):
    calls = []
    monkeypatch.setattr(tasks, "in_venv", lambda: False)
    monkeypatch.setattr(tasks, "ensure_env", lambda: calls.append("env"))
    monkeypatch.setattr(tasks.subprocess, "run",
                        lambda cmd, **kw: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0))
    assert tasks.main(["check-site"]) == 0
    assert calls[0] == "env" and calls[1][0] == str(tasks.PY) and calls[1][-1] == "check-site"
