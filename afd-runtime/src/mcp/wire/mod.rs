//! The JSON-RPC the fronts (stdio's, and HTTP's direct path) read and write by hand: the
//! `tools/call` requests they take and the responses they write (`message`), and the answers
//! to lines that are not a message rmcp would read (`malformed`).

pub(in crate::mcp) mod malformed;
pub(in crate::mcp) mod message;
