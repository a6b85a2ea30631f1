//! [`CommandError`]: what went wrong, in words an agent can act on.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Stable error codes used by the runtime.
///
/// Codes are part of the public contract: agents branch on them, so they never change
/// meaning. Handlers are free to use their own codes (`NOT_FOUND`, `NO_CHANGES`, ...) beside
/// these.
pub mod codes {
    /// No command (or alias) has the requested name.
    pub const COMMAND_NOT_FOUND: &str = "COMMAND_NOT_FOUND";
    /// The command exists but is not exposed on this surface.
    pub const COMMAND_NOT_EXPOSED: &str = "COMMAND_NOT_EXPOSED";
    /// The input does not match the command's input schema.
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    /// The command belongs to a context other than the active one.
    pub const CONTEXT_MISMATCH: &str = "CONTEXT_MISMATCH";
    /// The caller may not run this command (for example a mutation in a read-only scope).
    pub const FORBIDDEN: &str = "FORBIDDEN";
    /// The caller's token does not grant every scope the command needs; `details` names
    /// them (`requiredScopes`, `missingScopes`).
    pub const INSUFFICIENT_SCOPE: &str = "INSUFFICIENT_SCOPE";
    /// A context name (in afd-context-enter, or a default context) is not declared.
    pub const CONTEXT_NOT_FOUND: &str = "CONTEXT_NOT_FOUND";
    /// A session handle is unknown or expired.
    pub const SESSION_NOT_FOUND: &str = "SESSION_NOT_FOUND";
    /// The store that holds sessions cannot be reached; the call did not run. Retryable.
    pub const SESSION_STORE_UNAVAILABLE: &str = "SESSION_STORE_UNAVAILABLE";
    /// The command ran out of time.
    pub const TIMEOUT: &str = "TIMEOUT";
    /// The command was cancelled before it completed.
    pub const CANCELLED: &str = "CANCELLED";
    /// Too many calls; the suggestion says when to retry.
    pub const RATE_LIMITED: &str = "RATE_LIMITED";
    /// The server is shutting down and takes no new calls; the call did not run.
    /// Retryable: a new connection reaches another replica, or this one once restarted.
    pub const SHUTTING_DOWN: &str = "SHUTTING_DOWN";
    /// A resource the command needs does not exist.
    pub const NOT_FOUND: &str = "NOT_FOUND";
    /// A batch entry or pipeline step was not run (stop on error, a false `when`, a timeout).
    pub const COMMAND_SKIPPED: &str = "COMMAND_SKIPPED";
    /// A batch ran out of time; the command was cancelled.
    pub const BATCH_TIMEOUT: &str = "BATCH_TIMEOUT";
    /// A batch request is empty, too long, or malformed.
    pub const INVALID_BATCH_REQUEST: &str = "INVALID_BATCH_REQUEST";
    /// A pipeline request is empty, too long, or malformed.
    pub const INVALID_PIPELINE_REQUEST: &str = "INVALID_PIPELINE_REQUEST";
    /// A pipeline reference (`$prev.id`, `$steps.user.email`, ...) does not resolve.
    pub const UNRESOLVED_REFERENCE: &str = "UNRESOLVED_REFERENCE";
    /// The input is larger or deeper than the server accepts.
    pub const INPUT_TOO_LARGE: &str = "INPUT_TOO_LARGE";
    /// The handler failed unexpectedly (a panic, or a result that could not be serialised).
    pub const INTERNAL_ERROR: &str = "INTERNAL_ERROR";
    /// A command that asks for confirmation was not confirmed (on the command line: no
    /// terminal to ask on and no `--yes`, or the answer was no).
    pub const CONFIRMATION_REQUIRED: &str = "CONFIRMATION_REQUIRED";
    /// A handler asked the client's model (sampling), and the client cannot sample.
    pub const CLIENT_CANNOT_SAMPLE: &str = "CLIENT_CANNOT_SAMPLE";
    /// A handler asked the client's user (elicitation), and the client cannot show forms.
    pub const CLIENT_CANNOT_ELICIT: &str = "CLIENT_CANNOT_ELICIT";
    /// A handler asked the client for its roots, and the client cannot list them.
    pub const CLIENT_CANNOT_LIST_ROOTS: &str = "CLIENT_CANNOT_LIST_ROOTS";
    /// A request to the client (sampling, elicitation) failed on the way or was refused.
    pub const CLIENT_REQUEST_FAILED: &str = "CLIENT_REQUEST_FAILED";
    /// A handler asked the client something whose answer is not there yet: on MCP
    /// 2026-07-28 the call is answered `input_required` and resumes when the client calls
    /// again with the answer. A surface that cannot resume a call shows it as is.
    pub const INPUT_REQUIRED: &str = "INPUT_REQUIRED";
    /// A command that declares it needs a client capability (`needs_client`) was called by
    /// a client that did not declare it.
    pub const CLIENT_CAPABILITY_MISSING: &str = "CLIENT_CAPABILITY_MISSING";
}

/// A structured failure: a stable `code`, a human-readable `message`, and a `suggestion`
/// that tells the caller what to do next.
///
/// Serialises in camelCase exactly as the AFD wire format expects:
///
/// ```
/// # use afd_runtime::CommandError;
/// let err = CommandError::new("NOT_FOUND", "Todo 'x' not found")
///     .with_suggestion("List todos with todo-list to find a valid id.");
/// assert_eq!(
///     serde_json::to_value(&err).unwrap(),
///     serde_json::json!({
///         "code": "NOT_FOUND",
///         "message": "Todo 'x' not found",
///         "suggestion": "List todos with todo-list to find a valid id."
///     })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandError {
    /// Stable, SCREAMING_SNAKE_CASE error code (see [`codes`]).
    pub code: Cow<'static, str>,
    /// What went wrong.
    pub message: String,
    /// What the caller should do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<String>,
    /// Whether the same call may succeed if retried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retryable: Option<bool>,
    /// Machine-readable details (for example every validation violation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl CommandError {
    /// Creates an error with a code and a message.
    pub fn new(code: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        CommandError {
            code: code.into(),
            message: message.into(),
            suggestion: None,
            retryable: None,
            details: None,
        }
    }

    /// Sets the suggestion: what the caller should do next.
    #[must_use]
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = Some(suggestion.into());
        self
    }

    /// Sets machine-readable details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// Marks the error as retryable (or not).
    #[must_use]
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = Some(retryable);
        self
    }

    /// `NOT_FOUND` for a resource of a kind with an id.
    pub fn not_found(kind: &str, id: impl fmt::Display) -> Self {
        CommandError::new(codes::NOT_FOUND, format!("{kind} '{id}' not found")).with_suggestion(
            format!(
                "Check the {} id; list them to find a valid one.",
                kind.to_lowercase()
            ),
        )
    }

    /// `VALIDATION_ERROR` with a message.
    pub fn validation(message: impl Into<String>) -> Self {
        CommandError::new(codes::VALIDATION_ERROR, message)
            .with_suggestion("Check the input against the command's schema and try again.")
    }

    /// `INTERNAL_ERROR` with a message.
    pub fn internal(message: impl Into<String>) -> Self {
        CommandError::new(codes::INTERNAL_ERROR, message)
            .with_suggestion(
                "This is a fault in the server, not in the input. Try again later or report it.",
            )
            .with_retryable(true)
    }

    /// Whether this error has the given code.
    pub fn is(&self, code: &str) -> bool {
        self.code == code
    }
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(suggestion) = &self.suggestion {
            write!(f, " ({suggestion})")?;
        }
        Ok(())
    }
}

impl std::error::Error for CommandError {}
