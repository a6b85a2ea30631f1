//! Interop with the official MCP TypeScript SDK client (npm `@modelcontextprotocol/sdk`,
//! pinned in `tests/interop/ts/package.json`): `tests/interop/ts/client.mjs` drives the shop
//! example over stdio and over streamable HTTP (initialize, list, discover, detail, call,
//! a failing call, batch, pipe, context enter and exit).
//!
//! `.ci/run` installs the packages (`npm ci`) and the workspace test run builds the example.
//! Without node or the packages the test says so and passes on a developer machine, and
//! fails under `CI`. To run it by hand:
//!
//! ```sh
//! (cd tests/interop/ts && npm ci)
//! cargo build --example shop
//! cargo test -p afd-tests --test interop_ts
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// Says why the test cannot run: a failure under `CI`, a note elsewhere.
fn missing(why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}: the TypeScript interop test cannot run (see tests/interop_ts.rs)"
    );
    eprintln!("{why}: the TypeScript interop test did not run (see tests/interop_ts.rs)");
}

fn node() -> Option<PathBuf> {
    let node = std::env::var_os("AFD_INTEROP_NODE").map_or_else(|| "node".into(), PathBuf::from);
    let version = Command::new(&node).arg("--version").output().ok()?;
    version.status.success().then_some(node)
}

#[test]
fn the_official_typescript_client_drives_the_shop() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = root.join("tests/interop/ts");
    let Some(node) = node() else {
        return missing("node is not installed (or AFD_INTEROP_NODE does not run)");
    };
    if !dir
        .join("node_modules/@modelcontextprotocol/sdk/package.json")
        .exists()
    {
        return missing("the npm packages are not installed (run `npm ci` in tests/interop/ts)");
    }
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("debug/examples/shop");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --example shop` first",
        binary.display()
    );
    let output = Command::new(&node)
        .arg(Path::new("client.mjs"))
        .arg(&binary)
        .current_dir(&dir)
        .output()
        .expect("node runs");
    let stdout = afd_tests::checks::assert_passed(&output, "the TypeScript interop client");
    for transport in ["stdio", "http"] {
        assert!(
            stdout.contains(&format!("ok   {transport}: afd-pipe")),
            "{transport} did not run through"
        );
    }
}
