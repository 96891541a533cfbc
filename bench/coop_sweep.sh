#!/usr/bin/env bash
# Compares the tensor-core GEMM variants (the `coop.*` tuning keys, docs/CLI.md) on one GPU:
# profiles the MatMul graphs of bench/graphs.py under each override set and prints, per run,
# the product and split-K kernels' GPU time and TFLOP/s (`wgml profile` rows) and the total.
# About 25 short runs (a minute of GPU time, most of it pipeline creation).
# usage: bench/coop_sweep.sh WGML GRAPHDIR     (GRAPHDIR written by `python3 bench/graphs.py`)
set -u
wgml=$1 dir=$2
run() { # graph, label, extra wgml args...
  local g=$1 label=$2; shift 2
  printf '== %s %s\n' "$g" "$label"
  "$wgml" profile "$dir/$g" --random --warmup 3 --iters 10 "$@" 2>&1 |
    grep -E 'linalg|^total|rror' | sed 's/^/   /'
}
# Runs graph $1 under each override set that follows (space-separated KEY=VALUE), after the
# extra wgml arguments in the array `extra`.
sweep() {
  local g=$1 cfg; shift
  for cfg in "$@"; do
    local args=(${extra[@]+"${extra[@]}"})
    for kv in $cfg; do args+=(--tune "$kv"); done
    run "$g" "[${extra[*]+${extra[*]} }${cfg:-default}]" ${args[@]+"${args[@]}"}
  done
}
# 4096³ f16. Default: 128x256, K step 32, one buffer (191.6 TFLOP/s in the first sweep). Against
# 128x128 with K step 64 in one buffer (188.0), the earlier default (128x128, K step 32, two
# buffers: 150.5), each single-buffered, 4 subgroups of 64x64 with K step 64, 128x64, and the
# element-pair kernel. (128x256 with K step 64 does not fit 48 KiB of workgroup memory: a
# forced `coop.tile=huge coop.bk=64` falls back to the default.)
extra=()
sweep matmul_4096_f16_c1.json "" "coop.bk=64" "coop.tile=large" "coop.tile=large coop.buffers=1" \
  "coop.tile=wide coop.bk=64" "coop.tile=wide" "coop.tile=mid" "coop.stage=pairs" \
  "coop.stage=pairs coop.tile=huge" "coop.split=2"
# 1024³ f16. Default: 64x64 tiles, two buffers, no split-K (first sweep: 30.1 µs, against 31.7 µs
# plus a 12.2 µs reduction for 128x128 tiles in two splits, the earlier default).
sweep matmul_1024_f16_c1.json "" "coop.split=2" "coop.tile=small coop.buffers=1" "coop.tile=mid" \
  "coop.tile=large" "coop.tile=large coop.split=2" "coop.tile=large coop.bk=64"
# F32 operands rounded to f16 on the tensor cores (explicit option), against the exact default:
# F32 vectors are loaded two per 8 elements, so the K step 64 may matter more than for F16.
extra=()
run matmul_4096_f32_c1.json "[exact]"
run matmul_1024_f32_c1.json "[exact]"
extra=(--matmul-precision f16)
sweep matmul_4096_f32_c1.json "" "coop.bk=64" "coop.tile=large"
sweep matmul_1024_f32_c1.json "" "coop.tile=mid"
sweep matmul_4000_f32_c1.json ""
