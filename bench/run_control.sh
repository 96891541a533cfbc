#!/usr/bin/env bash
# Times the graphs written by bench/control_graphs.py with `wgml bench` and prints
# name<TAB>microseconds<TAB>us per iteration, with the medians behind each figure.
# usage: bench/run_control.sh WGML GRAPHDIR [ITERS] [BACKEND]
# Loops: per-iteration time = (median_T - median_1) / (T - 1), the run overheads cancelling.
# body_once: the median whole run, i.e. one loop iteration driven from the host.
set -u
wgml=$1 dir=$2 iters=${3:-30} backend=${4:-wgpu}
median() { "$wgml" bench "$1" --backend "$backend" --random --warmup 5 --iters "$iters" 2>/dev/null |
  awk '/^median/{print $2}'; }
while IFS=$'\t' read -r name many one t; do
  mt=$(median "$dir/$many.json")
  if [ "$one" = - ]; then
    if [ -n "$mt" ]; then awk -v m="$mt" -v n="$name" 'BEGIN{printf "%s\t%.2f\tus per iteration\n", n, m*1000}'
    else printf '%s\tFAILED\n' "$name"; fi
    continue
  fi
  m1=$(median "$dir/$one.json")
  if [ -z "$m1" ] || [ -z "$mt" ]; then printf '%s\tFAILED\n' "$name"; continue; fi
  awk -v a="$m1" -v b="$mt" -v t="$t" -v n="$name" -v f1="$one" -v ft="$many" 'BEGIN{
    d = (b - a) / (t - 1) * 1000
    if (d <= 0) printf "%s\tNOISE\tus per iteration\n", n
    else printf "%s\t%.3f\tus per iteration\t# %s %.3f ms, %s %.3f ms\n", n, d, f1, a, ft, b }'
done < "$dir/workloads.tsv"
