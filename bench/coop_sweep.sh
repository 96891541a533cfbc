#!/usr/bin/env bash
# Compares the tensor-core GEMM variants (the `coop.*` tuning keys, docs/CLI.md) on one GPU:
# profiles the MatMul graphs of bench/graphs.py under each override set and prints, per run,
# the product and split-K kernels' GPU time and TFLOP/s (`wgml profile` rows) and the total.
# usage: bench/coop_sweep.sh WGML GRAPHDIR     (GRAPHDIR written by `python3 bench/graphs.py`)
set -u
wgml=$1 dir=$2
run() { # graph, label, extra wgml args...
  local g=$1 label=$2; shift 2
  printf '== %s %s\n' "$g" "$label"
  "$wgml" profile "$dir/$g" --random --warmup 3 --iters 10 "$@" 2>&1 |
    grep -E 'linalg|^total|rror' | sed 's/^/   /'
}
big=matmul_4096_f16_c1.json
for cfg in "" "coop.stage=word" "coop.tile=wide" "coop.tile=wide coop.stage=word" \
           "coop.tile=wide coop.stage=word coop.bk=64" "coop.tile=huge coop.stage=word" \
           "coop.stage=direct" "coop.tile=wide coop.stage=direct" \
           "coop.tile=wide coop.stage=direct coop.bk=64" "coop.tile=huge coop.stage=direct" \
           "coop.bk=64" "coop.tile=huge"; do
  args=(); for kv in $cfg; do args+=(--tune "$kv"); done
  run "$big" "[${cfg:-default}]" "${args[@]}"
done
mid=matmul_1024_f16_c1.json
for cfg in "" "coop.split=1" "coop.tile=mid coop.split=1" "coop.tile=small coop.split=1" \
           "coop.tile=mid coop.split=1 coop.stage=word" "coop.tile=small coop.split=1 coop.stage=word" \
           "coop.tile=mid coop.split=1 coop.stage=direct" "coop.tile=small coop.split=1 coop.stage=direct" \
           "coop.tile=wide coop.stage=word"; do
  args=(); for kv in $cfg; do args+=(--tune "$kv"); done
  run "$mid" "[${cfg:-default}]" "${args[@]}"
done
# F32 operands rounded to f16 on the tensor cores (explicit option), against the exact default.
for g in matmul_4096_f32_c1.json matmul_1024_f32_c1.json; do
  run "$g" "[exact]"
  run "$g" "[--matmul-precision f16]" --matmul-precision f16
  run "$g" "[--matmul-precision f16 coop.tile=wide]" --matmul-precision f16 --tune coop.tile=wide
done
