#!/usr/bin/env bash
# Compile cost of the #[command] DSL: an N-command generated catalog alone in the afd-bench
# crate (AFD_BENCH_SIZES=N, N=${COMPILE_COST_N:-2000}), against the same crate with 5
# commands. (N=10000 needs more memory than a 24 GiB machine has in release: BENCHMARKS.md.)
#   - release: build time of the crate and its `serve` binary, and the binary's size (a
#     release build is not incremental: after an edit it costs the same again);
#   - dev: build time, then the incremental rebuild after one command's doc comment
#     changes (AFD_BENCH_EDIT, read by bench/build.rs).
# Dependencies are built first (with 5 commands) so the times are the catalog crate's own.
# Usage: bench/compile-cost.sh [results.md]   (uses $CARGO_TARGET_DIR/compile-cost)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/dev/stdout}
target="${CARGO_TARGET_DIR:-$PWD/target}/compile-cost"
export CARGO_TARGET_DIR="$target"
unset AFD_BENCH_EDIT
n=${COMPILE_COST_N:-2000}

seconds() { # seconds <command...>: run quietly, print the wall time in seconds
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; "$@"; exit 1; }
    end=$(date +%s.%N)
    echo "$end - $start" | bc
}
build() { cargo build --locked -p afd-bench --bin serve "$@"; }

echo "compile-cost: dependencies (not timed)" >&2
AFD_BENCH_SIZES=5 build --release >/dev/null 2>&1 || AFD_BENCH_SIZES=5 build --release
size5=$(stat -c %s "$target/release/serve")
AFD_BENCH_SIZES=5 build >/dev/null 2>&1 || AFD_BENCH_SIZES=5 build

echo "compile-cost: release, $n commands" >&2
release=$(AFD_BENCH_SIZES=$n seconds build --release)
sizen=$(stat -c %s "$target/release/serve")
echo "compile-cost: dev, $n commands" >&2
dev=$(AFD_BENCH_SIZES=$n seconds build)
echo "compile-cost: dev, one command edited" >&2
edit=$(AFD_BENCH_SIZES=$n AFD_BENCH_EDIT="Edited $(date +%s)." seconds build)

mib() { echo "scale=1; $1 / 1048576" | bc; }
{
    echo "| what ($n generated commands, afd-bench crate + serve binary) | figure |"
    echo "|---|---|"
    printf '| release build of the catalog crate and binary (deps prebuilt) | %.1f s |\n' "$release"
    printf '| dev build of the catalog crate and binary (deps prebuilt) | %.1f s |\n' "$dev"
    printf '| dev incremental rebuild after one command changed | %.1f s |\n' "$edit"
    echo "| release \`serve\` binary, $n commands | $(mib "$sizen") MiB |"
    echo "| release \`serve\` binary, 5 commands | $(mib "$size5") MiB |"
    echo "| per command | $(( (sizen - size5) / (n - 5) )) bytes |"
} > "$out"
