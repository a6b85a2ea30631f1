//! The official MCP Python client (PyPI `mcp`) the interop tests drive servers with:
//! where it is (`AFD_INTEROP_PYTHON`, which `.ci/run` sets), and running one of the check
//! scripts in `tests/interop/` with it.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::services::missing;

/// The Python with the `mcp` package (`AFD_INTEROP_PYTHON`). Without it a test says so and
/// returns on a developer machine, and fails under `CI`.
pub fn client() -> Option<String> {
    match std::env::var("AFD_INTEROP_PYTHON") {
        Ok(python) if !python.is_empty() => Some(python),
        _ => missing("AFD_INTEROP_PYTHON is not set"),
    }
}

/// Runs `tests/interop/<script>` with `python` and `args`, shows what it printed, and
/// asserts that it exited cleanly and its last line reports checks and no failure.
pub fn run_checks<I, S>(python: &str, script: &str, args: I)
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("interop")
        .join(script);
    let output = Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .expect("python runs");
    crate::checks::assert_passed(&output, &format!("{script} (the Python client)"));
}
