#!/usr/bin/env bash
# What one short GPU lease runs (issue 28), in one call, from the repository root:
#
#   OUT=/some/folder BUDGET=540 RGR_GIT_COMMIT=<commit> [CHECKS=0] bash scripts/gpu_lease.sh [cells] [shards]
#
# 1. the engine on this GPU: the CUDA tests (graph == eager, GPU == CPU on float64 stacks); should a graph
#    capture fail, the sweep runs eagerly (RGR_CUDA_GRAPHS=0) and the log says so;
# 2. a recorded float32 check: one (1024, 128) paper stack on the CPU and on the GPU
#    (scripts/device_check.py -> $OUT/device_check.json);
# 3. the wide-cell bench at (4096, 512) on the GPU (stacked against the one-run loop, share of matmul peak);
# 4. lambda8's paper preset in the cells given (default 4096x512, the cell a CPU cannot finish), split into
#    shards that share the GPU (shards split (cell, h) units by a hash: one cell's seven head counts left the
#    third of three shards empty in the first lease, so use two for one cell), until BUDGET seconds from the start; a stack's rows are written when it ends,
#    so a stack cut by the deadline is lost and trained again by the next lease or CPU (resumable).
#    The shard files come back under $OUT (merge: python -m rgr sweep lambda8 --merge --data DIR).
#
# CHECKS=0 skips steps 1-3 (about 50 s; recorded on an H100 on 2026-11-26, README 'Performance').
# Everything it prints goes to $OUT/log.txt. Python packages: the machine's own, except pandas, pinned
# like the project (a wheel carried in .whl/, when present).
set -u
OUT=${OUT:-/tmp/gpu-lease}
BUDGET=${BUDGET:-540}
CELLS=${1:-4096x512}
SHARDS=${2:-2}
DEVICE=${DEVICE:-cuda}  # cpu: a dry rehearsal of this script on a machine without a GPU
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
numpy.__version__, torch.cuda.get_device_name())"

if [ "${CHECKS:-1}" != 0 ]; then
echo "== 1. CUDA tests ($(left) s left)"
if ! timeout 90 python3 -m pytest -q -o addopts="" -p no:cacheprovider tests/experiments/engine/test_graphed.py; then
  echo "CUDA graph tests failed: the sweep runs eagerly (RGR_CUDA_GRAPHS=0)"
  export RGR_CUDA_GRAPHS=0
fi

echo "== 2. float32 paper stack, CPU against GPU ($(left) s left)"
timeout 90 python3 scripts/device_check.py --out "$OUT/device_check.json"

echo "== 3. bench (4096, 512) ($(left) s left)"
timeout 60 python3 -m rgr bench --cell 4096x512 --heads 8 --cell-steps 2000 --cell-repeats 1 --device "$DEVICE"
fi

echo "== 4. lambda8 paper, cells $CELLS, $SHARDS shards ($(left) s left)"
D=/tmp/lease-data
mkdir -p "$D"
cp data/lambda8.csv data/lambda8.csv.seal data/base.csv data/base.csv.seal "$D/"
pids=()
for ((i = 0; i < SHARDS; i++)); do
  timeout -s INT $(($(left) - 20)) python3 -m rgr sweep lambda8 --preset paper --cells "$CELLS" \
    --shard "$i/$SHARDS" --device "$DEVICE" --data "$D" --no-progress 2>&1 | sed -u "s/^/[shard $i] /" &
  pids+=($!)
done
WATCH_EVERY=15 watch_shards "lambda8.shard-*"
python3 - "$D" <<'EOF'
import sys, glob, pandas as pd
for f in sorted(glob.glob(sys.argv[1] + "/lambda8.shard-*.csv")):
    t = pd.read_csv(f)
    t = t[t.device_name.str.contains("H1|H2|NVIDIA", regex=True)]
    ms = t.steps.sum()
    print(f, len(t), "runs", ms, "model-steps", t.stop_reason.value_counts().to_dict())
EOF
echo "== done ($(left) s left)"
