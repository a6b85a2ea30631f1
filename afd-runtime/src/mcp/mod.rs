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
//! How it is laid out, in layers that each import only from those below:
//! - `server`, the server itself: [`McpServerBuilder`] computes the listing once into an
//!   [`McpServer`]; the tools and their advertised schemas, the listing per strategy and per
//!   session, the one `tools/call` path (`server::call`) whose handlers reach the client
//!   through `server::client` (logging, sampling, elicitation), resources, prompts and
//!   completions.
//! - `wire`: the JSON-RPC that the fronts read and write by hand, and the answers to lines
//!   that are not JSON-RPC rmcp would read.
//! - the transports, each answering `tools/call` in front of rmcp and handing it everything
//!   else: `stdio` (a byte stream) and `http` (streamable HTTP, its direct path and the
//!   operator's endpoints), which uses `oauth` (the OAuth 2.1 resource server); beside them
//!   `handler`, rmcp's `ServerHandler` over the server.

mod handler;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "oauth")]
mod oauth;
mod server;
mod stdio;
mod wire;

#[cfg(feature = "metrics")]
pub use http::MetricsListener;
#[cfg(feature = "http")]
pub use http::{HttpHandle, HttpOptions};
#[cfg(feature = "oauth")]
pub use oauth::{AUDIENCE_ENV, ISSUER_ENV, OAuth, TokenRejection, TokenVerifier};
pub use server::{
    BATCH, BLOCKING_LIMIT_ENV, BLOCKING_POOL_ENV, BuildError, CALL, CATALOG_URI, CATEGORIES_PREFIX,
    COMMANDS_PREFIX, COMPACT_SCHEMAS_ENV, DETAIL, DISCOVER, DOCS, HELP, LOADING_ENV, ListChanges,
    McpServer, McpServerBuilder, OUTPUT_SCHEMAS_ENV, PIPE, Progress, REQUEST_STATE_KEYS_ENV,
    SCHEMA, SESSION_META, STRATEGY_ENV, Strategy, UnknownStrategy,
};

/// Entry points for the fuzz targets in `fuzz/` (the `fuzzing` feature); not a stable API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use stdio::fuzzing;
