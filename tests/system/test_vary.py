"""tasks.py vary: nbval again under another thread count and other floating-point kernels (issue 33).

How to use it (and reproduce a report from another machine) is in tests/README.md.
"""

from __future__ import annotations

import importlib.util
import json
import os
import platform
import subprocess
import sys

import pytest

from tests import ROOT

_spec = importlib.util.spec_from_file_location("tasks", ROOT / "tasks.py")
tasks = importlib.util.module_from_spec(_spec)
sys.modules["tasks"] = tasks
_spec.loader.exec_module(tasks)

# one float result per switch of variant_env, hashed: each switch must change its own library's result
PROBE = r"""
import hashlib, json
import numpy as np
import torch

def h(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:12]

rng = np.random.default_rng(0)
A, B = rng.standard_normal((300, 300)), rng.standard_normal((300, 300))
x = rng.random(4096) * 100 + 1e-3
T, U = torch.from_numpy(A).float(), torch.from_numpy(B).float()
print(json.dumps(dict(openblas=h(A @ B), numpy_simd=h(np.stack([np.exp(x / 10), x ** 0.37])), mkl=h((T @ U).numpy()),
                      aten=h(torch.softmax(T, 1).numpy()), threads=torch.get_num_threads())))
"""


def _probe(env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_variant_env_changes_threads_and_every_kernel_switch_on_x86():
    env = tasks.variant_env({"PATH": "/bin"}, machine="x86_64", cores=2)
    assert {k: env[k] for k in tasks.VARIED} == dict(
        OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", ATEN_CPU_CAPABILITY="default",
        NPY_ENABLE_CPU_FEATURES="X86_V2", OPENBLAS_CORETYPE="Prescott", MKL_CBWR="COMPATIBLE")
    assert env["PATH"] == "/bin"  # the rest of the environment is kept


def test_variant_env_threads_differ_from_a_plain_run():
    assert tasks.variant_env({}, "x86_64", cores=1)["OMP_NUM_THREADS"] == "2"  # one core: a plain run uses one
    assert tasks.variant_env({"OMP_NUM_THREADS": "1"}, "x86_64", cores=8)["OMP_NUM_THREADS"] == "2"
    assert tasks.variant_env({"OMP_NUM_THREADS": "4"}, "x86_64", cores=8)["OMP_NUM_THREADS"] == "1"


def test_variant_env_elsewhere_changes_threads_and_torch_only():
    env = tasks.variant_env({}, machine="aarch64", cores=4)
    assert env["ATEN_CPU_CAPABILITY"] == "default" and env["OMP_NUM_THREADS"] == "1"
    assert not {"NPY_ENABLE_CPU_FEATURES", "OPENBLAS_CORETYPE", "MKL_CBWR"} & set(env)


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="the kernel switches are x86-64's")
def test_each_switch_changes_its_librarys_floating_point_results_here():
    """The check has teeth: under variant_env every library computes the same numbers by another path.

    A switch whose path is already the plain one here (a CPU without AVX2, say) cannot change anything;
    such a machine is reported by name rather than passed silently.
    """
    import torch
    from numpy._core._multiarray_umath import __cpu_features__

    plain, varied = _probe(dict(os.environ)), _probe(tasks.variant_env())
    assert varied["threads"] != plain["threads"]  # torch reads OMP_NUM_THREADS
    if not (__cpu_features__.get("AVX2") and torch.backends.cpu.get_cpu_capability() != "DEFAULT"):
        pytest.skip(f"this CPU runs the baseline paths already ({torch.backends.cpu.get_cpu_capability()})")
    same = [k for k in ("openblas", "numpy_simd", "mkl", "aten") if plain[k] == varied[k]]
    assert not same, f"variant_env left these results unchanged (a switch no longer works?): {same}"


def test_test_runs_vary_only_after_a_plain_full_run(monkeypatch):
    calls = []
    monkeypatch.setattr(tasks, "ensure_env", lambda: None)
    monkeypatch.setattr(tasks, "_run", lambda *cmd: calls.append("pytest"))
    monkeypatch.setattr(tasks, "vary", lambda nbs: calls.append("vary"))
    tasks.test(["-k", "graphs"])
    assert calls == ["pytest"]
    tasks.test([])
    assert calls == ["pytest", "pytest", "vary"]


def test_vary_chapters_exist():
    assert all((ROOT / p).is_file() for p in tasks.VARY_CHAPTERS)
