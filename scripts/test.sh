#!/usr/bin/env bash
# Runs every test: formatting, the workspace (unit, integration, naga validation, conformance
# property tests), clippy and rustdoc with warnings denied, and the out-of-workspace host crate that
# uses the backends as a third party would.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/ensure-vulkan.sh
# Mesa warns on every device open when this is unset; give it a private directory.
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
cargo fmt --all --check
cargo test --workspace
cargo clippy --workspace --all-targets -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
CARGO_TARGET_DIR="$PWD/target" cargo run --manifest-path examples/host-crate/Cargo.toml
