#![doc = include_str!("../../README.md")]
#![warn(missing_docs)]

extern crate self as afd_runtime;

// Definitions and the registry: pure data.
pub mod audit;
pub mod auth;
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
    SourceLocation,
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

/// Turns a function into a registered command. See the [crate documentation](crate) for
/// the keys it takes.
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
    pub use crate::command::{CommandDef, ExecutionTime, Expose, HandlerFuture, SourceLocation};
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
