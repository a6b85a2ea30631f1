//! afd-gateway: one lazy, searchable MCP front for many existing MCP servers.
//!
//! It reads the `mcpServers` configuration Claude Desktop, Cursor and Claude Code use,
//! connects to every upstream with rmcp's client (stdio child processes and streamable
//! HTTP), and serves their tools through afd-runtime: the lazy meta-tools (afd-discover,
//! afd-detail, afd-call, afd-batch, afd-pipe), ranked search, detail levels, sessions and
//! usage statistics work over upstream tools as over `#[command]` functions. Tool ids are
//! `server.tool`; each server is a category. The guide's chapter "The gateway"
//! (`afd_runtime::_guide::_08_gateway`) says how to configure and run it.
#![warn(missing_docs)]

pub mod cache;
pub mod catalog;
pub mod config;
pub mod gateway;
pub mod pending;
pub mod predict;
pub mod report;
pub mod upstream;

pub use config::{Config, ServerConfig};
pub use gateway::{Gateway, GatewayServer, Options};
pub use upstream::{Upstream, error_codes};
