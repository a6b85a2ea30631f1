#![doc = include_str!("../../README.md")]
#![warn(missing_docs)]

extern crate self as afd_runtime;

pub mod bootstrap;
pub mod catalog;
mod command;
mod context;
pub mod contexts;
pub mod dispatch;
mod error;
pub mod export;
mod glue;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod middleware;
mod registry;
mod result;
pub mod search;
pub mod similarity;
mod text;
mod tools;
pub mod typescript;
pub mod usage;
pub mod validate;

pub use command::{
    CommandDef, ExecutionTime, Expose, HandlerFn, HandlerFuture, RuntimeParts, SharedHandler,
    SourceLocation,
};
pub use context::CommandContext;
pub use contexts::{ContextDef, NoContextPolicy, Scope, SessionConfig, Sessions};
pub use dispatch::{
    CommandRequest, CommandService, Dispatcher, DispatcherBuilder, DispatcherError, HandlerService,
    Limits, Surface,
};
pub use error::{CommandError, codes};
pub use registry::{
    CategoryDef, CommandEntry, NameKind, Problem, Registry, RegistryBuilder, RegistryError,
    Resolved, TagMode,
};
pub use result::{CommandResult, Metadata, Severity, Warning};
pub use tools::batch::{BatchCommand, BatchEntry, BatchOptions, BatchRequest, BatchResult};
pub use tools::pipe::{PipeOptions, PipeRequest, PipeResult, PipeStep, StepResult, StepStatus};

/// Turns a function into a registered command. See the [crate documentation](crate) for
/// the keys it takes.
pub use afd_macros::command;
/// Declares a runtime context (name, doc-comment description, parent, priority, trigger
/// keywords, read-only flag), registered at link time like a command. See [`contexts`].
pub use afd_macros::context;

pub use schemars;
pub use serde;
pub use serde_json;

/// What a command module needs: `use afd_runtime::prelude::*;`.
pub mod prelude {
    pub use crate::command;
    pub use crate::{
        CommandContext, CommandError, CommandResult, ExecutionTime, Registry, TagMode, codes,
    };
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
    pub use serde_json::{Value, json};
}

/// Not public API: what `#[command]` expands to refers to these paths.
#[doc(hidden)]
pub mod __private {
    pub use crate::command::{CommandDef, ExecutionTime, Expose, HandlerFuture, SourceLocation};
    pub use crate::context::CommandContext;
    pub use crate::contexts::ContextDef;
    pub use crate::glue::{
        CommandFailure, CommandInputDecode, CommandInputSchema, CommandOutput, Outcome,
        OutputProbe, OutputSchemaFallback, OutputSchemaViaJsonSchema, SyncBody, deserialize_input,
        from_command_result, from_output, from_result, input_schema, no_input_schema, sync_handler,
    };
    pub use crate::registry::Registration;
    pub use crate::result::CommandResult;
    pub use inventory;
    pub use serde_json::Value;
    pub use std::boxed::Box;
    pub use std::option::Option;
    pub use std::result::Result;
}
