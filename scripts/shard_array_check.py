"""Check the Slurm job-array recipe locally: N shards as separate processes, merged, equal one unsharded run.

    python scripts/shard_array_check.py [--experiment base] [--preset smoke] [--shards 4] [--keep DIR]

Each shard runs as its own process, as an array task would:
``python -m rgr sweep <exp> --preset <p> --shard i/N --data DIR`` (all N at once),
then ``python -m rgr sweep <exp> --data DIR --merge``; a single
``python -m rgr sweep <exp> --preset <p> --data REF`` gives the reference. The
merged table must hold the same run keys, the same configs and steps, results
equal to float32 rounding (a run's stack differs between a shard and the whole
sweep, so float reductions may run in another order), and the same threshold
D_K* in every (cell, h). Exit 0 when they agree; otherwise the differences
are printed and the exit code is 1.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VOLATILE = ["date", "wall_time_s", "stack_size", "git_commit", "device_name"]


def _sweep(*args: str) -> list[str]:
    return [sys.executable, "-m", "rgr", "sweep", *args, "--device", "cpu", "--no-progress"]


def run(experiment: str, preset: str, shards: int, work: Path) -> list[str]:
    """Run the shards and the reference under ``work``; return the differences (empty: they agree)."""
    import pandas as pd

    from rgr.catalog import load as load_results
    from rgr.results.thresholds import thresholds

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    data, ref = work / "sharded", work / "reference"
    procs = [subprocess.Popen(_sweep(experiment, "--preset", preset, "--shard", f"{i}/{shards}", "--data", str(data)),
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for i in range(shards)]  # fmt: skip
    procs.append(subprocess.Popen(_sweep(experiment, "--preset", preset, "--data", str(ref)), cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    errors = [f"process {p.args}: exit {p.returncode}: {err.strip()}" for p in procs
              for _, err in [p.communicate()] if p.returncode != 0]  # fmt: skip
    if errors:
        return errors
    subprocess.run([sys.executable, "-m", "rgr", "sweep", experiment, "--data", str(data), "--merge"], cwd=ROOT,
                   env=env, check=True, capture_output=True)
    if list(data.glob(f"{experiment}.shard-*")):
        return ["--merge left shard files behind"]
    a = load_results(experiment, preset, root=data).drop(columns=VOLATILE).sort_values("run_key").reset_index(drop=True)
    b = load_results(experiment, preset, root=ref).drop(columns=VOLATILE).sort_values("run_key").reset_index(drop=True)
    out = []
    if list(a["run_key"]) != list(b["run_key"]):
        return [f"run keys differ: {len(a)} sharded rows against {len(b)}"]
    exact = [c for c in a.columns if a[c].dtype == object or c in ("steps", "m", "d_model", "h", "D_K", "seed")]
    for c in exact:
        if c != "val_curve" and not a[c].equals(b[c]):
            out.append(f"column {c} differs")
    floats = [c for c in a.columns if c not in exact and pd.api.types.is_float_dtype(a[c])]
    try:
        pd.testing.assert_frame_equal(a[floats], b[floats], check_exact=False, rtol=1e-5, atol=1e-6)
    except AssertionError as e:
        out.append(f"results differ beyond float32 rounding: {e}")
    cols = ["m", "d_model", "r", "D_K_star", "D_K_opt", "D_K_cons"]
    ta, tb = thresholds(a)[cols].reset_index(drop=True), thresholds(b)[cols].reset_index(drop=True)
    if not ta.equals(tb):
        out.append(f"D_K* differs:\n{ta}\n{tb}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--experiment", default="base")
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--keep", default=None, help="work in this folder and keep it (default: a temporary one)")
    a = ap.parse_args(argv)
    if a.shards < 1:
        print(f"shard_array_check: --shards must be >= 1, got {a.shards}", file=sys.stderr)
        return 2
    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(a.keep) if a.keep else Path(tmp)
        diffs = run(a.experiment, a.preset, a.shards, work)
    for d in diffs:
        print(d)
    print(f"{a.experiment}/{a.preset}: {a.shards} shards merged {'==' if not diffs else '!='} one run")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
