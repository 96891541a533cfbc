#!/usr/bin/env bash
# Times the graphs of bench/quant_graphs.py with `wgml profile` and prints, per workload, the
# summed GPU time of its kernels (median over the profiled runs), GB/s and TFLOP/s.
# usage: bench/run_quant.sh WGML GRAPHDIR [ITERS] [extra wgml args…]
set -u
wgml=$1 dir=$2 iters=${3:-50}; shift 3 2>/dev/null || shift $#
printf 'workload\tGPU us\tGB/s\tTFLOP/s\tkernels\n'
while IFS=$'\t' read -r name bytes flops; do
  out=$("$wgml" profile "$dir/$name.json" --backend wgpu --random --warmup 5 --iters "$iters" "$@" 2>&1)
  us=$(echo "$out" | awk '/^total:/{for(i=1;i<=NF;i++) if($i=="GPU"){v=$(i+1)}} END{print v+0}')
  ks=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && $3 ~ /wgsl/ {sub(/:main/, "", $3); printf "%s:%s ", $3, $5}')
  if [ "$us" = 0 ]; then printf '%s\tFAILED\t%s\n' "$name" "$(echo "$out" | tail -2 | tr '\n' ' ')"; continue; fi
  awk -v n="$name" -v us="$us" -v b="$bytes" -v f="$flops" -v k="$ks" \
    'BEGIN{printf "%s\t%.2f\t%.0f\t%.2f\t%s\n", n, us, b / us / 1e3, f / us / 1e6, k}'
done < "$dir/workloads.tsv"
