#!/usr/bin/env bash
# Times the graphs written by bench/graphs.py with `wgml bench` and prints name<TAB>value<TAB>unit.
# usage: bench/run_graphs.sh WGML GRAPHDIR [ITERS]
# Chained workloads: per-op time = (median_cT - median_c1) / (T - 1); value = amount / that.
# MLPs: the median whole-run time in microseconds (upload of x, the layers, readback).
set -u
wgml=$1 dir=$2 iters=${3:-30}
median() { "$wgml" bench "$1" --backend wgpu --random --warmup 5 --iters "$iters" 2>/dev/null |
  awk '/^median/{print $2}'; }
while IFS=$'\t' read -r name unit amount t; do
  if [ "$unit" = us ]; then
    m=$(median "$dir/${name%_us}.json")
    if [ -n "$m" ]; then awk -v m="$m" -v n="$name" 'BEGIN{printf "%s\t%.1f\tus\n", n, m*1000}'
    else printf '%s\tFAILED\t%s\n' "$name" "$unit"; fi
    continue
  fi
  m1=$(median "$dir/${name}_c1.json"); mt=$(median "$dir/${name}_c${t}.json")
  if [ -z "$m1" ] || [ -z "$mt" ]; then printf '%s\tFAILED\t%s\n' "$name" "$unit"; continue; fi
  awk -v a="$m1" -v b="$mt" -v t="$t" -v x="$amount" -v n="$name" -v u="$unit" 'BEGIN{
    d = (b - a) / (t - 1) / 1000; scale = (u == "TFLOP/s") ? 1e12 : 1e9
    if (d <= 0) printf "%s\tNOISE\t%s\n", n, u
    else printf "%s\t%.4g\t%s\t# c1 %.3f ms, c%d %.3f ms\n", n, x / d / scale, u, a, t, b }'
done < "$dir/workloads.tsv"
