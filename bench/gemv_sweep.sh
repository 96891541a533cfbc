#!/usr/bin/env bash
# Per-kernel GPU times of the GEMV kernels (`wgml profile`, a chain of 9 equal ops over one
# weight) under the `gemv.*` kernel-choice overrides (backend_wgpu::Tuning): the comparisons
# that set the defaults, about a minute of GPU time.
# usage: bench/gemv_sweep.sh WGML GRAPHDIR
# GRAPHDIR holds `python3 bench/gemv_graphs.py GRAPHDIR` (K = 4096); the K = 2048 and 8192 sets
# are written there when missing. Prints, per (graph, overrides), the product kernel's median
# row and the profile's total (dispatches, GPU µs, GB/s): F16/BF16 totals with and without the
# zeroing pass show what a dispatch costs.
set -u
wgml=$1 dir=$2
here=$(dirname "$0")
for k in 2048 8192; do
  [ -e "$dir/gemv_1x${k}x${k}_f32_kn_c9.json" ] || python3 "$here/gemv_graphs.py" "$dir" "$k"
done
profile() { # k, dtype, layout, overrides...
  local k=$1 d=$2 l=$3; shift 3
  local tune=()
  for kv in "$@"; do tune+=(--tune "$kv"); done
  printf '== %s %s %s %s\n' "$k" "$d" "$l" "${*:-default}"
  local out
  out=$("$wgml" profile "$dir/gemv_1x${k}x${k}_${d}_${l}_c9.json" --random --warmup 3 --iters 10 "${tune[@]}" 2>&1)
  # Rows are sorted by time: the 5th of the 9 product rows is the median.
  grep -E 'linalg_gemv' <<<"$out" | sed -n 5p
  grep -E 'total:|rror' <<<"$out" || echo FAILED
}
# K-contiguous weights (x · Wᵀ): columns per workgroup (default 4 for 4096), F16 A in word pairs.
profile 4096 f32 nk
profile 4096 f32 nk gemv.ct=1
profile 4096 f32 nk gemv.ct=2
profile 4096 f32 nk gemv.ct=8
profile 4096 f16 nk
profile 4096 f16 nk gemv.ct=2
profile 4096 bf16 nk
# N-contiguous weights: longer runs of each weight row per workgroup, K split over a second pass.
profile 4096 f32 kn
profile 4096 f32 kn gemv.ct=32 gemv.split=8
profile 4096 f32 kn gemv.ct=64 gemv.split=16
profile 4096 f32 kn gemv.unroll=8 gemv.workgroups=512
# Fixed cost per dispatch vs streaming rate: the same kernel at a quarter and 4x the bytes.
profile 2048 f32 kn
profile 8192 f32 kn
profile 8192 f32 nk
# The zeroing pass of packed outputs: totals without (default) and with it.
profile 4096 f16 kn
profile 4096 f16 kn gemv.zero=1
profile 4096 bf16 kn
profile 4096 bf16 kn gemv.zero=1
profile 4096 f16 nk gemv.zero=1
profile 4096 bf16 nk gemv.zero=1
