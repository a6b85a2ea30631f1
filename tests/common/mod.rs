//! Shared fixtures of the integration tests, and the README's example as a doctest.

/// The repository's README: its Rust example is compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct ReadmeExample;

pub mod checks;
pub mod conformance;
pub mod entrance;
pub mod http;
pub mod mcp;
pub mod oauth;
pub mod python;
pub mod services;
