//! Answers for lines that are not a JSON-RPC message rmcp would read.
//!
//! rmcp drops a line that is not JSON (and one nested deeper than serde_json reads, which
//! it takes for the same thing), and answers well-formed JSON of the wrong shape with an
//! error that carries no id. A client can tell neither from a server that hangs, so the
//! front answers these lines itself, with the request's id wherever it can be read. This
//! runs only for lines the front's ordinary parse already refused.
//!
//! Also the refusal both fronts write for a request that arrives once the server drains.

use rmcp::model::{
    CallToolRequest, CancelTaskRequest, ClientJsonRpcMessage, ClientRequest, CompleteRequest,
    DiscoverRequest, ErrorCode, GetPromptRequest, GetSkillRequest, GetTaskRequest,
    InitializeRequest, JsonRpcMessage, ListPromptsRequest, ListResourceTemplatesRequest,
    ListResourcesRequest, ListSkillsRequest, ListToolsRequest, PingRequest,
    ReadResourceDirectoryRequest, ReadResourceRequest, SubscriptionsListenRequest,
    UpdateTaskRequest,
};
use serde::Deserializer as _;
use serde::de::{DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};

pub(in crate::mcp) use super::message::AnswerId;
use super::message::{self, Envelope};
use crate::text::json_kind;

/// The deepest nesting of arrays and objects serde_json (and so rmcp) reads: the 128th
/// level is refused.
pub(in crate::mcp) const MAX_NESTING: usize = 127;

/// The UTF-8 byte order mark rmcp skips at the start of a line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// The longest line rmcp reads (newline included); it drops a longer one without a word.
pub(in crate::mcp) const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The error line for a line longer than rmcp reads, from the first [`MAX_LINE_BYTES`] of
/// it (the rest is not read), with the id if those bytes show it.
pub(in crate::mcp) fn too_long(start: &[u8]) -> Vec<u8> {
    let start = start.strip_prefix(BOM).unwrap_or(start).trim_ascii_start();
    let error = Malformed {
        id: readable_id(start),
        code: ErrorCode::INVALID_REQUEST,
        message: format!(
            "Request too large: the message is longer than the {MAX_LINE_BYTES} bytes this \
             server reads in one line; send smaller arguments, or split the work into several \
             calls"
        ),
        data: Some(json!({"limitBytes": MAX_LINE_BYTES})),
    };
    error.to_line()
}

/// What is wrong with a message, as the JSON-RPC error it is answered with.
pub(in crate::mcp) struct Malformed {
    pub(in crate::mcp) id: AnswerId,
    pub(in crate::mcp) code: ErrorCode,
    pub(in crate::mcp) message: String,
    pub(in crate::mcp) data: Option<Value>,
}

impl Malformed {
    fn new(id: impl Into<AnswerId>, code: ErrorCode, message: impl Into<String>) -> Self {
        Malformed {
            id: id.into(),
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The JSON-RPC error response, one line.
    pub(in crate::mcp) fn to_line(&self) -> Vec<u8> {
        message::error_line(&self.id, self.code, &self.message, self.data.clone())
    }
}

/// The error line to answer `line` with, or `None` when rmcp reads it after all (a blank
/// line, or a message behind a byte order mark or whitespace).
pub(in crate::mcp) fn answer(line: &[u8]) -> Option<Vec<u8>> {
    diagnose(line).map(|malformed| malformed.to_line())
}

/// What is wrong with `message`, or `None` when it is a JSON object whose JSON-RPC members
/// have the right types (after a byte order mark or whitespace, which rmcp skips).
pub(in crate::mcp) fn diagnose(line: &[u8]) -> Option<Malformed> {
    let line = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    if line.is_empty() {
        return None;
    }
    if std::str::from_utf8(line).is_err() {
        return Some(Malformed::new(
            Value::Null,
            ErrorCode::PARSE_ERROR,
            "Parse error: the message is not valid UTF-8; send JSON-RPC as UTF-8 text, one \
             message per line",
        ));
    }
    if line.first() == Some(&b'{')
        && let Ok(message) = serde_json::from_slice::<Envelope>(line)
    {
        return match message.problem() {
            Some(why) => Some(Malformed::new(
                readable_id(line),
                ErrorCode::INVALID_REQUEST,
                format!("Invalid request: {why}"),
            )),
            None => unread(line, &message),
        };
    }
    let parsed = serde_json::from_slice::<Value>(line);
    let depth = nesting(line);
    if parsed.is_err() && depth > MAX_NESTING {
        return Some(Malformed {
            id: readable_id(line),
            code: ErrorCode::INVALID_REQUEST,
            message: format!(
                "Invalid request: the message nests {depth} levels of arrays and objects, more \
                 than the {MAX_NESTING} this server reads; send flatter arguments (for instance \
                 a deep structure as a JSON string)"
            ),
            data: Some(json!({"nestingLimit": MAX_NESTING})),
        });
    }
    let value = match parsed {
        Ok(value) => value,
        Err(error) => {
            return Some(Malformed::new(
                Value::Null,
                ErrorCode::PARSE_ERROR,
                format!("Parse error: the message is not JSON ({error})"),
            ));
        }
    };
    let (id, message) = match &value {
        Value::Object(_) => {
            let why = serde_json::from_slice::<Envelope>(line)
                .err()
                .map_or_else(String::new, |error| error.to_string());
            (
                readable_id(line),
                format!("Invalid request: not a JSON-RPC request object ({why})"),
            )
        }
        Value::Array(_) => (
            AnswerId::null(),
            "Invalid request: batches are not part of MCP; send each message on its own line"
                .to_owned(),
        ),
        other => (
            AnswerId::null(),
            format!(
                "Invalid request: expected a JSON-RPC request object, got {}",
                json_kind(other)
            ),
        ),
    };
    Some(Malformed::new(id, ErrorCode::INVALID_REQUEST, message))
}

/// The error line for a request whose envelope is right but which rmcp cannot read as a
/// client message (an id that is no integer rmcp takes, `params` of the wrong shape for its
/// method): rmcp would answer it with `id: null`. `None` when rmcp reads it, or when it has
/// no id to answer with (a notification, which gets no answer either way).
pub(in crate::mcp) fn unreadable(line: &[u8]) -> Option<Vec<u8>> {
    let line = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    let message = serde_json::from_slice::<Envelope>(line).ok()?;
    unread(line, &message).map(|malformed| malformed.to_line())
}

/// Why rmcp cannot read `line`, a request with a well-typed envelope (`message`).
fn unread(line: &[u8], message: &Envelope) -> Option<Malformed> {
    let method = message.method.as_deref()?;
    message
        .id
        .as_ref()
        .filter(|id| id.is_string() || id.is_number())?;
    let error = serde_json::from_slice::<ClientJsonRpcMessage>(line).err()?;
    let id = readable_id(line);
    let why = if let Some(why) = id_problem(&id) {
        why
    } else {
        format!(
            "the server cannot read the `params` of this `{method}` request ({error}); see the \
             method's schema in the MCP specification"
        )
    };
    Some(Malformed::new(
        id,
        ErrorCode::INVALID_REQUEST,
        format!("Invalid request: {why}"),
    ))
}

/// What is wrong with an id that is a number rmcp does not read (a fraction, or an integer
/// outside 64 bits); `None` for any other id.
fn id_problem(id: &AnswerId) -> Option<String> {
    let value = id.value();
    (value.is_number() && value.as_i64().is_none()).then(|| {
        format!(
            "the `id` {id} is not a string or a 64-bit signed integer; use a string id, or an \
             integer from -2^63 to 2^63-1"
        )
    })
}

/// The top-level id of an object, as written, if it is one a response can carry (a string
/// or number); `null` otherwise. The object may be cut short or nested too deep after its
/// id: members before the id are skipped without being built (and without a depth limit),
/// and reading stops at the id.
pub(in crate::mcp) fn readable_id(line: &[u8]) -> AnswerId {
    if line.first() != Some(&b'{') {
        return AnswerId::null();
    }
    let mut id = None;
    // The visitor stops with an error once it has the id: what is after it is not read.
    let _ = serde_json::Deserializer::from_slice(line).deserialize_map(IdVisitor(&mut id));
    id.filter(|id| {
        let value = id.value();
        value.is_string() || value.is_number()
    })
    .unwrap_or_else(AnswerId::null)
}

/// Reads the members of an object up to `id`, keeping its text.
struct IdVisitor<'a>(&'a mut Option<AnswerId>);

impl<'de> Visitor<'de> for IdVisitor<'_> {
    type Value = ();

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "id" {
                let raw = map.next_value::<&'de serde_json::value::RawValue>()?;
                *self.0 = Some(AnswerId::written(raw));
                return Err(serde::de::Error::custom("the id is read"));
            }
            map.next_value::<IgnoredAny>()?;
        }
        Ok(())
    }
}

/// A message whose JSON-RPC envelope is sound but which rmcp would not read as what its
/// method names: answered here, since rmcp would answer it without its id (or as a method
/// it does not know).
pub(in crate::mcp) enum Refused {
    /// A request: answered with this error.
    Request(Malformed),
    /// A notification (no id): not answered, as JSON-RPC says; the reason is logged.
    Notification(String),
}

/// Whether `line` (an object) has an `id` member, `null` included.
fn has_id(line: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Id {
        #[serde(default, deserialize_with = "present")]
        id: bool,
    }
    fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
        <IgnoredAny as serde::Deserialize>::deserialize(deserializer).map(|_| true)
    }
    serde_json::from_slice::<Id>(line).is_ok_and(|message| message.id)
}

/// Whether rmcp would refuse `line`, a JSON object whose envelope members have the right
/// types: a request whose params do not fit its method (-32602, with the id), whose id is
/// not a string or number (-32600, `id: null`), or that names no method rmcp knows and has
/// params that are not an object (-32601); a notification whose params do not fit. `None`
/// for a message rmcp reads as what it names (one parse, the one rmcp does), and for
/// responses.
pub(in crate::mcp) fn refused(line: &[u8]) -> Option<Refused> {
    let line = line.strip_prefix(BOM).unwrap_or(line);
    // Not UTF-8: `diagnose` says so (the envelope alone would read, skipping the rest).
    std::str::from_utf8(line).ok()?;
    match serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        Ok(JsonRpcMessage::Request(request)) => match &request.request {
            ClientRequest::CustomRequest(custom) if known(&custom.method) => {}
            _ => return None,
        },
        Ok(_) => return None,
        Err(_) => {}
    }
    let envelope = serde_json::from_slice::<Envelope>(line).ok()?;
    if envelope.problem().is_some() {
        // Not JSON-RPC 2.0, or no method: `diagnose` says so.
        return None;
    }
    let method = envelope.method?;
    let params = envelope.params.unwrap_or(Value::Null);
    let problem = params_problem(&method, &params);
    // `"id": null` reads as no id, but a request with a null id is no notification: it is
    // answered (with `id: null`, as for any id that cannot be used).
    let id = envelope.id.or_else(|| has_id(line).then_some(Value::Null));
    let Some(id) = id else {
        let why = match problem {
            Some(Some(why)) => format!("invalid params for `{method}`: {why}"),
            _ => format!(
                "the notification `{method}` (params: {}) is not one the server reads",
                json_kind(&params)
            ),
        };
        return Some(Refused::Notification(why));
    };
    if !(id.is_string() || id.is_number()) {
        return Some(Refused::Request(Malformed::new(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            format!(
                "Invalid request: the id must be a string or a number, not {}",
                json_kind(&id)
            ),
        )));
    }
    let id = readable_id(line);
    if let Some(why) = id_problem(&id) {
        return Some(Refused::Request(Malformed::new(
            id,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: {why}"),
        )));
    }
    let refused = match problem {
        Some(Some(why)) => Malformed::new(
            id,
            ErrorCode::INVALID_PARAMS,
            format!(
                "Invalid params for `{method}`: {why}; the MCP specification gives each \
                 method's params"
            ),
        ),
        Some(None) => Malformed::new(
            id,
            ErrorCode::INVALID_REQUEST,
            format!("Invalid request: `{method}` is not a request the server reads"),
        ),
        None => Malformed::new(
            id,
            ErrorCode::METHOD_NOT_FOUND,
            format!(
                "Method not found: `{method}` (and its params are {}, where MCP has an object)",
                json_kind(&params)
            ),
        ),
    };
    Some(Refused::Request(refused))
}

/// Whether rmcp reads `method` as one of the client requests it knows.
fn known(method: &str) -> bool {
    params_problem(method, &Value::Null).is_some()
}

/// For a client request rmcp knows, what is wrong with `params` (with the path to the member
/// at fault; `None` when they fit); `None` for any other method.
#[expect(
    deprecated,
    reason = "rmcp still reads the legacy logging and subscription requests of 2025-era clients"
)]
fn params_problem(method: &str, params: &Value) -> Option<Option<String>> {
    /// `T` (the request) decides; `P` (its params) names the member at fault, which
    /// rmcp's hand-written request deserialiser does not.
    fn check<T: DeserializeOwned, P: DeserializeOwned>(
        method: &str,
        params: &Value,
    ) -> Option<Option<String>> {
        let mut request = serde_json::Map::new();
        request.insert("method".to_owned(), Value::String(method.to_owned()));
        if !params.is_null() {
            request.insert("params".to_owned(), params.clone());
        }
        let Err(error) = serde_json::from_value::<T>(Value::Object(request)) else {
            return Some(None);
        };
        if params.is_null() {
            return Some(Some("the method needs params".to_owned()));
        }
        let Err(detail) = serde_path_to_error::deserialize::<_, P>(params.clone()) else {
            return Some(Some(error.to_string()));
        };
        let path = detail.path().to_string();
        let detail = detail.into_inner();
        Some(Some(if path.is_empty() || path == "." {
            format!("the params are {}: {detail}", json_kind(params))
        } else {
            format!("`{path}`: {detail}")
        }))
    }
    use rmcp::model as m;
    match method {
        "ping" => check::<PingRequest, Value>(method, params),
        "initialize" => check::<InitializeRequest, m::InitializeRequestParams>(method, params),
        "server/discover" => check::<DiscoverRequest, m::DiscoverRequestParams>(method, params),
        "completion/complete" => check::<CompleteRequest, m::CompleteRequestParams>(method, params),
        "logging/setLevel" => {
            check::<rmcp::model::SetLevelRequest, m::SetLevelRequestParams>(method, params)
        }
        "prompts/get" => check::<GetPromptRequest, m::GetPromptRequestParams>(method, params),
        "prompts/list" => check::<ListPromptsRequest, m::PaginatedRequestParams>(method, params),
        "resources/list" => {
            check::<ListResourcesRequest, m::PaginatedRequestParams>(method, params)
        }
        "resources/templates/list" => {
            check::<ListResourceTemplatesRequest, m::PaginatedRequestParams>(method, params)
        }
        "resources/read" => {
            check::<ReadResourceRequest, m::ReadResourceRequestParams>(method, params)
        }
        "resources/directory/read" => check::<
            ReadResourceDirectoryRequest,
            m::ReadResourceDirectoryRequestParams,
        >(method, params),
        "subscriptions/listen" => {
            check::<SubscriptionsListenRequest, m::SubscriptionsListenRequestParams>(method, params)
        }
        "resources/subscribe" => {
            check::<rmcp::model::SubscribeRequest, m::SubscribeRequestParams>(method, params)
        }
        "resources/unsubscribe" => {
            check::<rmcp::model::UnsubscribeRequest, m::UnsubscribeRequestParams>(method, params)
        }
        "tools/call" => check::<CallToolRequest, m::CallToolRequestParams>(method, params),
        "tools/list" => check::<ListToolsRequest, m::PaginatedRequestParams>(method, params),
        "tasks/get" => check::<GetTaskRequest, m::GetTaskParams>(method, params),
        "tasks/update" => check::<UpdateTaskRequest, m::UpdateTaskParams>(method, params),
        "tasks/cancel" => check::<CancelTaskRequest, m::CancelTaskParams>(method, params),
        "skills/list" => check::<ListSkillsRequest, m::PaginatedRequestParams>(method, params),
        "skills/get" => check::<GetSkillRequest, m::GetSkillRequestParams>(method, params),
        _ => None,
    }
}

/// The deepest nesting of arrays and objects in `bytes`, brackets inside strings aside.
fn nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(levels: usize) -> String {
        format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn the_nesting_limit_is_serde_jsons() {
        assert!(serde_json::from_str::<Value>(&deep(MAX_NESTING)).is_ok());
        assert!(serde_json::from_str::<Value>(&deep(MAX_NESTING + 1)).is_err());
        assert_eq!(nesting(deep(MAX_NESTING + 1).as_bytes()), MAX_NESTING + 1);
        assert_eq!(nesting(br#"{"a":"[[[{{\"]]"}"#), 1);
    }

    #[test]
    fn a_request_rmcp_cannot_read_is_answered_with_its_id() {
        // Found by fuzzing: rmcp reads ids as strings or i64 and answered these with
        // `id: null`.
        for (line, id) in [
            (
                &br#"{"jsonrpc":"2.0","id":13.5,"method":"ping"}"#[..],
                json!(13.5),
            ),
            (
                br#"{"jsonrpc":"2.0","id":-0.5,"method":"tools/list"}"#,
                json!(-0.5),
            ),
            (
                br#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
                json!(u64::MAX),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":5}"#,
                json!("x"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":"a","method":"no/such/method","params":[1]}"#,
                json!("a"),
            ),
        ] {
            let answer: Value = serde_json::from_slice(
                &unreadable(line)
                    .unwrap_or_else(|| panic!("not answered: {}", String::from_utf8_lossy(line))),
            )
            .expect("JSON");
            assert_eq!(answer["id"], id, "{answer}");
            assert_eq!(
                answer["error"]["code"],
                ErrorCode::INVALID_REQUEST.0,
                "{answer}"
            );
            let diagnosed = diagnose(line).expect("the same answer over HTTP");
            assert_eq!(diagnosed.id, id);
        }
        // What rmcp reads, and notifications, are left to it.
        for line in [
            &br#"{"jsonrpc":"2.0","id":13,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":"a","method":"no/such/method","params":{}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":5}"#,
            br#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ] {
            assert!(
                unreadable(line).is_none(),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn an_id_rmcp_cannot_read_is_named_as_the_fault() {
        // Params that fit (or no params): the id is what is wrong, and the answer says so.
        for line in [
            &br#"{"jsonrpc":"2.0","id":13.5,"method":"ping"}"#[..],
            br#"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"tools/list","params":{}}"#,
            br#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
        ] {
            let Some(Refused::Request(refused)) = refused(line) else {
                panic!("not refused: {}", String::from_utf8_lossy(line));
            };
            assert_eq!(refused.code, ErrorCode::INVALID_REQUEST);
            assert!(refused.id.value().is_number(), "{:?}", refused.id);
            // The answer carries the id as written: a client matches it digit for digit.
            let written = std::str::from_utf8(line).unwrap();
            let written = &written[written.find("\"id\":").unwrap() + 5..];
            let written = &written[..written.find(',').unwrap()];
            let answer = String::from_utf8(refused.to_line()).unwrap();
            assert!(answer.contains(&format!("\"id\":{written},")), "{answer}");
            assert!(refused.message.contains(written), "{}", refused.message);
            assert!(
                refused
                    .message
                    .contains("not a string or a 64-bit signed integer")
                    && refused.message.contains("use a string id"),
                "{}",
                refused.message
            );
        }
    }

    #[test]
    fn the_id_of_a_message_nested_too_deep_is_read() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{},"id":7}}"#,
            deep(300)
        );
        assert_eq!(readable_id(line.as_bytes()), json!(7));
    }
}

/// The parts of a message that tell a request from a notification or a response.
#[derive(serde::Deserialize)]
struct RequestProbe<'a> {
    #[serde(default, borrow)]
    method: Option<&'a serde_json::value::RawValue>,
    #[serde(default, borrow)]
    id: Option<&'a serde_json::value::RawValue>,
}

/// Whether `line` is a request (a method and an id), or not a message this can read.
pub(in crate::mcp) fn is_request(line: &[u8]) -> bool {
    serde_json::from_slice::<RequestProbe<'_>>(line)
        .map_or(true, |probe| probe.method.is_some() && probe.id.is_some())
}

/// The error for a request that arrives once the drain has begun: retryable.
pub(in crate::mcp) fn shutting_down(id: AnswerId) -> Malformed {
    Malformed {
        id,
        code: ErrorCode(-32000),
        message: "Service unavailable: the server is shutting down and takes no new sessions \
                  or calls; retry, a new connection reaches another replica"
            .to_owned(),
        data: Some(json!({
            "code": crate::codes::SHUTTING_DOWN,
            "retryable": true,
            "suggestion": "Retry the request on a new connection.",
        })),
    }
}
