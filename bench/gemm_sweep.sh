#!/usr/bin/env bash
# Per-kernel GPU times of the F32 GEMM variants (`wgml profile`, one MatMul per graph) under the
# `gemm.*` kernel-choice overrides (backend_wgpu::Tuning), to choose the tiled kernel's defaults
# on one GPU: the 4096³, 1024³ and 4000³ workloads of bench/graphs.py.
# usage: bench/gemm_sweep.sh WGML GRAPHDIR   (GRAPHDIR written by `python3 bench/graphs.py GRAPHDIR`)
# Prints, per (size, overrides), the MatMul rows of the profile (kernel, GPU µs, TFLOP/s).
set -u
wgml=$1 dir=$2
profile() { # size, overrides...
  local size=$1; shift
  local tune=()
  for kv in "$@"; do tune+=(--tune "$kv"); done
  printf '== %s³ %s\n' "$size" "${*:-default}"
  "$wgml" profile "$dir/matmul_${size}_f32_c1.json" --random --warmup 3 --iters 10 "${tune[@]}" 2>&1 |
    grep -E 'MatMul|error' || echo FAILED
}
profile 4096
profile 4096 gemm.vec=off
profile 4096 gemm.bk=8
profile 4096 gemm.tile=128x64
profile 4000
profile 4000 gemm.vec=off
profile 4000 gemm.tile=128x64
profile 1024
profile 1024 gemm.vec=off
profile 1024 gemm.tile=128x64
profile 1024 gemm.tile=128x128
profile 1024 gemm.tile=128x128 gemm.split=2
profile 1024 gemm.tile=128x64 gemm.split=2
profile 1024 gemm.split=2
profile 1024 gemm.bk=32
profile 1024 gemm.tile=128x128 gemm.bk=8
