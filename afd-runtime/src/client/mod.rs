//! What a handler can ask of the client that called it, independent of the surface: send
//! it log messages ([`LogSink`]), ask its model for a completion ([`SamplingRequest`]), its
//! user for a form ([`Elicitation`]) or the roots it works in ([`Root`]). A handler does all of it through its
//! [`CommandContext`](crate::CommandContext); the surface running the call decides where it
//! goes (an MCP client, the terminal) and what it cannot do.

mod elicit;
mod forward;
mod log;
mod sampling;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::error::CommandError;

pub use elicit::{Elicitation, confirmation_schema, form_schema};
#[cfg(feature = "mcp")]
pub use forward::ClientLogLayer;
pub(crate) use forward::{scope_tracing, scope_tracing_sync};
pub use log::{LogLevel, LogMessage, LogSink, UnknownLogLevel};
pub use sampling::{Role, SamplingMessage, SamplingRequest, SamplingResponse};

/// A root the client works in (MCP's `roots/list`): a `file://` URI and an optional name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Root {
    /// The root's URI.
    pub uri: String,
    /// Its name, when the client gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Requests a surface can forward to the client that made the call: sampling (the
/// client's model), elicitation (its user) and its roots. The default methods say the
/// client cannot do any of it, so a surface implements only what its client declared.
///
/// The `*_keyed` methods carry the key that names a question across the rounds of a
/// request on MCP 2026-07-28 (where the server asks by answering `input_required` and the
/// client calls again with the answers under the same keys). `None` lets the surface derive
/// one from the question itself. Surfaces that ask as the call runs ignore the key: the
/// defaults forward to the plain methods.
pub trait ClientRequests: Send + Sync + 'static {
    /// Whether the client declared that it can sample.
    fn can_sample(&self) -> bool {
        false
    }

    /// Asks the client's model for a completion.
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        let _ = request;
        Box::pin(async { Err(cannot_sample()) })
    }

    /// Whether the client declared that it can show forms to its user.
    fn can_elicit(&self) -> bool {
        false
    }

    /// Asks the client's user to fill in a form whose (flat, MCP-shaped) schema is `schema`.
    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        let _ = (message, schema);
        Box::pin(async { Err(cannot_elicit()) })
    }

    /// [`sample`](Self::sample) under the key `key` names the question by.
    fn sample_keyed(
        &self,
        key: Option<&str>,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        let _ = key;
        self.sample(request)
    }

    /// [`elicit`](Self::elicit) under the key `key` names the question by.
    fn elicit_keyed(
        &self,
        key: Option<&str>,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        let _ = key;
        self.elicit(message, schema)
    }

    /// Whether the client declared that it can list its roots.
    fn can_list_roots(&self) -> bool {
        false
    }

    /// Asks the client for its roots (`roots/list`), under the key `key` names the question
    /// by.
    fn list_roots(&self, key: Option<&str>) -> BoxFuture<'_, Result<Vec<Root>, CommandError>> {
        let _ = key;
        Box::pin(async { Err(cannot_list_roots()) })
    }

    /// Turns the call into a task its client polls (MCP's tasks extension), where the
    /// command declared `task_start = "handler"` and the client can take one; `true` once
    /// the client has been answered with the task, `false` (at once) where the call goes
    /// on as it was. The default cannot.
    fn continue_as_task(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}

/// The error of a sampling request the caller cannot serve.
pub(crate) fn cannot_sample() -> CommandError {
    CommandError::new(
        crate::error::codes::CLIENT_CANNOT_SAMPLE,
        "The client of this call cannot sample: it declared no `sampling` capability (or the surface has no model)",
    )
    .with_suggestion(
        "Call this command from an MCP client that supports sampling, or give the text it needs as input.",
    )
    .with_retryable(false)
}

/// The error of a `roots/list` the caller cannot serve.
pub(crate) fn cannot_list_roots() -> CommandError {
    CommandError::new(
        crate::error::codes::CLIENT_CANNOT_LIST_ROOTS,
        "The client of this call cannot list its roots: it declared no `roots` capability (or the surface has none)",
    )
    .with_suggestion(
        "Call this command from an MCP client that supports roots, or pass the paths it needs as input.",
    )
    .with_retryable(false)
}

/// The error of an elicitation the caller cannot serve.
pub(crate) fn cannot_elicit() -> CommandError {
    CommandError::new(
        crate::error::codes::CLIENT_CANNOT_ELICIT,
        "The client of this call cannot ask its user: it declared no `elicitation` capability (or the surface cannot show forms)",
    )
    .with_suggestion(
        "Call this command from an MCP client that supports elicitation, or pass what it asks for as input.",
    )
    .with_retryable(false)
}
