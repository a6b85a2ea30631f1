//! What the `afd-search-eval` binary and its criterion bench (`benches/search.rs`) share:
//! loading the real MCP catalogs of `shared/eval`, a synthetic catalog of any size, and
//! (feature `semantic`) a semantic index over one.

pub mod catalogs;
#[cfg(feature = "semantic")]
pub mod semantic_catalog;
pub mod synthetic;
