"""The Slurm job-array recipe (README): four shards as separate processes, merged, equal one unsharded run."""

import importlib.util

from tests import ROOT


def test_four_shard_processes_merge_into_one_run(tmp_path):
    spec = importlib.util.spec_from_file_location("shard_array_check", ROOT / "scripts" / "shard_array_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.run("base", "smoke", 4, tmp_path) == []
    assert (tmp_path / "sharded" / "base.csv").is_file() and not list((tmp_path / "sharded").glob("base.shard-*"))
