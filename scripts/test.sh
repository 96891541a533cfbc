#!/usr/bin/env bash
# Runs every test: the workspace (unit, integration, naga validation, conformance property tests)
# and the out-of-workspace host crate that uses the backends as a third party would.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-vulkan.sh
# Mesa warns on every device open when this is unset; give it a private directory.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cargo test --workspace
CARGO_TARGET_DIR="$PWD/target" cargo run --manifest-path examples/host-crate/Cargo.toml
