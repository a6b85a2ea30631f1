//! The committed corpus of every fuzz target, replayed through the target's check as a
//! plain test: each input the fuzzers kept keeps passing without a fuzzer (add a crash's
//! input to `corpus/<target>/` once it is fixed). Fuzzing itself is `fuzz/run.sh`.

use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use afd_fuzz::targets;

/// Runs every file of `corpus/<target>` through `check`, and names the files that fail.
fn replay(target: &str, check: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut inputs: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    assert!(!inputs.is_empty(), "no corpus in {}", dir.display());
    inputs.sort();
    let failed: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = fs::read(path).expect("a corpus file");
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{target}: {} of {} inputs fail: {failed:?}",
        failed.len(),
        inputs.len()
    );
}

#[test]
fn authorization() {
    replay("authorization", targets::authorization::run);
}

#[test]
fn command_input() {
    replay("command_input", targets::command_input::run);
}

#[test]
fn gateway_config() {
    replay("gateway_config", targets::gateway_config::run);
}

#[test]
fn pipe() {
    replay("pipe", targets::pipe::run);
}

#[test]
fn search_query() {
    replay("search_query", targets::search_query::run);
}

#[test]
fn stdio_line() {
    replay("stdio_line", targets::stdio_line::run);
}
