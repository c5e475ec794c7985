# Sourced by the lease scripts (scripts/gpu_lease.sh, scripts/gpu_gpt2.sh): wait for the shard processes in the
# array `pids`, copying the shard files matching "$D"/$1 under $OUT as they grow (what a cut lease still brings back).
watch_shards() {
  local running=1
  while [ "$running" = 1 ]; do
    running=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
    [ "$running" = 1 ] && sleep "${WATCH_EVERY:-10}"
    cp "$D"/$1 "$OUT/" 2>/dev/null
  done
  wait "${pids[@]}"
  cp "$D"/$1 "$OUT/" 2>/dev/null
}
