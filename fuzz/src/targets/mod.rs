//! Each fuzz target's check of one input, as a function: `fuzz_targets/<name>.rs` hands it
//! libFuzzer's inputs, and `tests/corpus.rs` replays the committed corpus through it under
//! `cargo test`.

pub mod authorization;
pub mod command_input;
pub mod gateway_config;
pub mod pipe;
pub mod search_query;
pub mod stdio_line;
