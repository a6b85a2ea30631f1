//! What the `afd-search-eval` binary and its criterion bench (`benches/search.rs`) share:
//! loading the real MCP catalogs of `shared/eval`, and a synthetic catalog of any size.

pub mod catalogs;
pub mod synthetic;
