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
    // The cases compile with the plain compiler even when this build runs under another
    // (CI builds the workspace with clippy-driver as its compiler, to lint and build in one
    // pass): clippy's lints are not part of the snapshots. And without debug info, which
    // nothing here reads: trybuild builds the cases' dependencies again, in a target
    // directory of its own, and that is most of this test's time.
    // SAFETY: this binary's only test, on its only thread that reads the environment.
    unsafe {
        std::env::remove_var("RUSTC_WORKSPACE_WRAPPER");
        std::env::set_var("CARGO_PROFILE_DEV_DEBUG", "false");
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
