//! The JSON-RPC the stdio front (and the HTTP front's direct path) reads and writes by
//! hand: the `tools/call` requests it takes, what it notes of the other messages and of
//! rmcp's answer to `initialize`, and the responses it writes in rmcp's exact form.

use std::borrow::Cow;

use rmcp::model::ErrorCode;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::mcp::server::SESSION_META;
use crate::mcp::server::answer::{Answer, CALL_PANICKED};
use crate::mcp::server::asking::Declared;
use crate::mcp::server::call::PROGRESS_TOKEN;

/// The `_meta` members of a 2026-07-28 request that carry the protocol version, the client
/// and its capabilities.
pub(in crate::mcp) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(in crate::mcp) const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
pub(in crate::mcp) const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The protocol version whose requests carry their own metadata (no `initialize`).
pub(in crate::mcp) const INLINE_VERSION: &str = "2026-07-28";

/// The methods the 2026-07-28 revision removed: its lifecycle has no handshake, no
/// connection-wide log level and no subscription to one resource at a time (a request's
/// `_meta` and `subscriptions/listen` took their place). Asked on that revision they are
/// answered as unknown methods (-32601; over HTTP with 404), whatever their params.
pub(in crate::mcp) const REMOVED_METHODS: [&str; 4] = [
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The id and method of `line` when it is a request (with a usable id) for one of the
/// [`REMOVED_METHODS`], whatever its params; else `None`.
pub(in crate::mcp) fn removed_method(line: &[u8]) -> Option<(Value, String)> {
    let envelope = serde_json::from_slice::<Envelope>(line).ok()?;
    let method = envelope.method?;
    let id = envelope.id.filter(|id| id.is_string() || id.is_number())?;
    REMOVED_METHODS
        .contains(&method.as_str())
        .then_some((id, method))
}

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

/// The params of a [`CallRequest`]: no task or other extension; a later round's answers and
/// state (2026-07-28).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(in crate::mcp) struct CallParams {
    pub(in crate::mcp) name: String,
    #[serde(default)]
    pub(in crate::mcp) arguments: Option<Map<String, Value>>,
    #[serde(default, rename = "_meta")]
    pub(in crate::mcp) meta: Option<CallMeta>,
    /// The client's answers to the questions of an earlier round (2026-07-28).
    #[serde(default, rename = "inputResponses")]
    pub(in crate::mcp) input_responses: Option<Value>,
    /// The state of an earlier round, as the server sealed it (2026-07-28).
    #[serde(default, rename = "requestState")]
    pub(in crate::mcp) request_state: Option<String>,
}

/// The `_meta` of a [`CallRequest`] as the fronts read it: the members the call path reads
/// kept as JSON, the protocol's own members of a 2026-07-28 request checked as they are
/// read and not kept (a call's metadata is read on every call; building maps of the
/// client's name and capabilities only to look at their shape cost more than the rest of
/// the parse).
#[derive(Default)]
pub(in crate::mcp) struct CallMeta {
    /// The members the call path reads: the afd session, a progress token and the trace
    /// context (`traceparent`, `tracestate`, `baggage`).
    pub(in crate::mcp) read: Map<String, Value>,
    /// The 2026-07-28 members, as far as they were sent.
    pub(in crate::mcp) inline: InlineMeta,
    /// Whether a member of any other name was sent.
    pub(in crate::mcp) other: bool,
}

/// What a call's `_meta` says of the 2026-07-28 members.
#[derive(Default)]
pub(in crate::mcp) struct InlineMeta {
    /// Whether any of them was sent.
    pub(in crate::mcp) sent: bool,
    /// The version is 2026-07-28.
    pub(in crate::mcp) version: bool,
    /// The client's description is an object.
    pub(in crate::mcp) client: bool,
    /// The client's capabilities are an object.
    pub(in crate::mcp) capabilities: bool,
    /// The capabilities include sampling or elicitation: the server may ask the client
    /// something mid-call.
    pub(in crate::mcp) asks_client: bool,
    /// The capabilities declared among those a handler may need.
    pub(in crate::mcp) declared: Declared,
}

impl CallMeta {
    /// Whether the metadata is a 2026-07-28 request's (version, client and capabilities),
    /// whatever the client declared: the server asks such a client through rounds, with no
    /// request of its own mid-call.
    pub(in crate::mcp) fn inline_plain(&self) -> bool {
        let inline = &self.inline;
        inline.version && inline.client && inline.capabilities
    }
}

impl<'de> Deserialize<'de> for CallMeta {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = CallMeta;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("an object")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<CallMeta, A::Error> {
                let mut meta = CallMeta::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        META_VERSION => {
                            meta.inline.sent = true;
                            let version = map.next_value::<Shape>()?;
                            meta.inline.version = version.text.as_deref() == Some(INLINE_VERSION);
                        }
                        META_CLIENT => {
                            meta.inline.sent = true;
                            meta.inline.client = map.next_value::<Shape>()?.object;
                        }
                        META_CAPABILITIES => {
                            meta.inline.sent = true;
                            let capabilities = map.next_value::<Shape>()?;
                            meta.inline.capabilities = capabilities.object;
                            meta.inline.asks_client = capabilities.asks_client;
                            meta.inline.declared = capabilities.declared;
                        }
                        SESSION_META | PROGRESS_TOKEN | "traceparent" | "tracestate"
                        | "baggage" => {
                            let value = map.next_value::<Value>()?;
                            meta.read.insert(key.into_owned(), value);
                        }
                        _ => {
                            meta.other = true;
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(meta)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Which extensions a `capabilities.extensions` object declares (any other shape: none).
#[derive(Default)]
struct Extensions {
    tasks: bool,
}

impl<'de> Deserialize<'de> for Extensions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Look;
        impl<'de> serde::de::Visitor<'de> for Look {
            type Value = Extensions;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Extensions, A::Error> {
                let mut tasks = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    // `null` declares nothing.
                    let value = map.next_value::<Option<IgnoredAny>>()?;
                    tasks |= key == rmcp::model::TASKS_EXTENSION_ID && value.is_some();
                }
                Ok(Extensions { tasks })
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Extensions, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Extensions::default())
            }

            fn visit_str<E>(self, _: &str) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }

            fn visit_bool<E>(self, _: bool) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }

            fn visit_i64<E>(self, _: i64) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }

            fn visit_u64<E>(self, _: u64) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }

            fn visit_f64<E>(self, _: f64) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }

            fn visit_unit<E>(self) -> Result<Extensions, E> {
                Ok(Extensions::default())
            }
        }
        deserializer.deserialize_any(Look)
    }
}

/// The shape of a protocol member of `_meta`, read without keeping it: its text if a
/// string, whether an object, and whether an object with `sampling` or `elicitation`.
#[derive(Default)]
struct Shape<'a> {
    text: Option<Cow<'a, str>>,
    object: bool,
    asks_client: bool,
    declared: Declared,
}

impl<'de> Deserialize<'de> for Shape<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Look;
        impl<'de> serde::de::Visitor<'de> for Look {
            type Value = Shape<'de>;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Shape<'de>, E> {
                Ok(Shape {
                    text: Some(Cow::Borrowed(text)),
                    ..Shape::default()
                })
            }

            fn visit_str<E>(self, text: &str) -> Result<Shape<'de>, E> {
                Ok(Shape {
                    text: Some(Cow::Owned(text.to_owned())),
                    ..Shape::default()
                })
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Shape<'de>, A::Error> {
                let mut declared = Declared::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "sampling" => declared.sampling = true,
                        "elicitation" => declared.elicitation = true,
                        "roots" => declared.roots = true,
                        "extensions" => {
                            let extensions = map.next_value::<Extensions>()?;
                            declared.tasks = extensions.tasks;
                            continue;
                        }
                        _ => {}
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                Ok(Shape {
                    object: true,
                    asks_client: declared.sampling || declared.elicitation,
                    declared,
                    ..Shape::default()
                })
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Shape<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Shape::default())
            }

            fn visit_bool<E>(self, _: bool) -> Result<Shape<'de>, E> {
                Ok(Shape::default())
            }

            fn visit_i64<E>(self, _: i64) -> Result<Shape<'de>, E> {
                Ok(Shape::default())
            }

            fn visit_u64<E>(self, _: u64) -> Result<Shape<'de>, E> {
                Ok(Shape::default())
            }

            fn visit_f64<E>(self, _: f64) -> Result<Shape<'de>, E> {
                Ok(Shape::default())
            }

            fn visit_unit<E>(self) -> Result<Shape<'de>, E> {
                Ok(Shape::default())
            }
        }
        deserializer.deserialize_any(Look)
    }
}

impl CallRequest<'_> {
    /// Whether the front takes this call: JSON-RPC 2.0 `tools/call` with an id rmcp takes
    /// as it is written (a string, or an integer that fits an `i64`: rmcp answers `2e9` as
    /// `2000000000` and refuses `1.5`, so those are left to it and to the `malformed`
    /// module) and a `_meta` that carries nothing but what the call path reads.
    pub(in crate::mcp) fn plain(&self) -> bool {
        self.plain_envelope()
            && self
                .params
                .meta
                .as_ref()
                .is_none_or(|meta| !meta.inline.sent && plain_meta(meta))
    }

    /// Whether the front takes this call on a connection whose requests carry their own
    /// metadata (2026-07-28): as [`plain`](CallRequest::plain), with the version, the
    /// client and capabilities in `_meta`.
    pub(in crate::mcp) fn plain_inline(&self) -> bool {
        let Some(meta) = self.params.meta.as_ref() else {
            return false;
        };
        self.plain_envelope() && meta.inline_plain() && plain_meta(meta)
    }

    /// JSON-RPC 2.0 `tools/call` with an id rmcp takes as it is written.
    fn plain_envelope(&self) -> bool {
        self.jsonrpc == "2.0"
            && self.method == "tools/call"
            && (self.id.is_string() || self.id.is_i64())
    }
}

/// Whether a `_meta`'s members besides the protocol's are at most the afd session and a
/// progress token (rmcp's client sends one with every request), of types the call path
/// reads.
fn plain_meta(meta: &CallMeta) -> bool {
    !meta.other
        && meta.read.iter().all(|(key, value)| match key.as_str() {
            SESSION_META => value.is_string(),
            PROGRESS_TOKEN => value.is_string() || value.is_i64() || value.is_u64(),
            _ => false,
        })
}

/// What the front reads of any other message.
#[derive(Deserialize)]
pub(in crate::mcp) struct Envelope<'a> {
    #[serde(default, borrow)]
    pub(in crate::mcp) jsonrpc: Option<Cow<'a, str>>,
    #[serde(default)]
    pub(in crate::mcp) id: Option<Value>,
    #[serde(default)]
    pub(in crate::mcp) method: Option<String>,
    #[serde(default)]
    pub(in crate::mcp) params: Option<Value>,
    #[serde(default)]
    pub(in crate::mcp) result: Option<IgnoredAny>,
    #[serde(default)]
    pub(in crate::mcp) error: Option<IgnoredAny>,
}

impl Envelope<'_> {
    /// Why a message with an id is no JSON-RPC 2.0 request or response (rmcp would answer
    /// it without its id); `None` when it may be one, or has no id to answer with.
    pub(in crate::mcp) fn problem(&self) -> Option<&'static str> {
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
pub(in crate::mcp) struct InitializeResponse {
    pub(in crate::mcp) id: Value,
    pub(in crate::mcp) result: InitializeResult,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(in crate::mcp) struct InitializeResult {
    pub(in crate::mcp) protocol_version: String,
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
pub(in crate::mcp) fn response_line(id: &Value, answer: Answer, complete: bool) -> Vec<u8> {
    let mut line = response_json(id, answer, complete);
    line.push(b'\n');
    line
}

/// The response rmcp writes for `answer`: with `resultType: "complete"` when `complete`
/// (2026-07-28), without on earlier versions.
pub(in crate::mcp) fn response_json(id: &Value, answer: Answer, complete: bool) -> Vec<u8> {
    let answer = match answer {
        Answer::InputRequired(result) => {
            return serde_json::to_vec(
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            )
            .unwrap_or_default();
        }
        Answer::Task(result) => {
            return serde_json::to_vec(
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result}),
            )
            .unwrap_or_default();
        }
        Answer::Protocol(error) => {
            return serde_json::to_vec(
                &serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error}),
            )
            .unwrap_or_default();
        }
        answer => answer,
    };
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
pub(in crate::mcp) fn internal_error_line(id: &Value) -> Vec<u8> {
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

    fn meta(json: &str) -> CallMeta {
        serde_json::from_str(json).expect("an object")
    }

    #[test]
    fn a_calls_metadata_keeps_what_the_call_path_reads_and_checks_the_rest() {
        let inline = meta(
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                "io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},
                "io.modelcontextprotocol/clientCapabilities":{"roots":{}},
                "progressToken":7,"traceparent":"00-1-2-01","afd/session":"s"}"#,
        );
        assert!(inline.inline.sent && inline.inline_plain() && !inline.other);
        assert_eq!(inline.read.len(), 3);
        assert_eq!(inline.read["progressToken"], 7);
        assert!(
            !plain_meta(&inline),
            "a trace context is not the stdio front's"
        );

        for asks in ["sampling", "elicitation"] {
            let asking = meta(&format!(
                r#"{{"io.modelcontextprotocol/protocolVersion":"2026-07-28",
                    "io.modelcontextprotocol/clientInfo":{{}},
                    "io.modelcontextprotocol/clientCapabilities":{{"{asks}":{{"form":{{}}}}}}}}"#
            ));
            assert!(asking.inline.asks_client && asking.inline_plain());
        }
        let other_version = meta(
            r#"{"io.modelcontextprotocol/protocolVersion":"2025-11-25",
                "io.modelcontextprotocol/clientInfo":{},
                "io.modelcontextprotocol/clientCapabilities":{}}"#,
        );
        assert!(other_version.inline.sent && !other_version.inline_plain());
        let shapeless = meta(
            r#"{"io.modelcontextprotocol/protocolVersion":["2026-07-28"],
                "io.modelcontextprotocol/clientInfo":"c",
                "io.modelcontextprotocol/clientCapabilities":[{"sampling":{}}]}"#,
        );
        let shape = &shapeless.inline;
        assert!(!shape.version && !shape.client && !shape.capabilities && !shape.asks_client);
        // An escaped version is still read as the version.
        let escaped = meta(r#"{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28"}"#);
        assert!(escaped.inline.version);

        let session = meta(r#"{"afd/session":"s","progressToken":"p"}"#);
        assert!(!session.inline.sent && plain_meta(&session));
        let unknown = meta(r#"{"afd/session":"s","x-vendor":{"a":[1,2]}}"#);
        assert!(unknown.other && !plain_meta(&unknown));
        let mistyped = meta(r#"{"progressToken":1.5}"#);
        assert!(!plain_meta(&mistyped));
        assert!(serde_json::from_str::<CallMeta>("[1]").is_err());
    }
}
