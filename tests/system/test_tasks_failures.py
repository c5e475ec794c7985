"""tasks.py fails in one line, naming the problem (issue 44, case 5; the convention: tests/README.md, "Failures").

Each case used to print a traceback or a wrong diagnosis: a missing chapter blamed on thread counts, a broken
notebook as a JSONDecodeError with no file named, two tracebacks on Ctrl-C, Chromium's error page checked for
figures, ``tag`` rewriting every committed notebook."""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests import ROOT

_spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
tasks = importlib.util.module_from_spec(_spec)
sys.modules["tasks"] = tasks
_spec.loader.exec_module(tasks)


@pytest.fixture
def no_env(monkeypatch):
    """No venv work: a case must fail before it."""
    monkeypatch.setattr(tasks, "ensure_env", lambda: pytest.fail("ensure_env ran before the arguments were checked"))


def _fails_in_one_line(capsys, argv: list[str], rc: int = 2) -> str:
    assert tasks.main(argv) == rc
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("command", ["vary", "fresh", "execute", "tag"])
def test_a_missing_chapter_is_named(capsys, no_env, command):
    err = _fails_in_one_line(capsys, [command, "book/nope.ipynb"])
    assert err == f"tasks.py {command}: no such chapter: book/nope.ipynb"  # not "changed with the thread count"


@pytest.mark.parametrize("command", ["fresh", "execute"])
def test_a_file_that_is_not_a_notebook_is_named(capsys, no_env, command):
    err = _fails_in_one_line(capsys, [command, "README.md"])
    assert err == f"tasks.py {command}: README.md is not a notebook (book/<chapter>.ipynb)"


@pytest.mark.parametrize("damage", ["cut in half", "not UTF-8"])
def test_a_broken_notebook_is_named_with_the_fix(tmp_path, capsys, no_env, damage):
    nb = tmp_path / "softmax.ipynb"
    text = (ROOT / "book" / "softmax.ipynb").read_bytes()
    nb.write_bytes(text[: len(text) // 2] if damage == "cut in half" else b'{"cells": ["\xff\xfe"]}')
    err = _fails_in_one_line(capsys, ["fresh", str(nb)])
    assert err.startswith(f"tasks.py fresh: {nb} is not valid JSON") and err.endswith(f"git checkout {nb}")


def test_fresh_over_every_chapter_names_the_broken_one(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "zz_bad.ipynb"
    bad.write_bytes(b"\xff\xfe not a notebook")
    monkeypatch.setattr(tasks, "chapters", lambda: [bad])
    assert "zz_bad.ipynb is not valid JSON" in _fails_in_one_line(capsys, ["fresh"])


def test_check_site_on_a_page_that_does_not_exist(capsys, no_env):
    err = _fails_in_one_line(capsys, ["check-site", "nope.html"])
    assert err == ("tasks.py check-site: no such page: nope.html; run `python3 tasks.py book` first "
                   "(pages are in _build/html)")


def test_an_unknown_command_is_named(capsys):
    assert tasks.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


def test_a_closed_pipe_ends_quietly(capsys, monkeypatch):
    def tag(paths):
        raise BrokenPipeError

    monkeypatch.setitem(tasks.COMMANDS, "tag", tag)
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        assert tasks.main(["tag"]) == 141


def test_tag_leaves_the_committed_chapters_as_execute_wrote_them():
    """A clean clone stays clean: tag keeps the install cell's metadata (execute's timing) instead of dropping it."""
    source = tasks.install_cell_source(tasks.repository_url())
    changed = [p.name for p in tasks.chapters() if tasks.tag_notebook(copy.deepcopy(tasks.read_nb(p)), source)]
    assert changed == []


def test_ctrl_c_in_execute_says_what_it_left_in_one_line(tmp_path):
    pytest.importorskip("nbclient")
    if not tasks.PY.exists():
        pytest.skip("no .venv (python3 tasks.py test creates it)")
    nb = tmp_path / "slow.ipynb"
    started = tmp_path / "started"  # the cell says when it runs: no guess of how long a kernel takes to start
    nb.write_text(json.dumps({"cells": [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {},
                                         "outputs": [], "source": f"import time\nopen({str(started)!r}, 'w').close()"
                                                                  "\ntime.sleep(120)"}],
                              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                          "language": "python"}},
                              "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    before = nb.read_bytes()
    # Ctrl-C's default disposition, as in a terminal: a test run started as a shell's background job inherits SIGINT
    # *ignored* (POSIX), so would tasks.py, which then waited for the cell (120 s) and this test timed out
    # (test_reliability's Ctrl-C test has the same line)
    proc = subprocess.Popen([sys.executable, str(ROOT / "tasks.py"), "execute", str(nb)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 300
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert started.exists(), "the chapter's cell never ran"
    os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C reaches the whole process group
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    ours = [line for line in err.strip().splitlines() if not line.startswith("[IPKernelApp]")]  # the kernel's log
    assert ours == [f"interrupted; {nb} unchanged"], err
    assert nb.read_bytes() == before
