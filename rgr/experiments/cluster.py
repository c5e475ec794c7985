"""Sweeps on a Dask cluster: a LocalCluster on this machine, or many (GPU) machines (README *Sweeps on a Dask
cluster*: the commands, failures and retries, GPUs, Slurm).

``python -m rgr sweep <experiment> --preset <p> --executor dask [--scheduler ADDRESS] [--workers N]``

Each stack (a :class:`rgr.experiments.runner.Job`) is one task, trained on a worker by
:func:`rgr.experiments.runner.run_job`; this process writes its rows as its future completes. A stack whose workers
keep dying comes back as ``KilledWorker`` (after ``distributed.scheduler.allowed-failures``, default 3). Dask is an
optional dependency (``pip install -e .[dask]``); nothing here imports it until a cluster is used.
"""

from __future__ import annotations

import logging
import re
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Sequence

import torch

from .runner import Job, run_job


class _StackKilledWorkers(RuntimeError):
    """Every worker that tried this stack died (out of memory? a crash in native code?)."""


def check_device(device: str | torch.device) -> str:
    """The device as a string a worker resolves; only its form is checked here (workers differ)."""
    text = str(device)
    if text not in ("auto", "cpu") and not re.fullmatch(r"cuda(:\d+)?", text):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}")
    return text


def _workers_with_gpu(client: Any) -> int:
    workers = client.scheduler_info(n_workers=-1).get("workers", {})
    return sum(1 for w in workers.values() if w.get("resources", {}).get("GPU", 0) >= 1)


class DaskExecutor:
    """Train a sweep's jobs on the Dask cluster of ``client`` (see the module's docstring).

    ``device`` is resolved on each worker (``"auto"``: its GPU if it has one).
    ``gpu_per_stack``: ask for one ``GPU`` resource per stack (None: when the
    cluster's workers declare one). ``retries``: extra tries of a stack that
    raised. ``timeout``: seconds a round may take before :class:`TimeoutError`
    (None: no limit). ``work`` is the function a worker calls with
    ``(job, device)``, :func:`rgr.experiments.runner.run_job` unless a test injects
    faults.
    """

    def __init__(
        self,
        client: Any,
        device: str | torch.device = "auto",
        gpu_per_stack: bool | None = None,
        retries: int = 2,
        timeout: float | None = None,
        work: Callable[[Job, str], list[dict]] = run_job,
        log: Callable[[str], None] = print,
    ) -> None:
        if not (isinstance(retries, int) and retries >= 0):
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        self.client = client
        self.device = check_device(device)
        self.gpu_per_stack = gpu_per_stack
        self.retries = retries
        self.timeout = timeout
        self.work = work
        self.log = log

    def _gpu(self) -> bool:
        if self.gpu_per_stack is not None:
            return self.gpu_per_stack
        return _workers_with_gpu(self.client) > 0

    def describe(self) -> str:
        info = self.client.scheduler_info(n_workers=-1)
        n = len(info.get("workers", {}))
        gpu = ", one GPU per stack" if self._gpu() else ""
        return f"the Dask cluster at {self.client.scheduler.address} ({n} workers, device {self.device}{gpu})"

    def map_jobs(self, jobs: Sequence[Job]) -> Iterator[tuple[Job, list[dict] | BaseException]]:
        from distributed import KilledWorker, as_completed

        gpu = self._gpu()
        if gpu and _workers_with_gpu(self.client) == 0:
            self.log("note: every stack asks for one GPU resource and no worker declares one yet; "
                     "waiting for workers started with --resources GPU=1")
        pending = {}
        for s in jobs:
            key = f"job-{s.label}-{uuid.uuid4().hex[:12]}"
            fut = self.client.submit(self.work, s, self.device, key=key, pure=False, retries=self.retries,
                                     resources={"GPU": 1} if gpu else None)
            pending[fut] = s
        try:
            for fut in as_completed(list(pending), timeout=self.timeout):
                s = pending.pop(fut)
                try:
                    rows = fut.result()
                except KilledWorker as e:
                    yield s, _StackKilledWorkers(
                        f"{e.allowed_failures + 1} workers died while training this stack "
                        f"(out of memory? a native crash?); the last was {e.last_worker.address}")
                except Exception as e:  # raised on the worker (after `retries` more tries) or cancelled
                    yield s, e
                else:
                    yield s, rows
        finally:
            if pending:  # interrupted: don't leave orphaned work on the cluster
                self.client.cancel(list(pending))


@contextmanager
def dask_executor(
    scheduler: str | None = None,
    workers: int | None = None,
    device: str | torch.device = "auto",
    gpu_per_stack: bool | None = None,
    retries: int = 2,
    log: Callable[[str], None] = print,
    **cluster_kwargs: Any,
) -> Iterator[DaskExecutor]:
    """A :class:`DaskExecutor` on the cluster at ``scheduler``, or on a new LocalCluster here.

    The LocalCluster has ``workers`` worker processes (default: one per core)
    of one thread each; with ``gpu_per_stack`` each declares one GPU. Both the
    client and a cluster started here are closed on exit.
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - the test extra installs it
        raise ValueError("--executor dask needs dask and distributed: pip install -e '.[dask]'") from e
    device = check_device(device)
    if workers is not None and not (isinstance(workers, int) and workers >= 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    cluster = None
    if scheduler is None:
        try:
            import bokeh  # noqa: F401  (the dashboard needs it)

            dashboard = ":0"
        except ImportError:
            dashboard = None
        kw: dict[str, Any] = dict(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=dashboard, silence_logs=logging.WARNING)
        if gpu_per_stack:
            kw["resources"] = {"GPU": 1}
        kw.update(cluster_kwargs)
        cluster = LocalCluster(**kw)
        client = Client(cluster)
        n = len(client.scheduler_info(n_workers=-1)["workers"])
        board = f"; dashboard {client.dashboard_link}" if dashboard else ""
        log(f"started a LocalCluster of {n} worker processes{board}")
    else:
        if workers is not None:
            raise ValueError("--workers sizes a LocalCluster; it cannot be used with --scheduler")
        if cluster_kwargs:
            raise ValueError(f"cluster options {sorted(cluster_kwargs)} need a LocalCluster (no scheduler address)")
        try:
            client = Client(scheduler, timeout="30s")
        except OSError as e:
            raise ValueError(f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from e
    try:
        yield DaskExecutor(client, device, gpu_per_stack, retries, log=log)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
