#!/usr/bin/env bash
# Per-kernel GPU times of the F32 GEMM variants (`wgml profile`, one MatMul per graph) under the
# `gemm.*` kernel-choice overrides (backend_wgpu::Tuning), to choose the tiled kernel's defaults
# on one GPU: the 4096³, 4000³ and 1024³ workloads of bench/graphs.py (about a minute of GPU).
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
# Large problems: the scalar 128 x 128 kernel (the default) against the vector-load kernel
# (gemm.vec=on), by workgroup memory (buffers, K step), A staging layout and live registers
# (prefetch).
profile 4096
profile 4096 gemm.vec=on
profile 4096 gemm.vec=on gemm.buffers=1
profile 4096 gemm.vec=on gemm.buffers=1 gemm.bk=32
profile 4096 gemm.vec=on gemm.bk=8
profile 4096 gemm.vec=on gemm.astage=rows
profile 4096 gemm.vec=on gemm.astage=rows gemm.buffers=1
profile 4096 gemm.vec=on gemm.prefetch=off
profile 4096 gemm.vec=on gemm.prefetch=off gemm.buffers=1
profile 4000
profile 4000 gemm.vec=on
profile 4000 gemm.vec=on gemm.buffers=1
profile 4000 gemm.vec=on gemm.astage=rows
profile 4000 gemm.vec=on gemm.prefetch=off
# Mid size: the vector-load 64 x 64 tile without split-K (the default) against the same
# variants and the scalar kernel.
profile 1024
profile 1024 gemm.vec=off
profile 1024 gemm.buffers=1
profile 1024 gemm.astage=rows
profile 1024 gemm.prefetch=off
profile 1024 gemm.bk=32 gemm.buffers=1
