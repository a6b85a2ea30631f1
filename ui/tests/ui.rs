//! Compile-time diagnostics of `#[command]` (trybuild): every mistake in `fail/` must
//! fail with exactly the message in its `.stderr`, and every form in `pass/` must build
//! and run. Regenerate snapshots with `TRYBUILD=overwrite cargo test -p afd-ui-tests --test ui`.
//!
//! Compiler messages change between releases, so the snapshots are pinned to rustc 1.95
//! (the toolchain of the project's machines and CI); on another compiler the test says so
//! and checks nothing rather than fail on wording.

use std::io::Write;
use std::process::Command;

/// The compiler the `.stderr` snapshots were written with.
const PINNED: &str = "1.95.";

#[test]
fn command_attribute_diagnostics() {
    let version = rustc_version();
    if !version.as_deref().is_some_and(|v| v.starts_with(PINNED)) {
        // Straight to stderr, past the test harness's capture, so the skip is seen.
        let found = version.as_deref().unwrap_or("unknown");
        let _ = writeln!(
            std::io::stderr(),
            "UI snapshots are pinned to rustc 1.95; this is rustc {found}: skipping them"
        );
        return;
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("fail/*.rs");
    cases.pass("pass/*.rs");
}

/// `1.95.0` from `rustc 1.95.0 (59807616e 2026-04-14)`, for the rustc trybuild will run.
fn rustc_version() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let stdout = String::from_utf8(output.stdout).ok()?;
    let version = stdout.strip_prefix("rustc ")?.split_whitespace().next()?;
    Some(version.to_owned())
}
