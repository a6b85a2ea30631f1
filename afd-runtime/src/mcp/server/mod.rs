//! The server itself, below every transport: what the builder computes once (the tools, their
//! advertised schemas, the listing of each strategy, the instructions), the listing of one
//! session, the one `tools/call` path and what it may ask of the client, resources, prompts
//! and completions, and what a request is to an operator (its span and metrics).

mod advertise;
pub(in crate::mcp) mod answer;
pub(in crate::mcp) mod asking;
mod builder;
pub(in crate::mcp) mod call;
#[cfg(feature = "http")]
pub(in crate::mcp) mod caller;
mod changes;
pub(in crate::mcp) mod client;
mod env;
pub(in crate::mcp) mod errors;
mod instructions;
pub(in crate::mcp) mod listing;
pub(in crate::mcp) mod observe;
mod progress;
pub(in crate::mcp) mod prompts;
pub(in crate::mcp) mod resources;
pub(in crate::mcp) mod rounds;
pub(in crate::mcp) mod state;
mod strategy;
pub(in crate::mcp) mod tasks;
pub(in crate::mcp) mod tools;
mod tools_list;

pub use builder::{BuildError, McpServerBuilder};
pub use changes::ListChanges;
pub use env::{
    BLOCKING_LIMIT_ENV, BLOCKING_POOL_ENV, COMPACT_SCHEMAS_ENV, LOADING_ENV, OUTPUT_SCHEMAS_ENV,
    REQUEST_STATE_KEYS_ENV, SESSION_META, STRATEGY_ENV,
};
pub use progress::Progress;
pub use resources::{CATALOG_URI, CATEGORIES_PREFIX, COMMANDS_PREFIX};
pub use state::McpServer;
pub use strategy::{Strategy, UnknownStrategy};
pub use tools::{BATCH, CALL, DETAIL, DISCOVER, DOCS, HELP, PIPE, SCHEMA};
