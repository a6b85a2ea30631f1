//! The report of the check scripts the client tests run (the official Python client's
//! scripts in `tests/interop/`, the TypeScript client's `tests/interop/ts/client.mjs`): each
//! prints one line per check and ends with `N passed, M failed`.

use std::process::Output;

/// Shows what the `who` client printed and asserts that it exited cleanly and that its
/// last line reports checks and no failure; returns its standard output.
pub fn assert_passed(output: &Output, who: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    eprintln!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{who} reported failures");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(
        last.ends_with(" 0 failed") && !last.starts_with("0 passed"),
        "{who}: {last}"
    );
    stdout
}
