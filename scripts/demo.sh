#!/usr/bin/env bash
# Runs the demo graph on "wgpu" (or the backend named as $1) and compares it with "cpu-ref".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-vulkan.sh
exec cargo run --release -p demo -- "$@"
