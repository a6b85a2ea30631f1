#!/usr/bin/env bash
# The whole benchmark suite, one command: bench/run.sh [--criterion] [--quick]
#
#   1. compile cost of a 2,000-command catalog (bench/compile-cost.sh);
#   2. a release build of afd-bench with every catalog size (--features full);
#   3. in-process latency, median and p99, at 5 / 80 / 500 / 2,000 commands;
#   4. context cost per strategy and size, the typical interaction, and the reference's;
#   5. end to end over stdio and streamable HTTP at 80 and 2,000 commands, with the
#      reference TypeScript server over stdio (skipped where node or its build is missing);
#   6. with --criterion, the criterion benches as well (about 3 more minutes).
#
# Figures go to bench/results/: latest.md (the tables BENCHMARKS.md quotes) and
# latest.jsonl (every figure as JSON). The reference is built once with its setup.sh.
# --quick: shorter timings and no compile cost (a smoke run, not for BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
criterion=0 quick=0
for arg in "$@"; do
    case "$arg" in
        --criterion) criterion=1 ;;
        --quick) quick=1 ;;
        *) echo "usage: bench/run.sh [--criterion] [--quick]" >&2; exit 2 ;;
    esac
done
results=bench/results
mkdir -p "$results"
md="$results/latest.md" jsonl="$results/latest.jsonl"
: > "$jsonl"
started=$(date +%s)
reference=../shared/peer/afd-ts

{
    echo "# afd-rs benchmark run"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
    echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- $(rustc --version); node $(node --version 2>/dev/null || echo 'missing')"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$md"

if command -v node >/dev/null && [ -f "$reference/bench/shop.mjs" ] && [ ! -d "$reference/packages/server/dist" ]; then
    echo "== building the reference TypeScript server (once)" >&2
    "$reference/setup.sh" >&2
fi

if [ "$quick" = 0 ]; then
    echo "== compile cost" >&2
    { echo; echo "## Compile cost (bench/compile-cost.sh)"; echo; } >> "$md"
    bench/compile-cost.sh /dev/stdout >> "$md"
fi

echo "== release build, every catalog size" >&2
cargo build --locked --release -p afd-bench --features full --bins
bin="$CARGO_TARGET_DIR/release"

seconds=1.0 calls=2000 tput=3
[ "$quick" = 1 ] && seconds=0.2 calls=300 tput=1

echo "== in-process latency" >&2
{ echo; echo "## In-process latency (bin inprocess)"; } >> "$md"
"$bin/inprocess" --seconds "$seconds" --json "$jsonl" >> "$md"

echo "== context cost" >&2
{ echo; echo "## Context cost (bin context)"; } >> "$md"
"$bin/context" --reference "$reference" --json "$jsonl" >> "$md"

echo "== end to end" >&2
{ echo; echo "## End to end (bin e2e)"; } >> "$md"
"$bin/e2e" --commands 80,2000 --calls "$calls" --seconds "$tput" \
    --reference "$reference" --json "$jsonl" >> "$md"

if [ "$criterion" = 1 ]; then
    echo "== criterion" >&2
    cargo bench --locked -p afd-bench --features full --bench inprocess
fi

{
    echo
    echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg); suite wall time: $(( $(date +%s) - started )) s"
} >> "$md"
echo "== done in $(( $(date +%s) - started )) s: $md" >&2
