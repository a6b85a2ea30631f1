//! The search-quality floors: `tune/floors.sh` over both development sets, lexically and,
//! with feature `semantic` and a model folder, with the semantic layer; each query alone
//! and with an agent's phrasings. A figure under its floor fails the test.
//!
//! Needs the evaluation folder (`../shared/eval` beside the repository, or
//! `AFD_EVAL_DIR`), `python3` for its scorer, and for the semantic rows the
//! all-MiniLM-L6-v2 folder in `AFD_TEST_EMBED_MODEL`. Without them the test (or its
//! semantic rows) says it skipped, and fails under `CI`. In debug it takes a minute or two.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A folder named by `var`, or `None` outside CI; under CI a missing one fails.
fn required(var: &str, default: Option<PathBuf>, what: &str) -> Option<PathBuf> {
    let dir = std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or(default)
        .filter(|dir| dir.is_dir());
    if dir.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is missing under CI: set {var}"
        );
        eprintln!("skipped: {what} is missing ({var})");
    }
    dir
}

#[test]
fn search_quality_stays_above_its_floors() {
    let package = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Some(eval) = required(
        "AFD_EVAL_DIR",
        Some(package.join("../../shared/eval")),
        "the evaluation folder",
    ) else {
        return;
    };
    let model = if cfg!(feature = "semantic") {
        required("AFD_TEST_EMBED_MODEL", None, "the embedding model folder")
    } else {
        eprintln!("the semantic rows skipped: built without feature `semantic`");
        None
    };

    let output = Command::new("bash")
        .arg(package.join("tune/floors.sh"))
        .arg(env!("CARGO_BIN_EXE_afd-search-eval"))
        .arg(&eval)
        .args(&model)
        .output()
        .expect("bash runs tune/floors.sh");
    let report = String::from_utf8_lossy(&output.stdout);
    println!("{report}");
    assert!(
        output.status.success(),
        "a floor is not met:\n{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
