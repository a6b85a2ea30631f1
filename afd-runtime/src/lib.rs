//! Agent-first commands for Rust: write plain functions, mark them `#[command]`, and serve
//! them to agents over MCP, to people on a command line and to Rust code in-process, all
//! through one call path.
//!
//! Each `#[command]` joins a catalog built at link time: its name, the description from its
//! doc comment, its category, tags and risk flags, the JSON Schemas of its input and output,
//! a validator and a handler. No registration call, no central list.
//!
//! # The first command
//!
//! ```
//! use afd_runtime::prelude::*;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Greet {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! /// Greets someone by name.
//! #[command(category = "hello")]
//! fn hello_greet(input: Greet) -> String {
//!     format!("Hello, {}!", input.name)
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let registry = Registry::global();
//! let result = registry
//!     .call("hello-greet", json!({"name": "Ada"}), CommandContext::new())
//!     .await;
//! assert_eq!(result.data.unwrap(), "Hello, Ada!");
//!
//! // A mistake is a result the agent can act on: a code, a message and what to do next.
//! let typo = registry.call("hello-graet", json!({}), CommandContext::new()).await;
//! assert_eq!(typo.error.unwrap().code, "COMMAND_NOT_FOUND");
//! # });
//! ```
//!
//! Add `afd-runtime`, `serde` (with `derive`), `schemars` 1.x and `tokio` to `Cargo.toml`.
//! The same catalog served to an MCP client over stdio (feature `mcp`):
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! use afd_runtime::{Registry, mcp::McpServer};
//!
//! McpServer::builder(Registry::global()).name("hello").build()?.serve_stdio().await?;
//! # Ok(())
//! # }
//! ```
//!
//! [`cli::run`] turns it into a command line instead, one subcommand per command and
//! `serve` for the MCP server (feature `cli`).
//!
//! # Where to go next
//!
//! - [The guide](_guide): chapters from writing commands to operating a server, each
//!   example compiled.
//! - [`command`]: the attribute; its keys are tabled in
//!   [Writing commands](_guide::_01_writing_commands).
//! - [`CommandResult`] and [`CommandError`]: what every call returns.
//! - [`mcp`]: the MCP server and its tool strategies (individual, grouped, lazy, hybrid).
//! - [`contexts`]: runtime contexts and sessions; [`search`]: ranked search of the catalog.
//! - The repository's `examples/` folder: runnable apps, one per topic.
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `mcp` | yes | the MCP server over stdio ([`mcp`]) |
//! | `http` | yes | streamable HTTP for the MCP server |
//! | `cli` | yes | the command line ([`cli`]) |
//! | `usage-sqlite` | yes | usage statistics persisted in SQLite |
//! | `oauth` | no | an OAuth 2.1 resource server in front of the HTTP endpoint |
//! | `semantic` | no | the semantic layer of search (a sentence-embedding model; heavy to build) |
//! | `redis`, `redis-tls` | no | sessions in Redis, shared by replicas (and TLS to it) |
//! | `postgres`, `postgres-tls` | no | usage statistics in PostgreSQL (and TLS to it) |
//! | `metrics` | no | metrics through OpenTelemetry, served as Prometheus text |
//! | `otel` | no | traces and metrics exported by OTLP |
//! | `fuzzing` | no | hidden entry points for the fuzz targets; not a stable API |
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

extern crate self as afd_runtime;

pub mod _guide;

// Definitions and the registry: pure data.
pub mod audit;
pub mod auth;
pub mod blocking;
pub mod client;
mod command;
mod command_context;
pub mod completion;
mod content;
mod declared;
mod error;
pub mod export;
mod macro_support;
pub mod metrics;
pub mod progress;
pub mod prompt;
mod random;
mod registry;
pub mod resource;
mod result;
pub mod search;
mod similarity;
pub mod telemetry;
mod text;
#[cfg(any(feature = "redis", feature = "postgres"))]
mod tls;
mod typescript;
pub mod usage;
pub mod validate;

// Runtime contexts: sessions and the rules that scope what they may call.
pub mod contexts;
pub mod tasks;

// The call path and the middleware around it.
mod dispatch;
pub mod middleware;

// The built-in tools.
pub mod tools;

// Operating a server: readiness and the drain.
pub mod ops;

// Surfaces.
#[cfg(feature = "cli")]
pub mod cli;
#[cfg(feature = "mcp")]
pub mod mcp;

pub use command::{
    CommandDef, ExecutionTime, Expose, HandlerFn, HandlerFuture, Risk, RuntimeParts, SharedHandler,
    SourceLocation, TaskStart, TaskSupport,
};
pub use command_context::CommandContext;
pub use content::{Content, ResourceContents, ResourceLink};
pub use contexts::session::{NoContextPolicy, SessionConfig, Sessions};
pub use declared::DeclarationError;
pub use dispatch::{
    CallKind, CommandRequest, CommandService, Dispatcher, DispatcherBuilder, DispatcherError,
    HandlerService, Limits, Surface,
};
pub use error::{CommandError, codes};
pub use registry::{
    CategoryDef, CommandEntry, ContextDef, NameKind, Problem, Registry, RegistryBuilder,
    RegistryError, Resolved, Scope, TagMode,
};
pub use result::{CommandResult, Metadata, NoData, Severity, Warning};
pub use text::summary;
pub use tools::batch::{
    BatchCommand, BatchEntry, BatchOptions, BatchRequest, BatchResult, BatchSummary, BatchTiming,
    BatchWarning,
};
pub use tools::meta::{BuiltinOutcome, MetaTools};
pub use tools::pipe::{
    PipeMetadata, PipeOptions, PipeRequest, PipeResult, PipeStep, StepConfidence, StepReasoning,
    StepResult, StepStatus, StepWarning,
};

/// Turns a function into a registered command. [Writing commands](_guide::_01_writing_commands)
/// lists the keys it takes and the handler shapes it accepts.
pub use afd_macros::command;
/// Declares a runtime context (name, doc-comment description, parent, priority, trigger
/// keywords, read-only flag), registered at link time like a command. See [`contexts`].
pub use afd_macros::context;
/// Declares a prompt: its name, description, arguments (from a struct) and the messages its
/// function returns. See [`prompt`](mod@prompt).
pub use afd_macros::prompt;
/// Declares a resource at a fixed URI or a URI template. See [`resource`](mod@resource).
pub use afd_macros::resource;

pub use schemars;
pub use serde;
pub use serde_json;

/// What a command module needs: `use afd_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::completion::CompletionArgs;
    pub use crate::{
        CommandContext, CommandError, CommandResult, ExecutionTime, MetaTools, Registry, TagMode,
        codes,
    };
    pub use crate::{command, context};
    pub use afd_macros::{prompt, resource};
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::{Value, json};
}

/// Not public API: what `#[command]` expands to refers to these paths.
#[doc(hidden)]
pub mod __private {
    pub use crate::blocking::handler as blocking_handler;
    pub use crate::command::{
        CommandDef, ExecutionTime, Expose, HandlerFuture, SourceLocation, TaskStart, TaskSupport,
    };
    pub use crate::command_context::CommandContext;
    pub use crate::completion::{CompleteFn, CompletionArgs, call as call_completer};
    pub use crate::macro_support::{
        CommandFailure, CommandInputDecode, CommandInputSchema, CommandOutput, Outcome,
        OutputProbe, OutputSchemaFallback, OutputSchemaViaJsonSchema, SyncBody, deserialize_input,
        from_command_result, from_output, from_result, input_schema, no_input_schema, sync_handler,
    };
    pub use crate::prompt::{
        PromptDef, PromptFuture, PromptRegistration, prompt_arguments, prompt_arguments_schema,
        prompt_messages,
    };
    pub use crate::registry::ContextDef;
    pub use crate::registry::Registration;
    pub use crate::resource::{
        ResourceDef, ResourceFuture, ResourceRegistration, ResourceRequest, resource_contents,
        template_variable,
    };
    pub use crate::result::CommandResult;
    pub use inventory;
    pub use serde_json::Map;
    pub use serde_json::Value;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result;
    pub use std::string::String;
    pub use std::vec::Vec;
}
