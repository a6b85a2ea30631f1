//! The names a server answers to from outside: the environment variables it reads at
//! start-up, and the `_meta` key that carries a session handle.

/// The `_meta` key that carries a session handle on any request (for tools whose
/// arguments cannot, such as a command's own tool).
pub const SESSION_META: &str = "afd/session";

/// The environment variable that overrides the strategy at start-up.
pub const STRATEGY_ENV: &str = "AFD_TOOL_STRATEGY";

/// The other environment variable that overrides the strategy at start-up, by the names
/// the design documents use: `eager` (every command its own tool: the individual
/// strategy) or `lazy`. [`STRATEGY_ENV`] wins when both are set.
pub const LOADING_ENV: &str = "TOOL_LOADING";

/// The environment variable that turns command tools' output schemas on or off at
/// start-up (`on`/`off`, `true`/`false`, `1`/`0`), over
/// [`McpServerBuilder::output_schemas`](crate::mcp::McpServerBuilder::output_schemas).
pub const OUTPUT_SCHEMAS_ENV: &str = "AFD_OUTPUT_SCHEMAS";

/// The environment variable that turns the compaction of advertised input schemas on or
/// off at start-up (`on`/`off`, `true`/`false`, `1`/`0`), over
/// [`McpServerBuilder::compact_schemas`](crate::mcp::McpServerBuilder::compact_schemas).
pub const COMPACT_SCHEMAS_ENV: &str = "AFD_COMPACT_SCHEMAS";

/// The environment variable that sends `#[command(blocking)]` handlers to the blocking
/// pool or runs them inline at start-up (`on`/`off`, `true`/`false`, `1`/`0`; default on),
/// through [`blocking::set_pool`](crate::blocking::set_pool): off is for measuring what
/// the pool buys.
pub const BLOCKING_POOL_ENV: &str = "AFD_BLOCKING_POOL";

/// The environment variable that bounds how many `#[command(blocking)]` handlers run at
/// once in the process (a whole number, at least 1), read at start-up through
/// [`blocking::set_limit`](crate::blocking::set_limit).
pub const BLOCKING_LIMIT_ENV: &str = "AFD_BLOCKING_LIMIT";

/// The environment variable holding the keys that sign the `requestState` of a call that
/// asks its client something on MCP 2026-07-28: `id:base64,id:base64` (each key at least
/// 32 bytes), the first signing, every one opening. Give every replica the same keys so a
/// call resumes on any of them; unset, each process makes its own random key.
pub const REQUEST_STATE_KEYS_ENV: &str = "AFD_REQUEST_STATE_KEYS";
