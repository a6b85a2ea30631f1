//! Shared fixtures of the integration tests.

pub mod checks;
pub mod conformance;
pub mod http;
pub mod mcp;
pub mod oauth;
pub mod python;
pub mod services;
