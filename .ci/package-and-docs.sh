#!/usr/bin/env bash
# The crates.io and docs.rs checks of the published crates (afd-macros, afd-runtime,
# afd-oauth, afd-client, afd-gateway), one step of .ci/run:
#
# 1. `cargo package` packs each crate from its own files (packaged together, the runtime
#    finds the macro crate's package before it is on crates.io) and prints each package's
#    file count and size.
# 2. The packages are unpacked side by side into a workspace of their own whose `[patch]`
#    points each at the others' unpacked copies, with the workspace's lock file: what builds
#    there builds from the packages' files alone, as it would from crates.io.
# 3. In that workspace, the documentation as docs.rs builds it (`--cfg docsrs`, which turns
#    on `doc(cfg)` so every feature-gated item says which feature it needs; the features
#    each crate's `[package.metadata.docs.rs]` names; warnings as errors: broken intra-doc
#    links, missing docs), then `cargo check` of every library and binary with the same
#    features. One resolution for both: the dependencies are checked once.
#
# `--full` replaces step 3's check by cargo's own verification: `cargo package` builds each
# unpacked package in turn with its default features (each build resolves its dependencies
# on its own and compiles them again: about eleven minutes more on 2 cores).
#
# The docs build uses the machine's toolchain as docs.rs's nightly would: `doc(cfg)` is
# unstable, so `RUSTC_BOOTSTRAP=1` lets this rustdoc take it (CI has one toolchain, and
# fetches no other).
#
# Run it with CARGO_TARGET_DIR set to keep its builds apart from the workspace's (.ci/run
# does, to run it beside the tests).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

full=""
if [ "${1:-}" = "--full" ]; then full=1; fi

published=(afd-macros afd-runtime afd-oauth afd-client afd-gateway)
# The target directory, and the version the published crates share (the workspace's).
read -r target version < <(cargo metadata --no-deps --format-version 1 | python3 -c '
import json, sys
meta = json.load(sys.stdin)
print(meta["target_directory"], next(p["version"] for p in meta["packages"] if p["name"] == "afd-runtime"))')

echo "== package: ${published[*]}"
args=()
for crate in "${published[@]}"; do args+=(-p "$crate"); done
if [ -n "$full" ]; then
    cargo package --locked "${args[@]}"
else
    cargo package --locked --no-verify "${args[@]}"
fi
for crate in "${published[@]}"; do
    file="$target/package/$crate-$version.crate"
    echo "-- $crate: $(tar -tzf "$file" | grep -vc '/$') files, $(du -h "$file" | cut -f1) compressed"
done

echo "== the packages, unpacked into a workspace of their own"
unpacked="$target/package-check"
rm -rf "$unpacked"
mkdir -p "$unpacked"
members=()
for crate in "${published[@]}"; do
    # `-m`: the files take the time of unpacking, not the package's, so that a target
    # directory kept from an earlier run builds and documents them again.
    tar -xzmf "$target/package/$crate-$version.crate" -C "$unpacked"
    # What cargo adds to a package beside its files; not part of the build.
    rm -f "$unpacked/$crate-$version/.cargo_vcs_info.json"
    members+=("\"$crate-$version\"")
done
{
    echo "[workspace]"
    echo "members = [$(IFS=,; echo "${members[*]}")]"
    echo "resolver = \"3\""
    echo
    echo "# The packages depend on each other by version, as on crates.io: these are the copies."
    echo "[patch.crates-io]"
    for crate in "${published[@]}"; do echo "$crate = { path = \"$crate-$version\" }"; done
    echo
    # The workspace's profile, so that the dependencies its builds share come out the same.
    python3 - "$root/Cargo.toml" <<'PY'
import sys, tomllib
profile = tomllib.load(open(sys.argv[1], "rb")).get("profile", {}).get("dev", {})
def value(v):
    return f'"{v}"' if isinstance(v, str) else str(v).lower()
print("[profile.dev]")
for key, v in profile.items():
    if not isinstance(v, dict):
        print(f"{key} = {value(v)}")
for name, table in profile.get("package", {}).items():
    print(f'\n[profile.dev.package."{name}"]')
    for key, v in table.items():
        print(f"{key} = {value(v)}")
PY
} > "$unpacked/Cargo.toml"
# The versions the workspace's lock file pins (cargo drops the entries these packages do not use).
cp Cargo.lock "$unpacked/Cargo.lock"
cd "$unpacked"
export CARGO_TARGET_DIR="$target"

# Each crate's docs.rs features (afd-runtime's: all but `fuzzing`, its Cargo.toml says why).
features=$(python3 - "$version" "${published[@]}" <<'PY'
import sys, tomllib
features = []
for crate in sys.argv[2:]:
    manifest = tomllib.load(open(f"{crate}-{sys.argv[1]}/Cargo.toml", "rb"))
    docs = manifest["package"].get("metadata", {}).get("docs", {}).get("rs", {})
    names = manifest.get("features", {}).keys() if docs.get("all-features") else docs.get("features", [])
    features += [f"{crate}/{name}" for name in names if name != "default"]
print(",".join(features))
PY
)
echo "-- features: $features"

# Both steps below run with RUSTC_BOOTSTRAP=1, which the docs build needs: some
# dependencies' build scripts read it (to probe for nightly features), so a check without it
# would check every dependency again.
export RUSTC_BOOTSTRAP=1

echo "== docs, as docs.rs builds them (--cfg docsrs, -D warnings)"
# afd-client is a binary alone: docs.rs documents libraries.
RUSTDOCFLAGS="--cfg docsrs -D warnings" cargo doc --no-deps \
    -p afd-macros -p afd-runtime -p afd-oauth -p afd-gateway --features "$features"

if [ -z "$full" ]; then
    echo "== check: every library and binary, from the packages' files alone"
    cargo check --workspace --lib --bins --features "$features"
fi
