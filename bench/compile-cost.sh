#!/usr/bin/env bash
# Compile cost of the #[command] DSL: the generated catalogs of COMPILE_COST_SIZES
# (AFD_BENCH_SIZES, default 2000; bench/run.sh passes 5,80,500,2000, the build its benches
# then run; for 10000 see BENCHMARKS.md, "Compile cost") in the afd-bench crate, against the
# same crate with 5 commands.
#   - release: build time and peak rustc RSS of the crate and its binaries (the build the
#     benches then use), and the `serve` binary's size (a release build is not incremental:
#     after an edit it costs the same);
#   - dev: build time and peak RSS of the crate and one binary (`serve`, as an app's
#     server), then its incremental rebuild after one command's doc comment changes
#     (AFD_BENCH_EDIT, read by bench/build.rs);
#   - with COMPILE_COST_PLAIN=1 also the release build of the same functions and input
#     structs without #[command] (AFD_BENCH_PLAIN=1): what the derives alone cost.
# Dependencies are built first (with 5 commands) so the figures are the catalog crate's
# own. Every build runs under `ulimit -v` (COMPILE_COST_VMEM_KB, default 16000000 KiB, or
# `unlimited`) so that a runaway rustc fails instead of taking the machine's memory (it
# limits address space, which rustc reserves well beyond what it uses); COMPILE_COST_JOBS
# passes -j to cargo (fewer parallel LLVM modules, less memory).
# Usage: bench/compile-cost.sh [results.md]   (the table goes to stdout without it; uses $CARGO_TARGET_DIR/compile-cost, or
# $COMPILE_COST_TARGET: a target directory whose dependencies are already built saves their
# build; the afd-bench artifacts in it are replaced, and left built with the sizes measured)
set -euo pipefail
cd "$(dirname "$0")/.."
# The table: to the file given, or stdout (opening /dev/stdout for writing would truncate
# a file it is redirected to).
if [ -n "${1:-}" ]; then exec 3>"$1"; else exec 3>&1; fi
target="${COMPILE_COST_TARGET:-${CARGO_TARGET_DIR:-$PWD/target}/compile-cost}"
export CARGO_TARGET_DIR="$target"
unset AFD_BENCH_EDIT AFD_BENCH_PLAIN
sizes=${COMPILE_COST_SIZES:-${COMPILE_COST_N:-2000}}
# Commands in the measured catalogs (a catalog of N registers N; the 8 seed commands are
# compiled once whatever the sizes).
n=0
for size in ${sizes//,/ }; do n=$((n + size)); done
ulimit -v "${COMPILE_COST_VMEM_KB:-16000000}"
jobs=()
[ -n "${COMPILE_COST_JOBS:-}" ] && jobs=(-j "$COMPILE_COST_JOBS")
times=$(mktemp) log=$(mktemp)
trap 'rm -f "$times" "$log"' EXIT

# measure <command...>: runs quietly; prints "<wall seconds> <peak RSS MiB>" (the peak is
# the largest process of the build: rustc). A failed build prints the end of its output.
measure() {
    if ! /usr/bin/time -f '%e %M' -o "$times" "$@" >"$log" 2>&1; then
        echo "failed: $*" >&2
        tail -n 30 "$log" >&2
        exit 1
    fi
    awk '{ printf "%s %.0f\n", $1, $2 / 1024 }' "$times"
}
# The builds the steps time (arrays, not functions: /usr/bin/time runs programs): every
# binary (release, what the benches run), or the crate and `serve` alone.
build=(cargo build --locked -p afd-bench --bins "${jobs[@]}")
serve=(cargo build --locked -p afd-bench --bin serve "${jobs[@]}")

echo "compile-cost: dependencies (not timed)" >&2
AFD_BENCH_SIZES=5 "${serve[@]}" --release >/dev/null 2>&1 || AFD_BENCH_SIZES=5 "${serve[@]}" --release
size5=$(stat -c %s "$target/release/serve")
AFD_BENCH_SIZES=5 "${serve[@]}" >/dev/null 2>&1 || AFD_BENCH_SIZES=5 "${serve[@]}"

plain=""
if [ "${COMPILE_COST_PLAIN:-0}" = 1 ]; then
    echo "compile-cost: release, catalogs $sizes without #[command]" >&2
    plain=$(AFD_BENCH_PLAIN=1 AFD_BENCH_SIZES=$sizes measure "${build[@]}" --release)
fi
echo "compile-cost: release, catalogs $sizes" >&2
read -r release release_rss < <(AFD_BENCH_SIZES=$sizes measure "${build[@]}" --release)
sizen=$(stat -c %s "$target/release/serve")
echo "  release: $release s, $release_rss MiB" >&2
echo "compile-cost: dev, catalogs $sizes" >&2
read -r dev dev_rss < <(AFD_BENCH_SIZES=$sizes measure "${serve[@]}")
echo "  dev: $dev s, $dev_rss MiB" >&2
echo "compile-cost: dev, one command edited" >&2
read -r edit edit_rss < <(AFD_BENCH_SIZES=$sizes AFD_BENCH_EDIT="Edited $(date +%s)." measure "${serve[@]}")

mib() { echo "scale=1; $1 / 1048576" | bc; }
{
    echo "| what (catalogs of $sizes: $n generated commands in the afd-bench crate) | wall time | peak rustc RSS |"
    echo "|---|---|---|"
    if [ -n "$plain" ]; then
        read -r plain_time plain_rss <<<"$plain"
        echo "| release build, the same functions and input structs without \`#[command]\` | $plain_time s | $plain_rss MiB |"
    fi
    echo "| release build of the crate and its 5 binaries (deps prebuilt) | $release s | $release_rss MiB |"
    echo "| dev build of the crate and \`serve\` (deps prebuilt) | $dev s | $dev_rss MiB |"
    echo "| dev incremental rebuild of the crate and \`serve\` after one command's doc comment changed | $edit s | $edit_rss MiB |"
    echo
    echo "| release \`serve\` binary | size |"
    echo "|---|---|"
    echo "| catalogs $sizes | $(mib "$sizen") MiB |"
    echo "| 5 commands | $(mib "$size5") MiB |"
    echo "| per command | $(( (sizen - size5) / (n - 5) )) bytes |"
} >&3
