#!/usr/bin/env bash
# The host-framework example through the command-line tool: the Rust example writes the graph file,
# weights and inputs; `wgml` runs the graph file with two batch sizes and compares the backends.
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/ensure-vulkan.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
dir="${1:-target/host-framework}"
cargo run -q --release -p host-framework -- "$dir"
cargo build -q --release -p wgml
wgml=target/release/wgml
"$wgml" run "$dir/mlp.json" --backend wgpu --params "$dir/params" --input x="$dir/x_b2.npy" --out "$dir/out-b2"
"$wgml" run "$dir/mlp.json" --backend cpu-ref --params "$dir/params" --input x="$dir/x_b7.npy" --out "$dir/out-b7"
"$wgml" compare "$dir/mlp.json" --backend wgpu --against cpu-ref --params "$dir/params" --input x="$dir/x_b7.npy"
