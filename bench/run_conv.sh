#!/usr/bin/env bash
# Per-kernel GPU times of the convolution-family workloads (`wgml profile`, one op per graph).
# usage: bench/run_conv.sh WGML GRAPHDIR [PATTERN] [ITERS] [profile options...]
# GRAPHDIR holds the graphs written by bench/conv_graphs.py; PATTERN selects them by name.
set -u
wgml=$1 dir=$2 pat=${3:-.} iters=${4:-30}
shift $(( $# < 4 ? $# : 4 ))
for g in "$dir"/*.json; do
  name=$(basename "$g" .json)
  echo "$name" | grep -qE "$pat" || continue
  echo "== $name"
  "$wgml" profile "$g" --random --warmup 5 --iters "$iters" "$@" 2>&1 | grep -vE '^\s*$' | tail -n 12
done
