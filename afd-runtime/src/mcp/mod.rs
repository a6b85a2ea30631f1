//! The MCP server: the command catalog served to agents over `rmcp`, listed as tools in
//! one of four strategies (individual, grouped, lazy, hybrid) and as resources. The only
//! module that knows rmcp.
//!
//! ```no_run
//! use afd_runtime::mcp::{McpServer, Strategy};
//! use afd_runtime::{CommandContext, Registry};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! McpServer::builder(Registry::global())
//!     .name("shop")
//!     .version("1.0.0")
//!     .strategy(Strategy::Lazy)
//!     .context(CommandContext::new())
//!     .build()?
//!     .serve_stdio()
//!     .await?;
//! # Ok(())
//! # }
//! ```
//!
//! How it is laid out: [`McpServerBuilder`] (`builder`) computes the listing once into an
//! [`McpServer`] (`server`); rmcp reaches it through the `ServerHandler` in `handler`, the
//! stdio front (`stream`) answers `tools/call` before rmcp, and both run a call through the
//! one function in `call`, whose handlers reach the client through `client` (logging,
//! sampling, elicitation). `tools` defines the tools (their schemas as `advertise` renders
//! them), `listing` lists them per strategy and per session, `resources` serves the app's
//! declared resources and the catalog as resources, `prompts` the declared prompts and
//! completions, `http` the HTTP transport.

mod advertise;
mod builder;
mod call;
mod client;
mod handler;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_direct;
#[cfg(feature = "http")]
mod http_ops;
mod listing;
#[cfg(feature = "oauth")]
mod oauth;
mod observe;
mod progress;
mod prompts;
mod resources;
mod server;
mod strategy;
mod stream;
mod tools;

pub use builder::{BuildError, McpServerBuilder};
#[cfg(feature = "http")]
pub use http::{HttpHandle, HttpOptions};
#[cfg(feature = "metrics")]
pub use http_ops::MetricsListener;
#[cfg(feature = "oauth")]
pub use oauth::{AUDIENCE_ENV, ISSUER_ENV, OAuth, TokenRejection, TokenVerifier};
pub use progress::Progress;
pub use resources::{CATALOG_URI, CATEGORIES_PREFIX, COMMANDS_PREFIX};
pub use server::McpServer;
pub use strategy::{Strategy, UnknownStrategy};
pub use tools::{BATCH, CALL, DETAIL, DISCOVER, DOCS, HELP, PIPE, SCHEMA};

/// Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature); not a stable API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use stream::fuzzing;

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
/// [`McpServerBuilder::output_schemas`].
pub const OUTPUT_SCHEMAS_ENV: &str = "AFD_OUTPUT_SCHEMAS";

/// The environment variable that turns the compaction of advertised input schemas on or
/// off at start-up (`on`/`off`, `true`/`false`, `1`/`0`), over
/// [`McpServerBuilder::compact_schemas`].
pub const COMPACT_SCHEMAS_ENV: &str = "AFD_COMPACT_SCHEMAS";
