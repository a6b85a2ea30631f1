//! Compile-time diagnostics of `#[command]` (trybuild): every mistake in `ui/fail/` must
//! fail with exactly the message in its `.stderr`, and every form in `ui/pass/` must build
//! and run. Regenerate snapshots with `TRYBUILD=overwrite cargo test -p afd-tests --test ui`.
//!
//! Compiler messages change between releases, so the snapshots are pinned to rustc 1.95
//! (the toolchain of the project's machines and CI); on another compiler the test says so
//! and checks nothing rather than fail on wording.

use std::process::Command;

const PINNED: &str = "rustc 1.95.";

#[test]
fn command_attribute_diagnostics() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    match version {
        Ok(version) if version.starts_with(PINNED) => {}
        other => {
            eprintln!("UI snapshots are pinned to {PINNED}x; this compiler is {other:?}: skipped");
            return;
        }
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/fail/*.rs");
    cases.pass("ui/pass/*.rs");
}
