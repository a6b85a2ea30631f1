//! What a tool call produced ([`Answer`]), whichever way it ran, and its forms on the
//! wire: rmcp's [`CallToolResult`] (with a command's content blocks) and the JSON the
//! direct paths write themselves.

use rmcp::model::{CallToolResult, CreateTaskResult, ErrorData, InputRequiredResult};
use serde::Serialize;
use serde_json::{Value, json};

use crate::error::{CommandError, codes};
use crate::result::CommandResult;
use crate::tools::batch::BatchResult;
use crate::tools::pipe::PipeResult;

/// The JSON-RPC error message (-32603) of a `tools/call` that panicked outside its
/// handler (whose own panics are tool results).
pub(in crate::mcp) const CALL_PANICKED: &str = "the tool call failed inside the server";

/// What a tool call produced.
pub(in crate::mcp) enum Answer {
    Command(CommandResult<Value>),
    Batch(BatchResult),
    Pipe(PipeResult),
    /// The handler asked its client something (2026-07-28): the questions and the state.
    InputRequired(InputRequiredResult),
    /// The call runs on as a task the client polls.
    Task(CreateTaskResult),
    /// The request itself is refused: a JSON-RPC error, not a tool result.
    Protocol(ErrorData),
}

impl Answer {
    pub(in crate::mcp) fn success(&self) -> bool {
        match self {
            Answer::Command(result) => result.success,
            Answer::Batch(result) => result.success,
            Answer::Pipe(result) => result.success,
            Answer::InputRequired(_) | Answer::Task(_) => true,
            Answer::Protocol(_) => false,
        }
    }

    /// The error code of a failed answer (a batch's or pipeline's first failure).
    pub(in crate::mcp) fn error_code(&self) -> Option<&str> {
        match self {
            Answer::Command(result) => result.error.as_ref().map(|e| e.code.as_ref()),
            Answer::Batch(result) => result
                .results
                .iter()
                .find_map(|entry| entry.result.error.as_ref().map(|e| e.code.as_ref())),
            Answer::Pipe(result) => result.error.as_ref().map(|e| e.code.as_ref()),
            Answer::InputRequired(_) | Answer::Task(_) => None,
            Answer::Protocol(_) => None,
        }
    }

    /// Whether the answer carries content blocks of its own (then it is not written in the
    /// stdio front's fixed shape).
    pub(in crate::mcp) fn has_content(&self) -> bool {
        matches!(self, Answer::Command(result) if !result.content.is_empty())
    }

    /// The result as rmcp sends it: structured content, the same JSON as text, `isError`;
    /// a command's content blocks first, when it returned some.
    pub(in crate::mcp) fn into_tool_result(self) -> CallToolResult {
        let success = self.success();
        match &self {
            Answer::Command(result) if !result.content.is_empty() => rich_tool_result(result),
            Answer::Command(result) => tool_result(result, success),
            Answer::Batch(result) => tool_result(result, success),
            Answer::Pipe(result) => tool_result(result, success),
            // Never built for a caller that takes a tool result: said as a tool error.
            Answer::InputRequired(_) => tool_result(
                &CommandResult::<Value>::failure(CommandError::new(
                    codes::INPUT_REQUIRED,
                    "The call needs the client's input, which this surface cannot ask for",
                )),
                false,
            ),
            Answer::Task(_) => tool_result(
                &CommandResult::<Value>::failure(CommandError::new(
                    codes::INTERNAL_ERROR,
                    "The call became a task, which this surface cannot follow",
                )),
                false,
            ),
            Answer::Protocol(error) => tool_result(
                &CommandResult::<Value>::failure(CommandError::new(
                    codes::VALIDATION_ERROR,
                    error.message.to_string(),
                )),
                false,
            ),
        }
    }

    /// The JSON of [`into_tool_result`](Answer::into_tool_result)'s structured content,
    /// written once (rmcp's path builds a `Value` of it, then writes it twice).
    pub(in crate::mcp) fn to_json(&self) -> String {
        let json = match self {
            Answer::Command(result) => serde_json::to_string(result),
            Answer::Batch(result) => serde_json::to_string(result),
            Answer::Pipe(result) => serde_json::to_string(result),
            Answer::InputRequired(result) => serde_json::to_string(result),
            Answer::Task(result) => serde_json::to_string(result),
            Answer::Protocol(error) => serde_json::to_string(error),
        };
        json.unwrap_or_else(|error| serialization_failure(&error).to_string())
    }
}

/// The result as `structuredContent` and as JSON text, with `isError` on failure.
fn tool_result<T: Serialize>(result: &T, success: bool) -> CallToolResult {
    let value = serde_json::to_value(result).unwrap_or_else(|error| serialization_failure(&error));
    if success {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// A result with content blocks: the blocks, then (where there is data, or an error) the
/// rest of the result as `structuredContent` and as JSON text. A success made only of
/// content is its blocks alone.
fn rich_tool_result(result: &CommandResult<Value>) -> CallToolResult {
    let mut content = serde_json::to_value(&result.content).unwrap_or_else(|_| json!([]));
    let has_data = result.data.as_ref().is_some_and(|data| !data.is_null());
    let mut structured = None;
    if has_data || !result.success {
        let envelope = CommandResult {
            content: Vec::new(),
            ..result.clone()
        };
        let value =
            serde_json::to_value(&envelope).unwrap_or_else(|error| serialization_failure(&error));
        if let Some(blocks) = content.as_array_mut() {
            blocks.push(json!({"type": "text", "text": value.to_string()}));
        }
        structured = Some(value);
    }
    let blocks = match serde_json::from_value(content) {
        Ok(blocks) => blocks,
        Err(error) => return CallToolResult::structured_error(serialization_failure(&error)),
    };
    let mut answer = if result.success {
        CallToolResult::success(blocks)
    } else {
        CallToolResult::error(blocks)
    };
    answer.structured_content = structured;
    answer
}

/// The structured content of a result that could not be serialised.
fn serialization_failure(error: &serde_json::Error) -> Value {
    json!({"success": false, "error": {"code": codes::INTERNAL_ERROR, "message": error.to_string()}})
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::{Content, ResourceContents};

    fn wire(answer: Answer) -> Value {
        serde_json::to_value(answer.into_tool_result()).unwrap()
    }

    #[test]
    fn a_content_only_success_is_its_blocks_without_structured_content() {
        let result = CommandResult::<Value>::content_only([
            Content::text("Here:"),
            Content::image([1u8, 2, 3], "image/png"),
            Content::resource(
                ResourceContents::text("test://a", "hi").with_mime_type("text/plain"),
            ),
            Content::resource_link("test://b", "b"),
        ]);
        assert_eq!(
            wire(Answer::Command(result)),
            json!({
                "content": [
                    {"type": "text", "text": "Here:"},
                    {"type": "image", "data": "AQID", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hi"}},
                    {"type": "resource_link", "uri": "test://b", "name": "b"}
                ],
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn data_beside_content_is_structured_and_written_after_the_blocks() {
        let result = CommandResult::success(json!({"rows": 2}))
            .with_content(Content::audio([0u8], "audio/wav"));
        let wire = wire(Answer::Command(result));
        assert_eq!(
            wire["structuredContent"],
            json!({"success": true, "data": {"rows": 2}})
        );
        assert_eq!(wire["content"][0]["type"], "audio");
        assert_eq!(
            wire["content"][1],
            json!({"type": "text", "text": r#"{"success":true,"data":{"rows":2}}"#})
        );
        assert_eq!(wire["isError"], false);
    }

    #[test]
    fn data_only_results_keep_their_shape() {
        let wire = wire(Answer::Command(CommandResult::success(json!(1))));
        assert_eq!(
            wire,
            json!({
                "content": [{"type": "text", "text": r#"{"success":true,"data":1}"#}],
                "structuredContent": {"success": true, "data": 1},
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn a_failure_with_content_stays_an_error_with_its_structured_error() {
        let mut result = CommandResult::<Value>::failure(CommandError::new("NOT_FOUND", "gone"));
        result.content.push(Content::text("partial log"));
        let wire = wire(Answer::Command(result));
        assert_eq!(wire["isError"], true);
        assert_eq!(wire["structuredContent"]["error"]["code"], "NOT_FOUND");
        assert_eq!(
            wire["content"][0],
            json!({"type": "text", "text": "partial log"})
        );
    }
}
