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

# one float result per switch of variant_env, hashed, and whether this CPU gives that switch a path to leave
PROBE = r"""
import hashlib, json, os
import numpy as np
import torch
from numpy._core._multiarray_umath import __cpu_features__ as cpu

def h(*arrays):
    return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()[:12]

rng = np.random.default_rng(0)
A, B = rng.standard_normal((300, 300)), rng.standard_normal((300, 300))
x = rng.random(4096) * 100 + 1e-3
x32 = (rng.standard_normal(4096) * 20).astype(np.float32)
T, U = torch.from_numpy(A).float(), torch.from_numpy(B).float()
# numpy: exp and power in float64 have AVX-512 loops only; exp and sin in float32 and tanh in float64 have
# AVX2/FMA3 (x86-64-v3) loops too, so an AVX2-only CPU also leaves its path under X86_V2
numpy_simd = h(np.exp(x / 10), x ** 0.37, np.exp(x32 / 8), np.sin(x32), np.tanh(x / 30))
print(json.dumps(dict(
    openblas=h(A @ B), numpy_simd=numpy_simd, mkl=h((T @ U).numpy()), aten=h(torch.softmax(T, 1).numpy()),
    threads=torch.get_num_threads(),
    # whether a plain run here takes a path above the one each switch forces
    above=dict(openblas=bool(cpu.get("AVX2")) and os.environ.get("OPENBLAS_CORETYPE") != "Prescott",
               mkl=bool(cpu.get("AVX2")) and os.environ.get("MKL_CBWR") != "COMPATIBLE",
               numpy_simd=bool(cpu.get("X86_V3") or cpu.get("X86_V4")) if "X86_V3" in cpu  # numpy >= 2.4
               else bool(cpu.get("AVX2") and cpu.get("FMA3")) and not os.environ.get("NPY_ENABLE_CPU_FEATURES"),
               aten=torch.backends.cpu.get_cpu_capability() != "DEFAULT"),
    capability=torch.backends.cpu.get_cpu_capability())))
"""
SWITCHES = ("openblas", "numpy_simd", "mkl", "aten")


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


@pytest.fixture(scope="module")
def probes() -> tuple[dict[str, object], dict[str, object]]:
    """The probe's results in a plain run and under variant_env, in subprocesses (the switches act at import)."""
    return _probe(dict(os.environ)), _probe(tasks.variant_env())


def test_variant_env_changes_torchs_thread_count(probes):
    plain, varied = probes
    assert varied["threads"] != plain["threads"]  # torch reads OMP_NUM_THREADS


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"), reason="the kernel switches are x86-64's")
@pytest.mark.parametrize("switch", SWITCHES)
def test_each_switch_changes_its_librarys_floating_point_results_here(probes, switch):
    """The check has teeth: under variant_env each library computes the same numbers by another path.

    A switch can only change a path where a plain run here takes one above the path it forces (numpy's
    x86-64-v3 or AVX-512 loops, torch's AVX2 or AVX-512 ATen loops, OpenBLAS's and MKL's AVX2 kernels). On a
    CPU without them (an x86-64-v2 CPU, or a plain run already forced down) the switch has nothing to change:
    that is a property of the machine, so the test skips and says why rather than fails.
    """
    plain, varied = probes
    if not plain["above"][switch]:
        pytest.skip(f"{switch}: a plain run on this CPU already takes the path the switch forces "
                    f"(torch's capability: {plain['capability']})")
    assert plain[switch] != varied[switch], f"variant_env left {switch}'s results unchanged (a switch broken?)"


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
