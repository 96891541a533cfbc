#!/usr/bin/env bash
# Runs the demo graph on "wgpu" (or the backend named as $1) and compares it with "cpu-ref".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-vulkan.sh
# Mesa warns on every device open when this is unset; give it a private directory.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
exec cargo run --release -p demo -- "$@"
