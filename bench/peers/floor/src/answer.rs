//! The floor's answers: a fixed result per method, carrying the request's id. Only `id` and
//! `method` are read from a request; everything else is skipped unparsed.

use serde::Deserialize;
use serde_json::value::RawValue;

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a str>,
}

const INITIALIZE: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor","version":"0.1.0"}}"#;

/// The catalog's `tools/list` result (written by bench/peers/generate.py).
const TOOLS_LIST: &str = include_str!("../tools-list.json");

/// What `user-list-a` answers to `{}`: the same bytes for every `tools/call`.
const CALL: &str = r#"{"content":[{"type":"text","text":"{\"command\":\"user-list-a\",\"echo\":{\"limit\":20}}"}],"structuredContent":{"command":"user-list-a","echo":{"limit":20}}}"#;

/// The answer to one JSON-RPC message, or `None` for a notification (or what is not JSON-RPC).
pub fn answer(message: &[u8]) -> Option<String> {
    let request: Request = serde_json::from_slice(message).ok()?;
    let result = match request.method {
        Some("tools/call") => CALL,
        Some("initialize") => INITIALIZE,
        Some("tools/list") => TOOLS_LIST.trim_end(),
        _ => "{}",
    };
    Some(format!(r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#, request.id?.get()))
}
