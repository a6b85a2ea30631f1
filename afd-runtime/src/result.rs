//! [`CommandResult`]: the one shape every command returns.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::content::Content;
use crate::error::CommandError;

/// The result of a command: success with `data`, or failure with an `error`, plus the
/// UX fields that let an agent judge it (`reasoning`, `confidence`, `warnings`) and
/// `metadata` such as the execution time.
///
/// Serialises in camelCase; absent fields are
/// omitted:
///
/// ```
/// # use afd_runtime::CommandResult;
/// let result = CommandResult::success(serde_json::json!({"id": 42}))
///     .with_reasoning("Found user 42")
///     .with_confidence(0.99);
/// assert_eq!(
///     serde_json::to_string(&result).unwrap(),
///     r#"{"success":true,"data":{"id":42},"reasoning":"Found user 42","confidence":0.99}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandResult<T = Value> {
    /// Whether the command succeeded.
    pub success: bool,
    /// The command's output, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    /// What went wrong, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CommandError>,
    /// Why the command produced this result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// How sure the command is of its result, from 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Things the caller should know even though the command succeeded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
    /// Execution metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Content blocks beside (or instead of) the data: text, images, audio, resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Content>,
}

/// The data type of a command that answers with content blocks only
/// ([`CommandResult::content_only`]): it has no values, so such a result never carries
/// data, and the command's tool advertises no output schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoData {}

/// A non-fatal notice attached to a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Warning {
    /// Stable warning code.
    pub code: String,
    /// What the caller should know.
    pub message: String,
    /// How much it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
}

/// How much a [`Warning`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// For information only.
    Info,
    /// Worth the caller's attention.
    Warning,
    /// The caller should double-check before relying on the result.
    Caution,
}

/// Execution metadata of a [`CommandResult`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// Wall-clock execution time in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time_ms: Option<u64>,
    /// The trace id of the call, when tracing assigned one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Any further entries, flattened into the object.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl<T> CommandResult<T> {
    /// A successful result carrying `data`.
    pub fn success(data: T) -> Self {
        CommandResult {
            success: true,
            data: Some(data),
            error: None,
            reasoning: None,
            confidence: None,
            warnings: Vec::new(),
            metadata: None,
            content: Vec::new(),
        }
    }

    /// A successful result made only of content blocks (an image, a resource, text for a
    /// reader), with no data. A handler that always answers this way returns
    /// `CommandResult<NoData>`, so its tool promises no structured data:
    ///
    /// ```
    /// use afd_runtime::{CommandResult, Content, NoData};
    ///
    /// let chart: CommandResult<NoData> = CommandResult::content_only([
    ///     Content::text("Sales by month:"),
    ///     Content::image(b"\x89PNG\r\n\x1a\n", "image/png"),
    /// ]);
    /// assert!(chart.success && chart.data.is_none());
    /// assert_eq!(chart.content.len(), 2);
    /// ```
    pub fn content_only<C: Into<Content>>(blocks: impl IntoIterator<Item = C>) -> Self {
        CommandResult {
            success: true,
            data: None,
            error: None,
            reasoning: None,
            confidence: None,
            warnings: Vec::new(),
            metadata: None,
            content: blocks.into_iter().map(Into::into).collect(),
        }
    }

    /// Whether this is a success without data whose answer is its content blocks.
    pub fn is_content_only(&self) -> bool {
        self.success && self.data.is_none() && !self.content.is_empty()
    }

    /// A failed result carrying `error`.
    pub fn failure(error: CommandError) -> Self {
        CommandResult {
            success: false,
            data: None,
            error: Some(error),
            reasoning: None,
            confidence: None,
            warnings: Vec::new(),
            metadata: None,
            content: Vec::new(),
        }
    }

    /// Sets the reasoning.
    #[must_use]
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// Sets the confidence (clamped to `0.0..=1.0`).
    #[must_use]
    pub fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence.clamp(0.0, 1.0));
        self
    }

    /// Adds a warning.
    #[must_use]
    pub fn with_warning(mut self, code: impl Into<String>, message: impl Into<String>) -> Self {
        self.warnings.push(Warning {
            code: code.into(),
            message: message.into(),
            severity: Some(Severity::Warning),
        });
        self
    }

    /// The same result with one more content block.
    #[must_use]
    pub fn with_content(mut self, block: impl Into<Content>) -> Self {
        self.content.push(block.into());
        self
    }

    /// The metadata, created empty if absent.
    pub fn metadata_mut(&mut self) -> &mut Metadata {
        self.metadata.get_or_insert_with(Metadata::default)
    }

    /// Maps the data of a successful result, keeping everything else.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> CommandResult<U> {
        CommandResult {
            success: self.success,
            data: self.data.map(f),
            error: self.error,
            reasoning: self.reasoning,
            confidence: self.confidence,
            warnings: self.warnings,
            metadata: self.metadata,
            content: self.content,
        }
    }

    /// Turns the result into a plain `Result`, dropping the UX fields.
    ///
    /// A result marked successful without data, or failed without an error, is reported as
    /// an `INTERNAL_ERROR`; a [content-only](CommandResult::content_only) success has no
    /// data to give, so it is one too (read its `content` instead).
    pub fn into_result(self) -> Result<T, CommandError> {
        match (self.success, self.data, self.error) {
            (true, Some(data), _) => Ok(data),
            (false, _, Some(error)) => Err(error),
            (true, None, _) if !self.content.is_empty() => Err(CommandError::internal(
                "a content-only result has no data: read its `content` blocks",
            )),
            (true, None, _) => Err(CommandError::internal("successful result without data")),
            (false, _, None) => Err(CommandError::internal("failed result without an error")),
        }
    }
}

impl<T> From<CommandError> for CommandResult<T> {
    fn from(error: CommandError) -> Self {
        CommandResult::failure(error)
    }
}

impl<T, E: Into<CommandError>> From<Result<T, E>> for CommandResult<T> {
    fn from(result: Result<T, E>) -> Self {
        match result {
            Ok(data) => CommandResult::success(data),
            Err(error) => CommandResult::failure(error.into()),
        }
    }
}
