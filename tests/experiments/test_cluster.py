"""Sweeps on a Dask cluster: same table as a local sweep, nothing lost to dead workers or clients, failures reported.

One real LocalCluster (two worker processes of one thread, each declaring a
GPU resource so that the one-GPU-per-stack path is taken; the stacks train on
the CPU) serves the module. Faults are injected through the executor's
``work`` function (a slow or failing wrapper of ``run_job``) and by
killing worker processes.
"""

import functools
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dask
import pandas as pd
import pytest
import torch
from distributed import Client, LocalCluster

from rgr import catalog, cli
from rgr.experiments import runner
from rgr.experiments import trainer as experiment_trainer
from rgr.experiments.cluster import DaskExecutor
from rgr.experiments.engine.config import stack_groups
from rgr.experiments.planner import run_key
from rgr.experiments.registry import get_experiment
from rgr.experiments.runner import Job, SweepError, run_job
from rgr.store import provenance
from rgr.trainers import trainer
from tests import ROOT


def load_results(name, root=None):
    return catalog.load(name, root=root)


def run_sweep(name, *args, **kw):
    return runner.run_sweep(trainer(name), *args, **kw)

VOLATILE = ["date", "wall_time_s", "stack_size", "git_commit", "device_name"]
ROUND_S = 120  # no round of these tests may take longer: a hang fails instead of blocking


def _quiet(msg):
    pass


def _stable(df):
    return df.drop(columns=VOLATILE).sort_values("run_key").reset_index(drop=True)


def _assert_same_table(got, want):
    pd.testing.assert_frame_equal(_stable(got), _stable(want), check_exact=False, rtol=1e-5)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The local executor's table of base/smoke (one torch thread, as on the workers)."""
    data = tmp_path_factory.mktemp("ref")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_sweep("base", "smoke", "cpu", root=data, progress=False, log=_quiet)
    finally:
        torch.set_num_threads(threads)
    return load_results("base", root=data)


@pytest.fixture(scope="module")
def client():
    # a stack is declared failed after its second dead worker (default: fourth), to keep the test short
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, resources={"GPU": 1},
                               dashboard_address=":0", silence_logs=logging.ERROR)
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close(timeout=30)
        cluster.close(timeout=30)


def _executor(client, **kw):
    return DaskExecutor(client, device="cpu", timeout=ROUND_S, log=_quiet, **kw)


def _slow_train(delay, stack, device):
    """run_job, slowed down so that a fault lands while stacks are still running."""
    time.sleep(delay)
    return run_job(stack, device)


def _failing_train(attempts_dir, bad_key, stack, device):
    """run_job, except that a stack holding ``bad_key`` raises (each attempt leaves a file)."""
    if bad_key in stack.keys:
        Path(attempts_dir, f"{time.time_ns()}-{os.getpid()}").touch()
        raise RuntimeError("injected failure")
    return run_job(stack, device)


def _crash(stack, device):
    os._exit(1)


class _FaultAfter(DaskExecutor):
    """After ``after`` stacks have been written, call ``fault(self)`` once (then keep going)."""

    def __init__(self, client, after, fault, **kw):
        super().__init__(client, **kw)
        self.after, self.fault, self.fired = after, fault, False

    def map_jobs(self, stacks):
        for i, item in enumerate(super().map_jobs(stacks)):
            if i == self.after and not self.fired:
                self.fired = True
                self.fault(self)  # items 0..after-1 have been written by now
            yield item


def _table(root):
    return load_results("base", root=root)


def test_dask_sweep_equals_local_and_survives_a_killed_worker(tmp_path, client, reference):
    snapshot, killed = {}, []

    def kill_a_busy_worker(ex):
        snapshot["rows"] = _table(tmp_path)
        busy = [w for w, keys in ex.client.processing().items() if keys]
        assert busy, "a stack should still be running"
        killed.append(busy[0])
        pid = ex.client.run(os.getpid, workers=busy[:1])[busy[0]]
        os.kill(pid, signal.SIGKILL)

    ex = _FaultAfter(client, 3, kill_a_busy_worker, work=functools.partial(_slow_train, 0.5), device="cpu",
                     timeout=ROUND_S, log=_quiet)
    assert ex._gpu() and "one GPU per stack" in ex.describe()  # the workers declare GPU=1
    out = run_sweep("base", "smoke", root=tmp_path, progress=False, max_stack=2, log=_quiet, executor=ex)
    assert killed and 3 <= len(snapshot["rows"]) < len(reference)
    # the dead worker's stack was rescheduled: the sweep finished, equal to the local executor's table
    _assert_same_table(out, reference)
    before = snapshot["rows"].set_index("run_key")
    after = _table(tmp_path).set_index("run_key").loc[before.index]
    assert (after["date"] == before["date"]).all() and (after["wall_time_s"] == before["wall_time_s"]).all()
    assert set(out["device_name"]) == {provenance("smoke", "cpu")["device_name"]}  # the workers' own provenance
    # a rerun has nothing left to train
    logs = []
    again = run_sweep("base", "smoke", root=tmp_path, progress=False, log=logs.append, executor=_executor(client))
    assert "complete" in logs[-1] and len(logs) == 1
    pd.testing.assert_frame_equal(again, _table(tmp_path))


def test_interrupted_client_loses_nothing_and_the_cli_finishes(tmp_path, client, reference):
    def interrupt(ex):
        raise KeyboardInterrupt

    ex = _FaultAfter(client, 4, interrupt, work=functools.partial(_slow_train, 0.5), device="cpu", timeout=ROUND_S,
                     log=_quiet)
    with pytest.raises(KeyboardInterrupt):
        run_sweep("base", "smoke", root=tmp_path, progress=False, max_stack=2, log=_quiet, executor=ex)
    before = _table(tmp_path)
    assert len(before) == 8  # the four stacks written before the interruption
    deadline = time.time() + 30  # the client cancelled what it had left on the cluster
    while time.time() < deadline and any(client.processing().values()):
        time.sleep(0.1)
    assert not any(client.processing().values())
    cmd = [sys.executable, "-m", "rgr", "sweep", "base", "--preset", "smoke", "--executor", "dask", "--device", "cpu",
           "--scheduler", client.scheduler.address, "--data", str(tmp_path), "--no-progress"]
    r = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                       timeout=2 * ROUND_S)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "round 0: 16 runs to train on the Dask cluster" in r.stdout and "one GPU per stack" in r.stdout
    after = _table(tmp_path)
    _assert_same_table(after, reference)
    kept = after.set_index("run_key").loc[before["run_key"]]
    assert (kept["wall_time_s"].to_numpy() == before["wall_time_s"].to_numpy()).all()  # not trained again


def test_failing_stack_is_retried_then_reported_with_its_configs(tmp_path, client, reference):
    bad = get_experiment("base").planned_runs("smoke")[5]
    attempts = tmp_path / "attempts"
    attempts.mkdir()
    data = tmp_path / "data"
    ex = _executor(client, retries=2, work=functools.partial(_failing_train, str(attempts), run_key(bad, "smoke")))
    with pytest.raises(SweepError) as info:
        run_sweep("base", "smoke", root=data, progress=False, max_stack=2, log=_quiet, executor=ex)
    assert len(list(attempts.iterdir())) == 3  # the first try and two retries, no more
    failures = info.value.failures
    assert bad in [f.config for f in failures] and len(failures) == 2  # the stack (of two) is the unit
    assert all("RuntimeError: injected failure" == f.error for f in failures)
    assert repr(bad) in str(info.value) and run_key(bad, "smoke") in str(info.value)
    # every other run was written, equal to the reference; the failed ones are missing
    got = _table(data)
    assert not set(got["run_key"]) & {f.run_key for f in failures}
    # missing: the failed stack, and the refinement point of its (cell, h), which waits for all seeds
    first_round = {run_key(c, "smoke") for c in get_experiment("base").planned_runs("smoke")}
    unit = (reference.m == bad.m) & (reference.d_model == bad.d_model) & (reference.h == bad.h)
    failed = reference["run_key"].isin({f.run_key for f in failures})
    missing = failed | (unit & ~reference["run_key"].isin(first_round))
    _assert_same_table(got, reference[~missing])


def test_a_stack_that_kills_its_workers_is_reported(client):
    stack = Job(trainer("base"), "smoke", (get_experiment("base").planned_runs("smoke")[0],))
    try:
        out = list(_executor(client, work=_crash).map_jobs([stack]))
    finally:
        client.wait_for_workers(2, timeout=300)  # the nannies restart the workers (slow on a loaded machine)
    assert len(out) == 1 and out[0][0] == stack
    assert isinstance(out[0][1], RuntimeError) and "2 workers died while training this stack" in str(out[0][1])


def test_cli_reports_failures_and_exits_nonzero(tmp_path, monkeypatch, capsys):
    bad = get_experiment("value").planned_runs("smoke")[0]
    real = experiment_trainer.train

    def train(cfgs, **kw):
        if bad in cfgs:
            raise RuntimeError("injected failure")
        return real(cfgs, **kw)

    monkeypatch.setattr(experiment_trainer, "train", train)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rc = cli.main(["sweep", "value", "--preset", "smoke", "--device", "cpu", "--data", str(tmp_path),
                       "--no-progress"])
    finally:
        torch.set_num_threads(threads)
    out = capsys.readouterr().err
    assert rc == 1 and "run(s) failed" in out and repr(bad) in out and "RuntimeError: injected failure" in out
    runs = get_experiment("value").planned_runs("smoke")
    failed = next(g for g in stack_groups(runs) if any(runs[i] == bad for i in g))  # the bad run's whole stack fails
    assert len(load_results("value", root=tmp_path)) == len(runs) - len(failed)
    assert cli.main(["sweep", "value", "--preset", "smoke", "--scheduler", "tcp://x:1"]) == 2  # needs --executor dask


def test_gpt2_goes_to_the_dask_cluster_too(tmp_path, client):
    """E7 is an experiment of the same runner: its jobs train on the workers, rows equal to a local sweep's."""
    from rgr.gpt2.experiment import GPT2Sweep
    from rgr.gpt2.training import GPT2Trainer

    sweep = GPT2Trainer(GPT2Sweep(embeddings="stand-in"))
    local = runner.run_sweep(sweep, "smoke", "cpu", root=tmp_path / "local", progress=False, log=_quiet)
    logs = []
    remote = runner.run_sweep(sweep, "smoke", root=tmp_path / "dask", progress=False, log=logs.append,
                              executor=_executor(client))
    assert "the Dask cluster" in logs[0] and len(remote) == len(sweep.planned_runs("smoke"))
    _assert_same_table(remote, local)
