//! The JSON-RPC the stdio front (and the HTTP front's direct path) reads and writes by
//! hand: the `tools/call` requests it takes, what it notes of the other messages and of
//! rmcp's answer to `initialize`, and the responses it writes in rmcp's exact form.

use std::borrow::Cow;

use rmcp::model::ErrorCode;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::mcp::SESSION_META;
use crate::mcp::call::{Answer, CALL_PANICKED, PROGRESS_TOKEN};

/// The `_meta` members of a 2026-07-28 request that carry the protocol version, the client
/// and its capabilities.
pub(in crate::mcp) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(in crate::mcp) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
pub(in crate::mcp) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The protocol version whose requests carry their own metadata (no `initialize`).
pub(in crate::mcp) const INLINE_VERSION: &str = "2026-07-28";

/// A `tools/call` request the front can answer. Anything else fails to parse into it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::mcp) struct CallRequest<'a> {
    #[serde(borrow)]
    pub(in crate::mcp) jsonrpc: Cow<'a, str>,
    pub(in crate::mcp) id: Value,
    #[serde(borrow)]
    pub(in crate::mcp) method: Cow<'a, str>,
    pub(in crate::mcp) params: CallParams,
}

/// The params of a [`CallRequest`]: no task or other extension.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::mcp) struct CallParams {
    pub(in crate::mcp) name: String,
    #[serde(default)]
    pub(in crate::mcp) arguments: Option<Map<String, Value>>,
    #[serde(default, rename = "_meta")]
    pub(in crate::mcp) meta: Option<Map<String, Value>>,
}

impl CallRequest<'_> {
    /// Whether the front takes this call: JSON-RPC 2.0 `tools/call` with an id rmcp takes
    /// as it is written (a string, or an integer that fits an `i64`: rmcp answers `2e9` as
    /// `2000000000` and refuses `1.5`, so those are left to it and to the `malformed`
    /// module) and a `_meta` that carries nothing but what the call path reads.
    pub(super) fn plain(&self) -> bool {
        self.plain_envelope() && plain_meta(self.params.meta.as_ref())
    }

    /// Whether the front takes this call on a connection whose requests carry their own
    /// metadata (2026-07-28): as [`plain`](CallRequest::plain), with the version, the
    /// client and its capabilities in `_meta`, and a client the server would not ask
    /// anything mid-call (no sampling or elicitation capability).
    pub(super) fn plain_inline(&self) -> bool {
        let Some(meta) = self.params.meta.as_ref() else {
            return false;
        };
        self.plain_envelope()
            && meta.get(META_VERSION).and_then(Value::as_str) == Some(INLINE_VERSION)
            && meta.get(META_CLIENT).is_some_and(Value::is_object)
            && meta
                .get(META_CAPABILITIES)
                .and_then(Value::as_object)
                .is_some_and(|capabilities| {
                    !capabilities.contains_key("sampling")
                        && !capabilities.contains_key("elicitation")
                })
            && meta.iter().all(|(key, value)| {
                matches!(key.as_str(), META_VERSION | META_CLIENT | META_CAPABILITIES)
                    || plain_member(key, value)
            })
    }

    /// JSON-RPC 2.0 `tools/call` with an id rmcp takes as it is written.
    fn plain_envelope(&self) -> bool {
        self.jsonrpc == "2.0"
            && self.method == "tools/call"
            && (self.id.is_string() || self.id.is_i64())
    }
}

/// A `_meta` the front may take: none, or one with at most the afd session and a progress
/// token (rmcp's client sends one with every request).
fn plain_meta(meta: Option<&Map<String, Value>>) -> bool {
    meta.is_none_or(|meta| meta.iter().all(|(key, value)| plain_member(key, value)))
}

/// Whether a `_meta` member is the afd session or a progress token, of a type the call
/// path reads.
fn plain_member(key: &str, value: &Value) -> bool {
    match key {
        SESSION_META => value.is_string(),
        PROGRESS_TOKEN => value.is_string() || value.is_i64() || value.is_u64(),
        _ => false,
    }
}

/// What the front reads of any other message.
#[derive(Deserialize)]
pub(super) struct Envelope<'a> {
    #[serde(default, borrow)]
    pub(super) jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(super) id: Option<Value>,
    #[serde(default)]
    pub(super) method: Option<String>,
    #[serde(default)]
    pub(super) params: Option<Value>,
    #[serde(default)]
    pub(super) result: Option<IgnoredAny>,
    #[serde(default)]
    pub(super) error: Option<IgnoredAny>,
}

impl Envelope<'_> {
    /// Why a message with an id is no JSON-RPC 2.0 request or response (rmcp would answer
    /// it without its id); `None` when it may be one, or has no id to answer with.
    pub(super) fn problem(&self) -> Option<&'static str> {
        self.id.as_ref()?;
        if self.jsonrpc.as_deref() != Some("2.0") {
            Some("the `jsonrpc` member must be \"2.0\"")
        } else if self.method.is_none() && self.result.is_none() && self.error.is_none() {
            Some("a request needs a `method`")
        } else {
            None
        }
    }
}

/// What the front reads of rmcp's answer to `initialize`.
#[derive(Deserialize)]
pub(super) struct InitializeResponse {
    pub(super) id: Value,
    pub(super) result: InitializeResult,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct InitializeResult {
    pub(super) protocol_version: String,
}

#[derive(Serialize)]
struct ErrorResponse<'a, I: Serialize> {
    jsonrpc: &'static str,
    id: &'a I,
    error: ErrorBody<'a>,
}

/// The id an error answer carries: the request's id as the client wrote it (a number
/// beyond 64 bits keeps its digits, where a parsed `Value` would round it to a float), or
/// `null` when none can be read.
#[derive(Clone)]
pub(in crate::mcp) struct AnswerId(Box<RawValue>);

impl AnswerId {
    /// `null`: the request's id cannot be read.
    pub(in crate::mcp) fn null() -> AnswerId {
        AnswerId::from(Value::Null)
    }

    /// The id as written in a message (`raw` is one JSON value).
    pub(in crate::mcp) fn written(raw: &RawValue) -> AnswerId {
        AnswerId(raw.to_owned())
    }

    /// The id parsed (a number beyond 64 bits as the nearest float).
    pub(in crate::mcp) fn value(&self) -> Value {
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl From<Value> for AnswerId {
    fn from(id: Value) -> AnswerId {
        // A `Value` always serialises.
        AnswerId(serde_json::value::to_raw_value(&id).expect("a JSON value serialises"))
    }
}

impl Serialize for AnswerId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl std::fmt::Display for AnswerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

impl std::fmt::Debug for AnswerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.get())
    }
}

impl PartialEq<Value> for AnswerId {
    fn eq(&self, other: &Value) -> bool {
        self.value() == *other
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i32,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<Value>,
}

/// The response line rmcp writes for `answer`: `CallToolResult`'s fields in its order, the
/// structured content written once and copied as the text; `resultType` only when
/// `complete` (2026-07-28).
pub(super) fn response_line(id: &Value, answer: Answer, complete: bool) -> Vec<u8> {
    let mut line = response_json(id, answer, complete);
    line.push(b'\n');
    line
}

/// The response rmcp writes for `answer`: with `resultType: "complete"` when `complete`
/// (2026-07-28), without on earlier versions.
pub(in crate::mcp) fn response_json(id: &Value, answer: Answer, complete: bool) -> Vec<u8> {
    if answer.has_content() {
        // Content blocks of the command's own: the result as rmcp would write it.
        let mut result = answer.into_tool_result();
        if !complete {
            result.result_type = None;
        }
        return serde_json::to_vec(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
        )
        .unwrap_or_default();
    }
    let json = answer.to_json();
    let mut line = Vec::with_capacity(2 * json.len() + 160);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id is a number or a string (checked before the call), which always serialises.
    serde_json::to_writer(&mut line, id).expect("a JSON-RPC id serialises");
    line.extend_from_slice(br#","result":{"#);
    if complete {
        line.extend_from_slice(br#""resultType":"complete","#);
    }
    line.extend_from_slice(br#""content":[{"type":"text","text":"#);
    serde_json::to_writer(&mut line, &json).expect("a string serialises");
    line.extend_from_slice(br#"}],"structuredContent":"#);
    line.extend_from_slice(json.as_bytes());
    line.extend_from_slice(if answer.success() {
        br#","isError":false"#.as_slice()
    } else {
        br#","isError":true"#.as_slice()
    });
    line.extend_from_slice(b"}}");
    line
}

/// The error response line for a call that panicked outside its handler.
pub(super) fn internal_error_line(id: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code: ErrorCode::INTERNAL_ERROR.0,
            message: CALL_PANICKED,
            data: None,
        },
    })
    .unwrap_or_default();
    line.push(b'\n');
    line
}

/// An error response line.
pub(in crate::mcp) fn error_line(
    id: &AnswerId,
    code: ErrorCode,
    message: &str,
    data: Option<Value>,
) -> Vec<u8> {
    let mut line = serde_json::to_vec(&ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorBody {
            code: code.0,
            message,
            data,
        },
    })
    .unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn takes(id: &str) -> bool {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"afd-help"}}}}"#
        );
        serde_json::from_str::<CallRequest<'_>>(&line)
            .expect("a tools/call")
            .plain()
    }

    #[test]
    fn the_front_takes_only_ids_rmcp_answers_as_written() {
        assert!(takes("7"));
        assert!(takes("-7"));
        assert!(takes(r#""a""#));
        // Found by fuzzing: the front answered these ids as written, rmcp as an integer or
        // not at all, so the answer depended on whether the front was taking calls yet.
        assert!(!takes("1999999999.9999999999225"));
        assert!(!takes("2e9"));
        assert!(!takes("13.5"));
        assert!(!takes("18446744073709551615"));
    }
}
