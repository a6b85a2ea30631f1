//! Example apps built on afd-rs. Each module is a set of `#[command]` functions over a real
//! store; the example binaries under `examples/` drive them.

pub mod apps;
pub mod report;
pub mod review;
pub mod serve;
pub mod shop;
mod sqlite;
pub mod todo;
