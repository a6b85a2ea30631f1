//! The HTTP front's direct path: a `tools/call` of the stateless protocol (2026-07-28, no
//! session) answered on the connection's task, through the same call path as every other
//! call, as one `application/json` response (or, when the call logged messages to the
//! client, an SSE stream of them followed by the answer).
//!
//! rmcp would build a service for the request, spawn four tasks and hop between them over
//! three channels, then frame the answer as SSE. A request is taken here only when every
//! check rmcp makes of it is sure to pass: its `Host` among the allowed hosts by rmcp's own
//! rule, no `Origin` (browsers go through rmcp's origin check), both media types accepted
//! without weights, the protocol version 2026-07-28 in the header and in `_meta` alike,
//! the client's capabilities in `_meta`, `Mcp-Method` and `Mcp-Name` naming the method and
//! tool, no `Mcp-Param-*` header, no progress token (progress needs rmcp's stream). Any
//! other request, a faulty one included, goes to rmcp, which answers it as before. The
//! front's own checks (path, token, session owner, body, drain, scopes) come first either
//! way.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;

use bytes::Bytes;
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, Full};
use hyper::Response;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::http::request::Parts;
use rmcp::model::{ErrorCode, JsonObject, ProtocolVersion};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::McpServer;
use super::SESSION_META;
use super::call::{CALL_PANICKED, Outbound, ToolCall};
use super::http_ops::Body;
use super::stream::wire::{self, CallParams, CallRequest};
use crate::auth::Principal;

/// The `_meta` members of a 2026-07-28 request that carry the protocol version, the client
/// and its capabilities.
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// What the direct path knows of the endpoint: the hosts rmcp allows, and the tools whose
/// schemas ask for `Mcp-Param-*` headers (which rmcp checks; the direct path does not).
pub(super) struct Direct {
    /// Host and port (`None`: any port), as rmcp reads its allowed hosts; empty: any host.
    hosts: Vec<(String, Option<u16>)>,
    header_params: HashSet<String>,
}

impl Direct {
    /// For a server whose rmcp front allows `allowed_hosts`.
    pub(super) fn new(server: &McpServer, allowed_hosts: &[String]) -> Direct {
        let hosts = allowed_hosts
            .iter()
            .filter_map(|allowed| {
                let allowed = allowed.trim();
                if allowed.is_empty() {
                    return None;
                }
                Some(match hyper::http::uri::Authority::try_from(allowed) {
                    Ok(authority) => (normalize_host(authority.host()), authority.port_u16()),
                    Err(_) => (normalize_host(allowed), None),
                })
            })
            .collect();
        let header_params = server
            .inner
            .tools
            .iter()
            .filter(|tool| {
                serde_json::to_string(&*tool.input_schema)
                    .is_ok_and(|schema| schema.contains("x-mcp-header"))
            })
            .map(|tool| tool.name.to_string())
            .collect();
        Direct {
            hosts,
            header_params,
        }
    }

    /// The call in `body` if the direct path takes the request, else `None` (rmcp takes
    /// it).
    pub(super) fn take<'a>(&self, parts: &Parts, body: &'a [u8]) -> Option<CallRequest<'a>> {
        let headers = &parts.headers;
        let version = ProtocolVersion::V_2026_07_28.as_str();
        if headers.contains_key(hyper::header::ORIGIN)
            || headers.contains_key(super::http::SESSION_HEADER)
            || !self.host_allowed(parts)
            || !accepts_both(headers)
            || only(headers, "mcp-protocol-version")? != version.as_bytes()
            || only(headers, "mcp-method")? != b"tools/call"
            || headers
                .keys()
                .any(|name| name.as_str().starts_with("mcp-param-"))
        {
            return None;
        }
        let call: CallRequest<'a> = serde_json::from_slice(body).ok()?;
        let meta = call.params.meta.as_ref()?;
        let plain = call.jsonrpc == "2.0"
            && call.method == "tools/call"
            && (call.id.is_string() || call.id.is_i64())
            && only(headers, "mcp-name")? == call.params.name.as_bytes()
            && (self.header_params.is_empty() || !self.header_params.contains(&call.params.name))
            && meta.get(META_VERSION).and_then(Value::as_str) == Some(version)
            && meta.get(META_CAPABILITIES).is_some_and(Value::is_object)
            && meta.keys().all(|key| {
                matches!(
                    key.as_str(),
                    META_VERSION
                        | META_CLIENT
                        | META_CAPABILITIES
                        | SESSION_META
                        | "traceparent"
                        | "tracestate"
                        | "baggage"
                )
            });
        plain.then_some(call)
    }

    /// Whether rmcp would let the request's `Host` through: its rule, word for word.
    fn host_allowed(&self, parts: &Parts) -> bool {
        if self.hosts.is_empty() {
            return true;
        }
        let Some(host) = parts.headers.get(hyper::header::HOST) else {
            return false;
        };
        let Some(authority) = host
            .to_str()
            .ok()
            .and_then(|host| hyper::http::uri::Authority::try_from(host).ok())
        else {
            return false;
        };
        let (name, port) = (normalize_host(authority.host()), authority.port_u16());
        self.hosts.iter().any(|(allowed, allowed_port)| {
            *allowed == name && allowed_port.is_none_or(|allowed_port| port == Some(allowed_port))
        })
    }
}

/// A host as rmcp compares it: without brackets, in lower case.
fn normalize_host(host: &str) -> String {
    host.trim_matches('[')
        .trim_matches(']')
        .to_ascii_lowercase()
}

/// The value of a header sent once, as bytes; `None` when absent or repeated.
fn only<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h [u8]> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then(|| first.as_bytes())
}

/// Whether `Accept` lists both `application/json` and `text/event-stream`, with no
/// parameter on any media range (a weight, which rmcp reads, sends the request to it).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut sse) = (false, false);
    for value in headers.get_all(hyper::header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for range in value.split(',') {
            if range.contains(';') || range.contains('"') {
                return false;
            }
            let range = range.trim();
            json |= range.eq_ignore_ascii_case("application/json");
            sse |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && sse
}

/// Answers `call` on this task: `application/json`, or `text/event-stream` with the log
/// messages the call sent its client before the answer.
pub(super) async fn answer(
    server: &McpServer,
    call: CallRequest<'_>,
    principal: Option<Principal>,
    parts: &Parts,
) -> Response<Body> {
    let CallRequest { id, params, .. } = call;
    let CallParams {
        name,
        arguments,
        meta,
    } = params;
    let origin = if crate::telemetry::enabled() {
        super::http::origin_of_parts(parts)
    } else {
        crate::telemetry::Origin::default()
    };
    let request_id = match &id {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    let this = server.seen_by(principal.as_ref());
    let call = ToolCall {
        name: &name,
        arguments: Value::Object(arguments.unwrap_or_default()),
        meta: meta.as_ref().map(|meta| meta as &JsonObject),
        cancel: CancellationToken::new(),
        peer: Outbound::Held,
        legacy: false,
        principal,
        request_id: Some(request_id),
        origin,
    };
    let called = AssertUnwindSafe(this.run_tool_call(call))
        .catch_unwind()
        .await;
    let (held, answer) = match called {
        Ok(called) => (called.held, wire::response_json(&id, called.answer, true)),
        Err(_) => {
            tracing::error!(tool = %name, "a tools/call panicked outside its handler");
            let id = super::stream::malformed::AnswerId::from(id);
            let mut line = wire::error_line(&id, ErrorCode::INTERNAL_ERROR, CALL_PANICKED, None);
            line.pop();
            (Vec::new(), line)
        }
    };
    if held.is_empty() {
        return with_type(answer, "application/json");
    }
    // The log messages first, then the answer: one SSE event each.
    let mut stream = Vec::with_capacity(answer.len() + 256 * held.len());
    for params in held {
        let notification = serde_json::json!({
            "jsonrpc": "2.0", "method": "notifications/message", "params": params
        });
        stream.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut stream, &notification).expect("a notification serialises");
        stream.extend_from_slice(b"\n\n");
    }
    stream.extend_from_slice(b"data: ");
    stream.extend_from_slice(&answer);
    stream.extend_from_slice(b"\n\n");
    with_type(stream, "text/event-stream")
}

/// A 200 response of `body` as `content_type`.
fn with_type(body: Vec<u8>, content_type: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    response
}
