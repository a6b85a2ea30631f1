//! Interop with the official MCP Python client (PyPI `mcp`): `tests/interop/client.py`
//! drives the todo example server over stdio (initialize, 2025-11-25), over stdio with the
//! stateless 2026-07-28 `server/discover`, and over streamable HTTP.
//!
//! `.ci/run` installs the client into a venv, builds the example and sets
//! `AFD_INTEROP_PYTHON`; without it (a developer machine with no venv) the test says so and
//! passes without running, except under `CI`, where it fails. To run it by hand:
//!
//! ```sh
//! python3 -m venv .venv && .venv/bin/pip install mcp
//! cargo build --example todo
//! AFD_INTEROP_PYTHON=.venv/bin/python cargo test -p afd-tests --test interop
//! ```

use std::path::PathBuf;

#[test]
fn the_official_python_client_drives_the_example_server() {
    let Some(python) = afd_tests::python::client() else {
        return;
    };
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("debug/examples/todo");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --example todo` first",
        binary.display()
    );
    afd_tests::python::run_checks(&python, "client.py", [&binary]);
}
