#!/usr/bin/env bash
# The whole benchmark suite, one command: bench/run.sh [--criterion] [--quick] [--n10000]
#
#   1. compile cost (bench/compile-cost.sh) of the catalogs the benches then run, 5 / 80 /
#      500 / 2,000 commands: their release build (the build the benches use), their dev
#      build and an incremental rebuild;
#   2. in-process latency, median and p99, at 5 / 80 / 500 / 2,000 generated commands, and
#      at 2,000 / 10,000 run-time-built ones (bin synthetic);
#   3. context cost per strategy and size, the typical interaction, and the reference's;
#   4. end to end over stdio and streamable HTTP at 80 and 2,000 generated commands and
#      10,000 run-time-built ones, with the reference TypeScript server over stdio at the
#      same sizes (skipped where node or its build is missing);
#   5. with --n10000, the generated 10,000-command catalog as well: its compile cost, and
#      its in-process and end-to-end figures (about 30 more minutes on 2 cores);
#   6. with --criterion, the criterion benches as well (about 3 more minutes).
#
# Figures go to bench/results/: latest.md (the tables BENCHMARKS.md quotes) and
# latest.jsonl (every figure as JSON). The reference is built once with its setup.sh
# (AFD_REFERENCE=<dir> points at a copy built elsewhere).
# --quick: shorter timings and no compile cost (a smoke run, not for BENCHMARKS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"
criterion=0 quick=0 huge=0
for arg in "$@"; do
    case "$arg" in
        --criterion) criterion=1 ;;
        --quick) quick=1 ;;
        --n10000) huge=1 ;;
        *) echo "usage: bench/run.sh [--criterion] [--quick] [--n10000]" >&2; exit 2 ;;
    esac
done
# The generated catalogs every step uses: one release build serves all of them.
export AFD_BENCH_SIZES=5,80,500,2000
results=bench/results
mkdir -p "$results"
md="$results/latest.md" jsonl="$results/latest.jsonl"
# The commit measured, and whether the tree differs from it (the results aside).
commit="$(git rev-parse --short HEAD 2>/dev/null || echo '?')"
git diff --quiet HEAD -- . ":(exclude)$results" 2>/dev/null || commit="$commit (with local changes)"
: > "$jsonl"
started=$(date +%s)
# step <what>: says on stderr what starts, and records in the results how long the step
# before it took (the suite's own wall time, step by step).
steps=() last=$started current=""
step() {
    local now
    now=$(date +%s)
    if [ -n "$current" ]; then
        steps+=("| $current | $((now - last)) s |")
    fi
    current=$1 last=$now
    if [ -n "$1" ]; then
        echo "== $1" >&2
    fi
}
# The reference's directory: AFD_REFERENCE, or the peer copy (setup.sh builds it in place).
reference=${AFD_REFERENCE:-../shared/peer/afd-ts}

{
    echo "# afd-rs benchmark run"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); commit: $commit"
    echo "- machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "- $(rustc --version); node $(node --version 2>/dev/null || echo 'missing')"
    echo "- load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$md"

if command -v node >/dev/null && [ -f "$reference/bench/shop.mjs" ] && [ ! -d "$reference/packages/server/dist" ]; then
    step "building the reference TypeScript server (once)"
    "$reference/setup.sh" >&2
fi

if [ "$quick" = 0 ]; then
    step "compile cost (and the release build the benches use)"
    { echo; echo "## Compile cost (bench/compile-cost.sh)"; echo; } >> "$md"
    COMPILE_COST_SIZES=$AFD_BENCH_SIZES COMPILE_COST_TARGET="$CARGO_TARGET_DIR" \
        bench/compile-cost.sh >> "$md"
fi

step "release build (nothing to do after the compile cost)"
cargo build --locked --release -p afd-bench --bins
bin="$CARGO_TARGET_DIR/release"

seconds=0.5 calls=2000 tput=2
[ "$quick" = 1 ] && seconds=0.2 calls=300 tput=1

step "in-process latency"
{ echo; echo "## In-process latency (bin inprocess)"; } >> "$md"
"$bin/inprocess" --seconds "$seconds" --json "$jsonl" >> "$md"
step "in-process latency, run-time-built catalogs"
{ echo; echo "## In-process latency, run-time-built catalogs (bin synthetic)"; echo; } >> "$md"
"$bin/synthetic" --commands 2000,10000 --seconds "$seconds" >> "$md"

step "context cost"
{ echo; echo "## Context cost (bin context)"; } >> "$md"
"$bin/context" --reference "$reference" --json "$jsonl" >> "$md"

step "end to end, generated catalogs"
{ echo; echo "## End to end (bin e2e)"; } >> "$md"
"$bin/e2e" --commands 80,2000 --calls "$calls" --seconds "$tput" \
    --reference "$reference" --json "$jsonl" >> "$md"
step "end to end, 10,000 run-time-built commands"
{ echo; echo "## End to end, 10,000 run-time-built commands (bin e2e --synthetic)"; } >> "$md"
"$bin/e2e" --synthetic --commands 10000 --calls "$calls" --seconds "$tput" \
    --reference "$reference" --json "$jsonl" >> "$md"

if [ "$huge" = 1 ]; then
    step "the generated 10,000-command catalog"
    { echo; echo "## Compile cost, 10,000 generated commands (bench/compile-cost.sh)"; echo; } >> "$md"
    # In the same target directory (its dependencies are built): afd-bench is rebuilt with
    # the 10,000 catalog alone, which needs about 20 GB for rustc at its peak.
    COMPILE_COST_SIZES=10000 COMPILE_COST_TARGET="$CARGO_TARGET_DIR" \
        COMPILE_COST_VMEM_KB=${COMPILE_COST_VMEM_KB:-22000000} \
        bench/compile-cost.sh >> "$md"
    big="$CARGO_TARGET_DIR/release"
    { echo; echo "## In-process latency, 10,000 generated commands"; } >> "$md"
    "$big/inprocess" --seconds "$seconds" --json "$jsonl" >> "$md"
    { echo; echo "## End to end, 10,000 generated commands"; } >> "$md"
    "$big/e2e" --commands 10000 --calls "$calls" --seconds "$tput" \
        --reference "$reference" --json "$jsonl" >> "$md"
fi

if [ "$criterion" = 1 ]; then
    step "criterion"
    cargo bench --locked -p afd-bench --bench inprocess
fi

step ""
{
    echo
    echo "## Wall time"
    echo
    echo "| step | wall time |"
    echo "|---|---|"
    printf '%s\n' "${steps[@]}"
    echo "| **the suite** | **$(( $(date +%s) - started )) s** |"
    echo
    echo "- load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
} >> "$md"
echo "== done in $(( $(date +%s) - started )) s: $md" >&2
