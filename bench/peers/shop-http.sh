#!/usr/bin/env bash
# The shop's own commands against the bench's trivial command over streamable HTTP, side by
# side in one run: wrk with 64 connections (one call in flight on each), the stateless
# protocol, every call through afd-call on a lazy server; rounds interleaved so that the
# machine's drift falls on every row alike. What the blocking pool is chosen against:
# a quick `#[command(blocking)]` read (report-inventory-value) on the blocking pool (the
# default) and inline on the async workers (AFD_BLOCKING_POOL=off); then reads (plan-list,
# 56 connections) while writes run beside them (inventory-restock, `blocking`, 8
# connections), the writes on the pool and inline.
#
#   bench/peers/shop-http.sh [ROUNDS] [SECONDS] [BIN]
#       ROUNDS (3), SECONDS per run (5), BIN: where the release binaries are (target/release)
#
# Needs wrk and the release binaries: cargo build --release -p afd-bench --bin serve;
# cargo build --release -p afd-examples --example shop. Fails if any call fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
seconds=${2:-5}
bin=$(cd "${3:-target/release}" && pwd)
lua=$PWD/bench/peers/wrk-call.lua
work=$(mktemp -d)
server=
cleanup() {
    [ -n "$server" ] && kill "$server" 2> /dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

shop="$bin/examples/shop --db $work/shop.sqlite3 serve --strategy lazy --http 127.0.0.1:{port}"
restock='{"command":"inventory-restock","input":{"productId":1,"quantity":1}}'
# name | command line ({port} for the port) | environment | afd-call's arguments | writes beside
rows=(
    "trivial order-list {limit: 5} (bench catalog)|$bin/serve --commands 80 --strategy lazy --http 127.0.0.1:{port}||{\"command\":\"order-list\",\"input\":{\"limit\":5}}|"
    "shop order-list {limit: 1}|$shop||{\"command\":\"order-list\",\"input\":{\"limit\":1}}|"
    "shop plan-list|$shop||{\"command\":\"plan-list\",\"input\":{}}|"
    "shop report-inventory-value on the pool|$shop||{\"command\":\"report-inventory-value\",\"input\":{}}|"
    "shop report-inventory-value inline|$shop|AFD_BLOCKING_POOL=off|{\"command\":\"report-inventory-value\",\"input\":{}}|"
    "shop plan-list beside writes on the pool|$shop||{\"command\":\"plan-list\",\"input\":{}}|$restock"
    "shop plan-list beside writes inline|$shop|AFD_BLOCKING_POOL=off|{\"command\":\"plan-list\",\"input\":{}}|$restock"
)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# One run: start the server, check one call answers, wrk for $seconds; prints "rate median_us".
run() {
    local command=$1 environment=$2 arguments=$3 writes=$4 port
    port=$(free_port)
    # shellcheck disable=SC2086
    env $environment ${command//\{port\}/$port} > "$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 200); do
        curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break
        sleep 0.05
    done
    local out
    out=$(TOOL=afd-call ARGS=$arguments wrk -t1 -c64 -d1s -s "$lua" "http://127.0.0.1:$port/mcp")
    if ! grep -q '^failed 0$' <<< "$out"; then
        echo "a call failed: $command with $arguments" >&2
        exit 1
    fi
    local connections=64 beside=
    if [ -n "$writes" ]; then
        connections=56
        TOOL=afd-call ARGS=$writes wrk -t1 -c8 -d"${seconds}s" -s "$lua" \
            "http://127.0.0.1:$port/mcp" > "$work/writes.txt" &
        beside=$!
    fi
    out=$(TOOL=afd-call ARGS=$arguments wrk -t1 -c$connections -d"${seconds}s" -s "$lua" "http://127.0.0.1:$port/mcp")
    local writes_rate=-
    if [ -n "$beside" ]; then
        wait "$beside"
        if ! grep -q '^failed 0$' "$work/writes.txt"; then
            echo "a write failed beside $arguments" >&2
            exit 1
        fi
        writes_rate=$(awk '/^Requests\/sec:/ {printf "%d", $2}' "$work/writes.txt")
    fi
    kill "$server"
    wait "$server" 2> /dev/null || true
    server=
    if ! grep -q '^failed 0$' <<< "$out"; then
        echo "a call failed: $command with $arguments" >&2
        exit 1
    fi
    local rate median
    rate=$(awk '/^Requests\/sec:/ {printf "%d", $2}' <<< "$out")
    median=$(awk '/^median_us/ {print $2}' <<< "$out")
    echo "$rate $median $writes_rate"
}

declare -A rates medians beside
for round in $(seq "$rounds"); do
    for i in "${!rows[@]}"; do
        IFS='|' read -r name command environment arguments writes <<< "${rows[$i]}"
        read -r rate median writes_rate < <(run "$command" "$environment" "$arguments" "$writes")
        rates[$i]+="$rate "
        medians[$i]+="$median "
        beside[$i]+="$writes_rate "
        echo "round $round: $name: $rate calls/s, median $median us, writes beside: $writes_rate/s" >&2
    done
done

middle() { tr ' ' '\n' | { grep . || true; } | sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
trivial=$(middle <<< "${rates[0]}")
echo
echo "| command (afd-call over HTTP, 64 in flight, ${seconds} s, $rounds rounds) | calls/s, each round | median of rounds | over the trivial | call median (us) | writes/s beside |"
echo "|---|---|---:|---:|---:|---:|"
for i in "${!rows[@]}"; do
    IFS='|' read -r name _ <<< "${rows[$i]}"
    rate=$(middle <<< "${rates[$i]}")
    median=$(middle <<< "${medians[$i]}")
    ratio=$(awk -v a="$rate" -v b="$trivial" 'BEGIN {printf "%.2fx", a / b}')
    writes=$(middle <<< "${beside[$i]//-/}")
    echo "| $name | ${rates[$i]% } | $rate | $ratio | $median | ${writes:--} |"
done
