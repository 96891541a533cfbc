#!/usr/bin/env bash
# Runs the benchmark suite on this machine's GPU, ours and PyTorch's in one call, and prints one
# table: name, ours, PyTorch, ours / PyTorch, unit. Needs a release `wgml` and, for the PyTorch
# column, python3 with torch + CUDA (the column is empty otherwise).
# usage: bench/run.sh WGML [--small] [ITERS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
wgml=$1; shift
small=""; [ "${1:-}" = --small ] && { small=--small; shift; }
iters=${1:-30}
dir=$(mktemp -d)
python3 "$here/graphs.py" "$dir" $small
python3 "$here/torch_ref.py" $small --quick > "$dir/torch.tsv" 2> "$dir/torch.log" ||
  echo "# PyTorch reference failed: $(tail -1 "$dir/torch.log")" >&2
"$here/run_graphs.sh" "$wgml" "$dir" "$iters" > "$dir/ours.tsv"
awk -F'\t' '
  NR == FNR { torch[$1] = $2; next }
  { name = $1; ours = $2; unit = $3
    # torch_ref names the GEMV bandwidth line <name>_bw, as ours; the MLP lines end in _us.
    t = (name in torch) ? torch[name] : ""
    ratio = (t != "" && ours + 0 > 0 && t + 0 > 0) ? sprintf("%.2f", (unit == "us") ? t / ours : ours / t) : ""
    printf "%-28s %10s %10s %6s  %s\n", name, ours, t, ratio, unit }
  END {
    for (n in torch) if (n ~ /^copy_/) printf "%-28s %10s %10s %6s  %s\n", n, "", torch[n], "", "GB/s (ceiling)"
    for (n in torch) if (n ~ /cudagraph|gpu_only|tf32/) printf "%-28s %10s %10s %6s  %s\n", n, "", torch[n], "", "(context)"
  }' "$dir/torch.tsv" "$dir/ours.tsv"
echo "# ratio: ours / PyTorch (for us: PyTorch / ours, so > 1 is faster either way); raw files in $dir" >&2
