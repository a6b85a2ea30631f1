#!/usr/bin/env bash
# The server's CPU time per call over streamable HTTP at 64 calls in flight: a figure that
# moves far less than calls per second when the machine's speed does. Runs the peers
# harness for one peer (raw client, 8 s) and reads the server process's user and system
# time from /proc over 4 s in the middle of the run.
#
#   bench/peers/cpu.sh [PEER] [BIN] [CLIENT]
#       PEER: afd-lazy (default), afd-individual, rmcp, floor
#       BIN: where the release binaries are (target/release)
#       CLIENT: raw (default, the harness's raw client) or wrk (64 connections, one thread,
#               bench/peers/wrk-call.lua; afd-lazy and floor only)
#
# Needs the binaries `bench/peers/run.sh` builds (serve, peers, the floor, the rmcp peer).
set -euo pipefail
cd "$(dirname "$0")/../.."
peer=${1:-afd-lazy}
bin=$(cd "${2:-target/release}" && pwd)
case "$peer" in
    afd-lazy | afd-individual) program=serve ;;
    rmcp) program=rmcp-shop ;;
    floor) program=floor-http ;;
    *) echo "unknown peer: $peer" >&2; exit 2 ;;
esac
client=${3:-raw}
out=$(mktemp)
trap 'rm -f "$out"; [ -n "${server:-}" ] && kill "$server" 2> /dev/null || true' EXIT
if [ "$client" = wrk ]; then
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    case "$peer" in
        afd-lazy) "$bin/serve" --commands 80 --strategy lazy --http "127.0.0.1:$port" > /dev/null 2>&1 & ;;
        floor) "$bin/floor-http" "127.0.0.1:$port" > /dev/null 2>&1 & ;;
        *) echo "wrk drives afd-lazy or floor" >&2; exit 2 ;;
    esac
    server=$!
    sleep 1.5
    TOOL=afd-call ARGS='{"command":"order-list","input":{"limit":5}}' \
        wrk -t1 -c64 -d8s -s bench/peers/wrk-call.lua "http://127.0.0.1:$port/mcp" > "$out" 2>&1 &
    harness=$!
    sleep 2.5
    pid=$server
else
    "$bin/peers" --bin "$bin" --only "$peer" --transports http --clients raw \
        --seconds 8 --concurrency 64 --calls 200 > "$out" 2>&1 &
    harness=$!
    sleep 2.5
    pid=$(pgrep -f "^$bin/$program" | head -1)
fi
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
sleep 4
after=$(ticks)
wait "$harness"
if [ "$client" = wrk ]; then
    grep -q '^failed 0$' "$out" || { echo "a call failed" >&2; exit 1; }
    rate=$(awk '/^Requests\/sec:/ {printf "%d", $2}' "$out")
else
    rate=$(grep -o '[0-9]* calls/s at 64$' "$out" | grep -o '^[0-9]*')
fi
awk -v t=$((after - before)) -v hz="$hz" -v rate="$rate" -v peer="$peer" -v client="$client" 'BEGIN {
    cpu = t / hz / 4
    printf "%s (%s): %d calls/s at 64 in flight, server %.0f%% of a core, %.1f us of CPU a call\n",
        peer, client, rate, cpu * 100, cpu / rate * 1e6
}'
