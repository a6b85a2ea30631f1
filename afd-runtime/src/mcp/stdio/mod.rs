//! The stdio transport: a byte stream of newline-delimited JSON-RPC, `tools/call` answered in
//! front of rmcp (`front`), lines read within a bound (`lines`), and a call's notifications
//! kept before its response (`order`).

mod front;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
mod lines;
mod order;
