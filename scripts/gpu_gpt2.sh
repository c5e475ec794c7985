#!/usr/bin/env bash
# What one short GPU lease runs for the GPT-2 block's paper preset (issue 46), in one call, from the repository root:
#
#   OUT=/some/folder BUDGET=570 RGR_GIT_COMMIT=<commit> bash scripts/gpu_gpt2.sh
#
# 1. a float32 check: the E7 smoke preset trained on the CPU, on the GPU with its step replayed from a CUDA graph,
#    and on the GPU eagerly (RGR_CUDA_GRAPHS=0), rows compared (the sweep's bf16 autocast differs, by design); should
#    the graphed run fail, the sweep runs eagerly (RGR_CUDA_GRAPHS=0) and the log says so;
# 2. the E7 bench: two of the paper preset's stacks (R = 7 seeds) timed in bf16 autocast (`rgr bench --gpt2 paper`),
#    with the whole preset's projection in minutes of one process;
# 3. the paper preset's stacks, dealt round-robin to K shard processes sharing the GPU (default 1: see below),
#    each stopping at BUDGET (`--deadline-min`: a stack that would end later stops
#    after its first 256 steps). A stack's rows are written when it ends; the table (one process) or shard files come back under $OUT
#    (merge: copy them into data/, then python -m rgr sweep gpt2 --merge).
#
# SKIP_CHECKS=1 skips 1 and 2 (a later call on a kind where they already ran and are recorded: the whole budget
# then goes to 3; commit its log as data/leases/<date>-<n>-<kind>-gpt2-sweep.log: it holds no bench, and the chapters,
# which quote the newest bench, do not read it). Everything it prints goes to $OUT/log.txt. Python packages: the machine's own, except pandas, pinned like the
# project (a wheel carried in .whl/, when present).
set -u
OUT=${OUT:-/tmp/gpu-gpt2}
BUDGET=${BUDGET:-570}
DEVICE=${DEVICE:-cuda}  # cpu: a dry rehearsal on a machine without a GPU (use BENCH_PRESET=smoke SWEEP_PRESET=smoke)
BENCH_PRESET=${BENCH_PRESET:-paper}
SWEEP_PRESET=${SWEEP_PRESET:-paper}
mkdir -p "$OUT"
T0=$SECONDS
left() { echo $((BUDGET - (SECONDS - T0))); }
exec > >(tee -a "$OUT/log.txt") 2>&1
source "$(dirname "$0")/lease_shards.sh"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
echo "commit ${RGR_GIT_COMMIT:-unknown (set RGR_GIT_COMMIT where the tree has no .git)}"
if ls .whl/pandas-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site:$PWD
fi
nvidia-smi -L || echo "no nvidia-smi"
python3 -c "import torch, pandas, numpy; print('torch', torch.__version__, 'pandas', pandas.__version__, 'numpy',
numpy.__version__, torch.cuda.get_device_name() if torch.cuda.is_available() else 'no cuda')"

if [ "${SKIP_CHECKS:-0}" = 1 ]; then
  echo "== 1 and 2 skipped (SKIP_CHECKS=1: they ran on this kind before; data/leases/)"
else
echo "== 1. fp32 smoke, CPU against $DEVICE ($(left) s left)"
if ! timeout 90 python3 - "$DEVICE" <<'EOF'
import os, sys
from rgr.gpt2.experiment import experiment_grid
from rgr.gpt2.training import train_runs
cfgs = experiment_grid("smoke", "stand-in")[:2]
cpu = train_runs(cfgs, device="cpu", precision="fp32")
graphed = train_runs(cfgs, device=sys.argv[1], precision="fp32")
os.environ["RGR_CUDA_GRAPHS"] = "0"
eager = train_runs(cfgs, device=sys.argv[1], precision="fp32")
for a, b, c in zip(cpu, graphed, eager):
    print("seed", a["seed"], "test_acc cpu/graphed/eager", a["test_acc"], b["test_acc"], c["test_acc"],
          "final loss", a["final_train_loss"], b["final_train_loss"], c["final_train_loss"])
EOF
then
  echo "the graphed E7 step failed here: the sweep runs eagerly (RGR_CUDA_GRAPHS=0)"
  export RGR_CUDA_GRAPHS=0
fi

echo "== 2. bench ($(left) s left)"
timeout 150 python3 -m rgr bench --gpt2 "$BENCH_PRESET" --device "$DEVICE" --steps 200 --warmup 30 \
  | tee "$OUT/bench.txt"
fi

echo "== 3. the $SWEEP_PRESET preset in shards ($(left) s left)"
D=/tmp/lease-data
mkdir -p "$D"
cp data/gpt2.csv data/gpt2.csv.seal "$D/"
# One process: on the H200 (2026-11-27) two shard processes each took 2.25x one's time per stack (0.89x together):
# the graphed step keeps the GPU busy. K=2 for a device where it does not.
K=${K:-1}
echo "K = $K shard processes"
pids=()
for ((i = 0; i < K; i++)); do
  timeout -s INT $(($(left) + 30)) python3 -m rgr sweep gpt2 --preset "$SWEEP_PRESET" --shard "$i/$K" \
    --device "$DEVICE" --data "$D" --no-progress --deadline-min "$(python3 -c "print(($(left) - 15) / 60)")" 2>&1 \
    | sed -u "s/^/[shard $i] /" &
  pids+=($!)
done
WATCH_EVERY=10 watch_shards "gpt2*.csv*"  # one process writes gpt2.csv itself, several their shard files
python3 - "$D" <<'EOF'
import sys, glob, pandas as pd
for f in sorted(glob.glob(sys.argv[1] + "/gpt2*.csv")):
    t = pd.read_csv(f)
    print(f, len(t), "runs:", t.groupby(["D_K", "h"]).agg(acc=("test_acc", "mean"), wall=("wall_time_s", "sum")
                                                              ).round(3).to_dict("index"))
EOF
echo "== done ($(left) s left)"
