#!/usr/bin/env bash
# Builds the fuzz targets and runs each in turn, one fuzzer process at a time.
#
#   fuzz/run.sh [SECONDS] [TARGET...]   each target (default: all) for SECONDS (default 60)
#   FUZZ_UPDATE_CORPUS=1 fuzz/run.sh    then merge what was found into fuzz/corpus/<target>,
#                                       minimised with `cargo fuzz cmin`
#   FUZZ_PROFILE=dev fuzz/run.sh 5      an unoptimised build: quicker to build, slower to run
#
# Needs cargo-fuzz (`cargo install --locked cargo-fuzz`). Works on stable Rust: the targets
# are built without a sanitizer (`-s none`, since `-Zsanitizer` needs nightly); libFuzzer's
# coverage instrumentation, debug assertions, and Rust's own panics and bounds checks still
# apply. Each run reads the committed corpus and writes new inputs to
# fuzz/target/corpus/<target> (not committed); a crash is saved under fuzz/artifacts/<target>/
# and fails the script.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-60}"
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

# The libFuzzer binaries are behind feature `libfuzzer` (the workspace's own builds leave
# them out); a crash's backtrace names files and lines.
build=(-s none --features libfuzzer)
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-line-tables-only}"
if [ "${FUZZ_PROFILE:-release}" = dev ]; then
    build+=(--dev)
fi

# The workspace's lock file is committed: refuse to change it (as `--locked` does).
cargo fetch --locked
cargo fuzz build "${build[@]}"

for target in "${targets[@]}"; do
    echo "== fuzz $target for ${seconds}s"
    mkdir -p "corpus/$target" "target/corpus/$target"
    cargo fuzz run "${build[@]}" "$target" "target/corpus/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -dict=json.dict \
        -print_final_stats=1
    if [ "${FUZZ_UPDATE_CORPUS:-0}" = 1 ]; then
        cp -n "target/corpus/$target"/* "corpus/$target/" 2>/dev/null || true
        cargo fuzz cmin "${build[@]}" "$target" "corpus/$target" -- -dict=json.dict
    fi
done
