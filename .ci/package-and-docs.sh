#!/usr/bin/env bash
# The crates.io and docs.rs checks of the published crates (afd-macros, afd-runtime,
# afd-client, afd-gateway), meant to run as one step of .ci/run:
#
# 1. `cargo package` builds each package from its own files alone and verifies it (a build
#    of the unpacked package): packaged together, the runtime finds the macro crate's
#    package before it is on crates.io. The file lists and sizes are printed.
# 2. The documentation as docs.rs builds it: nightly rustdoc with `--cfg docsrs` (which
#    turns on `doc(cfg)`, so every feature-gated item says which feature it needs) and the
#    features each crate's `[package.metadata.docs.rs]` names, warnings as errors (broken
#    intra-doc links, missing docs).
#
# Step 2 builds with the machine's toolchain as docs.rs's nightly would: `doc(cfg)` is
# unstable, so `RUSTC_BOOTSTRAP=1` lets this rustdoc take it (CI has one toolchain, and
# fetches no other).
set -euo pipefail
cd "$(dirname "$0")/.."

published=(afd-macros afd-runtime afd-client afd-gateway)
target="${CARGO_TARGET_DIR:-target}"

echo "== package: ${published[*]}"
args=()
for crate in "${published[@]}"; do args+=(-p "$crate"); done
# PACKAGE_QUICK=1 (what .ci/run sets, for its time budget): the packages and their file
# lists without the verifying builds, and no documentation build.
quick="${PACKAGE_QUICK:-}"
if [ -n "$quick" ]; then
    cargo package --locked --no-verify "${args[@]}"
else
    cargo package --locked "${args[@]}"
fi
for crate in "${published[@]}"; do
    file="$target/package/$crate-$(cargo metadata --no-deps --format-version 1 \
        | python3 -c "import json,sys; print(next(p['version'] for p in json.load(sys.stdin)['packages'] if p['name']=='$crate'))").crate"
    echo "-- $crate: $(tar -tzf "$file" | grep -vc '/$') files, $(du -h "$file" | cut -f1) compressed"
done

if [ -n "$quick" ]; then
    exit 0
fi

echo "== docs, as docs.rs builds them (--cfg docsrs, -D warnings)"
# afd-runtime's docs.rs features: all but `fuzzing` (its Cargo.toml says why). One
# invocation for the three library crates, so their dependencies are checked once.
runtime_features=$(python3 - <<'PY'
import tomllib
with open("afd-runtime/Cargo.toml", "rb") as f:
    print(",".join("afd-runtime/" + f for f in tomllib.load(f)["package"]["metadata"]["docs"]["rs"]["features"]))
PY
)
RUSTC_BOOTSTRAP=1 RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo doc --locked --no-deps \
    -p afd-macros -p afd-runtime -p afd-gateway --features "$runtime_features,afd-gateway/semantic"
