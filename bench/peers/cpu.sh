#!/usr/bin/env bash
# The server's CPU time per call over streamable HTTP at 64 calls in flight: a figure that
# moves far less than calls per second when the machine's speed does. Runs the peers
# harness for one peer (raw client, 8 s) and reads the server process's user and system
# time from /proc over 4 s in the middle of the run.
#
#   bench/peers/cpu.sh [PEER] [BIN]     PEER: afd-lazy (default), afd-individual, rmcp, floor
#                                       BIN: where the release binaries are (target/release)
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
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin/peers" --bin "$bin" --only "$peer" --transports http --clients raw \
    --seconds 8 --concurrency 64 --calls 200 > "$out" 2>&1 &
harness=$!
sleep 2.5
pid=$(pgrep -f "^$bin/$program" | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
sleep 4
after=$(ticks)
wait "$harness"
rate=$(grep -o '[0-9]* calls/s at 64$' "$out" | grep -o '^[0-9]*')
awk -v t=$((after - before)) -v hz="$hz" -v rate="$rate" -v peer="$peer" 'BEGIN {
    cpu = t / hz / 4
    printf "%s: %d calls/s at 64 in flight, server %.0f%% of a core, %.1f us of CPU a call\n",
        peer, rate, cpu * 100, cpu / rate * 1e6
}'
