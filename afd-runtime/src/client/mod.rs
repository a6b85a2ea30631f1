//! What a handler can ask of the client that called it, independent of the surface: send
//! it log messages ([`LogSink`]), ask its model for a completion ([`SamplingRequest`]) or
//! its user for a form ([`Elicitation`]). A handler does all of it through its
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

/// Requests a surface can forward to the client that made the call: sampling (the
/// client's model) and elicitation (its user). The default methods say the client cannot
/// do either, so a surface implements only what its client declared.
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
