#!/usr/bin/env bash
# Builds every peer and afd-rs's servers, then measures them side by side in one run
# (bench/src/bin/peers.rs): bench/peers/run.sh [ARGS for the peers binary...]
#
# Needs cargo, node and npm, python3 (with venv); the reference TypeScript server is built
# with its own setup.sh (../shared/peer/afd-ts). The table goes to stdout, each figure as
# JSON to bench/results/peers.jsonl.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
peers=bench/peers

cargo build --release --locked -p afd-bench --bin serve --bin peers
cargo build --release --locked --manifest-path "$peers/rmcp/Cargo.toml"
(cd "$peers/ts-sdk" && npm ci --no-audit --no-fund --silent)
if [ ! -x "$peers/fastmcp/.venv/bin/python" ]; then
    python3 -m venv "$peers/fastmcp/.venv"
fi
"$peers/fastmcp/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$peers/fastmcp/requirements.txt"
reference=../shared/peer/afd-ts
if [ -d "$reference" ] && [ ! -d "$reference/packages/server/dist" ]; then
    (cd "$reference" && ./setup.sh)
fi
mkdir -p bench/results
"$CARGO_TARGET_DIR/release/peers" --bin "$CARGO_TARGET_DIR/release" \
    --json bench/results/peers.jsonl "$@"
