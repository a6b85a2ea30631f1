//! Answers for lines that are not a JSON-RPC message rmcp would read.
//!
//! rmcp drops a line that is not JSON (and one nested deeper than serde_json reads, which
//! it takes for the same thing), and answers well-formed JSON of the wrong shape with an
//! error that carries no id. A client can tell neither from a server that hangs, so the
//! front answers these lines itself, with the request's id wherever it can be read. This
//! runs only for lines the front's ordinary parse already refused.

use rmcp::model::{ClientJsonRpcMessage, ErrorCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::wire::{self, Envelope};
use crate::text::json_kind;

/// The deepest nesting of arrays and objects serde_json (and so rmcp) reads: the 128th
/// level is refused.
pub(in crate::mcp) const MAX_NESTING: usize = 127;

/// The UTF-8 byte order mark rmcp skips at the start of a line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Only the top-level `id`: serde_json skips the other members without building them and
/// without a depth limit, so this still reads the id of a message nested too deep.
#[derive(Deserialize)]
struct IdOnly {
    #[serde(default)]
    id: Option<Value>,
}

/// The longest line rmcp reads (newline included); it drops a longer one without a word.
pub(super) const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

/// The error line for a line rmcp would drop for its length, with the id if it can be
/// read; `None` for a line rmcp reads.
pub(super) fn too_long(line: &[u8]) -> Option<Vec<u8>> {
    if line.len() <= MAX_LINE_BYTES {
        return None;
    }
    let trimmed = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    let error = Malformed {
        id: readable_id(trimmed),
        code: ErrorCode::INVALID_REQUEST,
        message: format!(
            "Request too large: the message is {} bytes, more than the {MAX_LINE_BYTES} this \
             server reads in one line; send smaller arguments, or split the work into several \
             calls",
            line.len()
        ),
        data: Some(json!({"limitBytes": MAX_LINE_BYTES})),
    };
    Some(error.to_line())
}

/// What is wrong with a message, as the JSON-RPC error it is answered with.
pub(in crate::mcp) struct Malformed {
    pub(in crate::mcp) id: Value,
    pub(in crate::mcp) code: ErrorCode,
    pub(in crate::mcp) message: String,
    pub(in crate::mcp) data: Option<Value>,
}

impl Malformed {
    fn new(id: Value, code: ErrorCode, message: impl Into<String>) -> Self {
        Malformed {
            id,
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The JSON-RPC error response, one line.
    pub(in crate::mcp) fn to_line(&self) -> Vec<u8> {
        wire::error_line(&self.id, self.code, &self.message, self.data.clone())
    }
}

/// The error line to answer `line` with, or `None` when rmcp reads it after all (a blank
/// line, or a message behind a byte order mark or whitespace).
pub(super) fn answer(line: &[u8]) -> Option<Vec<u8>> {
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
            Value::Null,
            "Invalid request: batches are not part of MCP; send each message on its own line"
                .to_owned(),
        ),
        other => (
            Value::Null,
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
pub(super) fn unreadable(line: &[u8]) -> Option<Vec<u8>> {
    let line = line.strip_prefix(BOM).unwrap_or(line).trim_ascii();
    let message = serde_json::from_slice::<Envelope>(line).ok()?;
    unread(line, &message).map(|malformed| malformed.to_line())
}

/// Why rmcp cannot read `line`, a request with a well-typed envelope (`message`).
fn unread(line: &[u8], message: &Envelope) -> Option<Malformed> {
    let method = message.method.as_deref()?;
    let id = message
        .id
        .clone()
        .filter(|id| id.is_string() || id.is_number())?;
    let error = serde_json::from_slice::<ClientJsonRpcMessage>(line).err()?;
    let why = if id.is_number() && id.as_i64().is_none() {
        format!("the `id` {id} is not a string or a 64-bit signed integer")
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

/// The top-level id of an object, if it is one a response can carry (a string or number);
/// `null` otherwise.
pub(in crate::mcp) fn readable_id(line: &[u8]) -> Value {
    if line.first() != Some(&b'{') {
        return Value::Null;
    }
    serde_json::from_slice::<IdOnly>(line)
        .ok()
        .and_then(|message| message.id)
        .filter(|id| id.is_string() || id.is_number())
        .unwrap_or(Value::Null)
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
    fn the_id_of_a_message_nested_too_deep_is_read() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","method":"tools/call","params":{},"id":7}}"#,
            deep(300)
        );
        assert_eq!(readable_id(line.as_bytes()), json!(7));
    }
}
