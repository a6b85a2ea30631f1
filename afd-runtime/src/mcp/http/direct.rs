//! The HTTP front's direct path: a `tools/call` answered on the connection's task, through
//! the same call path as every other call, as one `application/json` response (or, when
//! the call logged messages to the client or changed its session's listing, an SSE stream
//! of those notifications followed by the answer).
//!
//! rmcp would build a service for a stateless request, or pass a session's request to the
//! session's task, spawn tasks and hop between them over channels, then frame the answer as
//! SSE. A request is taken here only when every check rmcp makes of it is sure to pass and
//! nothing in it needs rmcp's machinery: its `Host` among the allowed hosts by rmcp's own
//! rule, no `Origin` (browsers go through rmcp's origin check), both media types accepted
//! without weights, no `Mcp-Param-*` header, and either
//!
//! - the stateless protocol: version 2026-07-28 in the header and in `_meta` alike, the
//!   client's capabilities in `_meta` (whatever they are: a handler asks such a client
//!   through rounds, answered `input_required`, with no stream), `Mcp-Method` and
//!   `Mcp-Name` naming the method and tool; or
//! - an initialised session of the 2025-11-25 protocol (or an earlier one with sessions):
//!   the session opened through this front, still open, its client one the server cannot
//!   ask anything mid-call (no sampling or elicitation capability), the protocol header
//!   absent or a known version with sessions, no per-request version in `_meta`. The call
//!   runs on the session's own server (its context stack, its log level), can be cancelled
//!   with `notifications/cancelled` on the session, and keeps rmcp's session from idling
//!   out.
//!
//! A call with a progress token that does not end when first polled is answered as an SSE
//! stream whose body runs the rest of the call: each `notifications/progress` as it is
//! reported, then the other notifications and the answer.
//!
//! Any other request, a faulty one included, goes to rmcp, which answers it as before. The
//! front's own checks (path, token, session owner, body, drain, scopes) come first either
//! way.

use std::cell::RefCell;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt as _;
use http_body_util::{BodyExt as _, Full};
use hyper::Response;
use hyper::body::Frame;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::http::request::Parts;
use rmcp::model::{ErrorCode, JsonObject, ProgressNotificationParam, ProtocolVersion};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_util::sync::CancellationToken;

use super::ops::Body;
use crate::auth::Principal;
use crate::mcp::server::answer::{Answer, CALL_PANICKED};
use crate::mcp::server::call::{Called, Input, Outbound, PROGRESS_TOKEN, ToolCall};
use crate::mcp::server::caller::SESSION_HEADER;
use crate::mcp::server::state::McpServer;
use crate::mcp::server::state::WeakServer;
use crate::mcp::wire::message::{self, CallParams, CallRequest};

/// What the direct path knows of the endpoint: the hosts rmcp allows, and the sessions it
/// may answer calls of.
pub(in crate::mcp) struct Direct {
    /// Host and port (`None`: any port), as rmcp reads its allowed hosts; empty: any host.
    hosts: Vec<(String, Option<u16>)>,
    sessions: Sessions,
}

/// A call the direct path takes, and the session it belongs to with the session's server
/// (none: stateless).
pub(in crate::mcp) struct Taken<'a> {
    pub(in crate::mcp) call: CallRequest<'a>,
    pub(in crate::mcp) session: Option<(Arc<Session>, McpServer)>,
}

impl Direct {
    /// For a server whose rmcp front allows `allowed_hosts`.
    pub(in crate::mcp) fn new(allowed_hosts: &[String]) -> Direct {
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
        Direct {
            hosts,
            sessions: Sessions::default(),
        }
    }

    /// The call in `body` if the direct path takes the request for `server`, else `None`
    /// (rmcp takes it, and checks the `Mcp-Param-*` headers of the tools that have them).
    pub(in crate::mcp) fn take<'a>(
        &self,
        server: &McpServer,
        parts: &Parts,
        body: &'a [u8],
    ) -> Option<Taken<'a>> {
        let headers = &parts.headers;
        if headers.contains_key(hyper::header::ORIGIN)
            || !self.host_allowed(parts)
            || !accepts_both(headers)
            || headers
                .keys()
                .any(|name| name.as_str().starts_with("mcp-param-"))
        {
            return None;
        }
        let stateless = ProtocolVersion::V_2026_07_28.as_str();
        let session = match headers.get(SESSION_HEADER) {
            None => {
                if only(headers, "mcp-protocol-version")? != stateless.as_bytes()
                    || only(headers, "mcp-method")? != b"tools/call"
                {
                    return None;
                }
                None
            }
            Some(_) => {
                let session = self.sessions.get(only(headers, SESSION_HEADER)?)?;
                let version_ok = match optional(headers, "mcp-protocol-version")? {
                    None => true,
                    Some(version) => ProtocolVersion::KNOWN_VERSIONS.iter().any(|known| {
                        known.has_initialize() && known.as_str().as_bytes() == version
                    }),
                };
                if !version_ok
                    || optional(headers, "mcp-method")?.is_some_and(|m| m != b"tools/call")
                {
                    return None;
                }
                Some(session)
            }
        };
        let call: CallRequest<'a> = serde_json::from_slice(body).ok()?;
        let name_header = match &session {
            None => Some(only(headers, "mcp-name")?),
            Some(_) => optional(headers, "mcp-name")?,
        };
        let meta = call.params.meta.as_ref();
        let token_ok = meta
            .and_then(|meta| meta.read.get(PROGRESS_TOKEN))
            .is_none_or(|token| token.is_string() || token.is_i64() || token.is_u64());
        let meta_ok = token_ok
            && meta.is_none_or(|meta| !meta.other)
            && match &session {
                // A stateless call asks its client through rounds, which need no stream.
                None => meta.is_some_and(|meta| meta.inline.version && meta.inline.capabilities),
                Some(_) => meta.is_none_or(|meta| !meta.inline.sent),
            };
        let plain = call.jsonrpc == "2.0"
            && call.method == "tools/call"
            && (call.id.is_string() || call.id.is_i64())
            && name_header.is_none_or(|name| name == call.params.name.as_bytes())
            && !server.has_header_params(&call.params.name)
            && meta_ok;
        plain.then_some(Taken { call, session })
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
        // As rmcp normalises it, without allocating: brackets trimmed, case ignored.
        let name = authority.host().trim_matches('[').trim_matches(']');
        let port = authority.port_u16();
        self.hosts.iter().any(|(allowed, allowed_port)| {
            allowed.eq_ignore_ascii_case(name)
                && allowed_port.is_none_or(|allowed_port| port == Some(allowed_port))
        })
    }

    /// Runs `initialize`, rmcp's answer to a request that opens a session, and keeps the
    /// session's server for the direct path when the answer opened one for a client the
    /// server cannot ask anything mid-call (`body` is the `initialize` request).
    pub(in crate::mcp) async fn opening<R>(
        &self,
        body: &[u8],
        initialize: impl Future<Output = Response<R>>,
    ) -> Response<R> {
        let (response, opened) = OPENED
            .scope(RefCell::new(None), async {
                let response = initialize.await;
                (response, OPENED.with(|opened| opened.borrow_mut().take()))
            })
            .await;
        if let (Some(server), Some(id)) = (
            opened,
            response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|id| id.to_str().ok()),
        ) && response.status().is_success()
            && !asks_client(body)
        {
            self.sessions.open(id, server);
        }
        response
    }

    /// Forgets session `id` (closed).
    pub(in crate::mcp) fn closed(&self, id: &str) {
        self.sessions.close(id);
    }

    /// Cancels the direct call a `notifications/cancelled` on a session names (rmcp, which
    /// gets the notification too, does not know the call).
    pub(in crate::mcp) fn cancelled(&self, parts: &Parts, body: &[u8]) {
        let Some(session) = parts
            .headers
            .get(SESSION_HEADER)
            .and_then(|id| self.sessions.get(id.as_bytes()))
            .map(|(session, _)| session)
        else {
            return;
        };
        #[derive(Deserialize)]
        struct Cancelled {
            method: String,
            params: CancelledParams,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct CancelledParams {
            request_id: Value,
        }
        // Most messages on a session are not cancellations: those are not parsed.
        if body.windows(9).any(|window| window == b"cancelled")
            && let Ok(cancelled) = serde_json::from_slice::<Cancelled>(body)
            && cancelled.method == "notifications/cancelled"
        {
            session.cancel(&cancelled.params.request_id);
        }
    }
}

tokio::task_local! {
    /// The server made for the session an `initialize` being answered opens.
    static OPENED: RefCell<Option<WeakServer>>;
}

/// Notes `server` as the one made for the session being opened, where a front is opening
/// one (called from the per-session factory).
pub(in crate::mcp) fn made(server: &McpServer) {
    let _ = OPENED.try_with(|opened| *opened.borrow_mut() = Some(server.downgrade()));
}

/// Whether an `initialize` declares a client the server may ask something mid-call
/// (sampling, elicitation), or one that takes tasks: its calls need rmcp's request stream
/// and its record of the client.
fn asks_client(initialize: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Initialize {
        params: Params,
    }
    #[derive(Deserialize)]
    struct Params {
        capabilities: serde_json::Map<String, Value>,
    }
    serde_json::from_slice::<Initialize>(initialize).map_or(true, |initialize| {
        let capabilities = initialize.params.capabilities;
        capabilities.contains_key("sampling")
            || capabilities.contains_key("elicitation")
            || capabilities
                .get("extensions")
                .and_then(|extensions| extensions.get(rmcp::model::TASKS_EXTENSION_ID))
                .is_some()
    })
}

/// The sessions the direct path answers calls of, by id. A session's server is held
/// weakly: rmcp holds it while the session lasts, and a session rmcp ended is found gone.
#[derive(Default)]
struct Sessions {
    open: RwLock<HashMap<Box<str>, Arc<Session>>>,
    /// How many were kept after the last sweep of ended ones.
    swept: AtomicUsize,
}

impl Sessions {
    /// Session `id` and its server, while both last.
    fn get(&self, id: &[u8]) -> Option<(Arc<Session>, McpServer)> {
        let id = std::str::from_utf8(id).ok()?;
        let open = self.open.read().unwrap_or_else(PoisonError::into_inner);
        let session = open.get(id)?;
        Some((session.clone(), session.server.upgrade()?))
    }

    fn open(&self, id: &str, server: WeakServer) {
        let mut open = self.open.write().unwrap_or_else(PoisonError::into_inner);
        // Sessions rmcp ended without a DELETE (idle) are swept as the map doubles.
        if open.len() >= 2 * self.swept.load(Ordering::Relaxed).max(16) {
            open.retain(|_, session| session.server.is_alive());
            self.swept.store(open.len(), Ordering::Relaxed);
        }
        open.insert(
            id.into(),
            Arc::new(Session {
                id: id.into(),
                server,
                touched: AtomicU64::new(0),
                since: Instant::now(),
                calls: Mutex::default(),
            }),
        );
    }

    fn close(&self, id: &str) {
        self.open
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

/// A session the direct path answers calls of.
pub(in crate::mcp) struct Session {
    id: Arc<str>,
    server: WeakServer,
    /// When rmcp last heard of the session, in milliseconds from `since`.
    touched: AtomicU64,
    since: Instant,
    /// The calls in flight, by their id's JSON text, for `notifications/cancelled`.
    calls: Mutex<HashMap<String, CancellationToken>>,
}

impl Session {
    /// Keeps rmcp's session from idling out while its calls come here: rmcp ends a
    /// session `idle` after the last message it saw, so it is sent a message that does
    /// nothing (closing a request stream that does not exist) once an eighth of `idle` has
    /// passed since the last, which leaves the session at least seven eighths of `idle`
    /// after its last call.
    pub(in crate::mcp) async fn keep_alive(&self, manager: &LocalSessionManager, idle: Duration) {
        let now = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
        let every = u64::try_from(idle.as_millis() / 8).unwrap_or(u64::MAX);
        let touched = self.touched.load(Ordering::Relaxed);
        if now.saturating_sub(touched) < every
            || self
                .touched
                .compare_exchange(touched, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let handle = manager.sessions.read().await.get(&self.id).cloned();
        if let Some(handle) = handle {
            // rmcp numbers its request streams from zero; this one never exists. Boxed: a
            // rare step of every session call, whose future would otherwise carry it.
            let _ = Box::pin(handle.close_request_wise_channel(u64::MAX)).await;
        }
    }

    fn cancel(&self, id: &Value) {
        let calls = self.calls.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(token) = calls.get(&id.to_string()) {
            token.cancel();
        }
    }
}

/// A call in flight on a session, cancellable until it ends.
struct InFlight {
    session: Arc<Session>,
    id: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.session
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
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

/// The value of a header sent at most once: `Some(None)` when absent, `None` when
/// repeated.
fn optional<'h>(headers: &'h HeaderMap, name: &str) -> Option<Option<&'h [u8]>> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Some(None);
    };
    values.next().is_none().then(|| Some(first.as_bytes()))
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

/// Answers `taken` on this task on `server` (a session's call, on its session's server):
/// `application/json`, or `text/event-stream` with the notifications the call sent its
/// client before the answer; a call with a progress token that does not end when first
/// polled, as a stream that runs the rest of it.
pub(in crate::mcp) async fn answer(
    server: &McpServer,
    taken: Taken<'_>,
    principal: Option<Principal>,
    parts: &Parts,
) -> Response<Body> {
    let Taken { call, session } = taken;
    let CallRequest { id, params, .. } = call;
    let CallParams {
        name,
        arguments,
        meta,
        input_responses,
        request_state,
    } = params;
    let origin = if crate::telemetry::enabled() {
        crate::mcp::server::caller::origin_of_parts(parts)
    } else {
        crate::telemetry::Origin::default()
    };
    let request_id = match &id {
        Value::String(id) => id.clone(),
        other => other.to_string(),
    };
    let stateless = session.is_none();
    let cancel = CancellationToken::new();
    let (this, in_flight) = match session {
        Some((session, server)) => {
            let key = id.to_string();
            session
                .calls
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(key.clone(), cancel.clone());
            let in_flight = InFlight { session, id: key };
            (server.seen_by(principal.as_ref()), Some(in_flight))
        }
        None => (server.seen_by(principal.as_ref()), None),
    };
    let declared = meta
        .as_ref()
        .map(|meta| meta.inline.declared)
        .unwrap_or_default();
    let meta = meta.map(|meta| meta.read);
    let asked_progress = meta
        .as_ref()
        .is_some_and(|meta| meta.contains_key(PROGRESS_TOKEN));
    let (progress_to, progress) = match asked_progress {
        true => {
            let (to, from) = tokio::sync::mpsc::unbounded_channel();
            (Some(to), Some(from))
        }
        false => (None, None),
    };
    let ended = async move {
        let _in_flight = in_flight;
        let call = ToolCall {
            name: &name,
            arguments: Value::Object(arguments.unwrap_or_default()),
            meta: meta.as_ref().map(|meta| meta as &JsonObject),
            cancel,
            peer: Outbound::Held(progress_to.as_ref()),
            legacy: !stateless,
            principal,
            request_id: Some(request_id),
            origin,
            input: Input {
                declared,
                responses: input_responses.as_ref(),
                state: request_state.as_deref(),
            },
        };
        // On the heap: the call path's future is large, and every future above it (this
        // one, the front's, hyper's) would otherwise hold it and be copied whole as each
        // is built and moved into place.
        let called = AssertUnwindSafe(Box::pin(this.run_tool_call(call)))
            .catch_unwind()
            .await;
        Ended::of(called, &id, &name, stateless)
    };
    let Some(mut progress) = progress else {
        return ended.await.response(Vec::new());
    };
    let mut ended = Box::pin(ended);
    // Polled once here: a call that ends at once is answered whole.
    let first = std::future::poll_fn(|cx| Poll::Ready(ended.as_mut().poll(cx))).await;
    match first {
        Poll::Ready(ended) => {
            let mut reported = Vec::new();
            while let Ok(params) = progress.try_recv() {
                reported.extend_from_slice(&progress_event(&params));
            }
            ended.response(reported)
        }
        Poll::Pending => {
            let body = Streamed {
                call: Some(Mutex::new(ended)),
                progress,
                ended: None,
            };
            let mut response = Response::new(body.boxed());
            let headers = response.headers_mut();
            headers.insert(
                hyper::header::CONTENT_TYPE,
                HeaderValue::from_static("text/event-stream"),
            );
            headers.insert(
                hyper::header::CACHE_CONTROL,
                HeaderValue::from_static("no-cache"),
            );
            response
        }
    }
}

/// What an ended call sends: the SSE events of its held notifications (log messages, then
/// a changed listing), and its answer as JSON.
struct Ended {
    notifications: Vec<u8>,
    answer: Vec<u8>,
    /// The HTTP status of an answer that is a JSON-RPC error, as rmcp gives it on the
    /// stateless revision (-32021: 400).
    status: hyper::StatusCode,
}

impl Ended {
    /// The call `id` of tool `name` ended as `called` (`Err`: it panicked).
    fn of(called: std::thread::Result<Called>, id: &Value, name: &str, stateless: bool) -> Ended {
        let called = match called {
            Ok(called) => called,
            Err(_) => {
                tracing::error!(tool = %name, "a tools/call panicked outside its handler");
                let id = crate::mcp::wire::malformed::AnswerId::from(id.clone());
                let mut answer =
                    message::error_line(&id, ErrorCode::INTERNAL_ERROR, CALL_PANICKED, None);
                answer.pop();
                return Ended {
                    notifications: Vec::new(),
                    answer,
                    status: hyper::StatusCode::OK,
                };
            }
        };
        let mut notifications = Vec::new();
        for params in called.held {
            let notification = serde_json::json!({
                "jsonrpc": "2.0", "method": "notifications/message", "params": params
            });
            notifications.extend_from_slice(b"data: ");
            serde_json::to_writer(&mut notifications, &notification)
                .expect("a notification serialises");
            notifications.extend_from_slice(b"\n\n");
        }
        if called.listing_changed {
            notifications.extend_from_slice(
                b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n",
            );
        }
        let status = match &called.answer {
            Answer::Protocol(error)
                if stateless && error.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                hyper::StatusCode::BAD_REQUEST
            }
            _ => hyper::StatusCode::OK,
        };
        Ended {
            notifications,
            answer: message::response_json(id, called.answer, stateless),
            status,
        }
    }

    /// The rest of the SSE stream: the notifications, then the answer.
    fn events(self) -> Vec<u8> {
        let mut events = self.notifications;
        events.reserve(self.answer.len() + 8);
        events.extend_from_slice(b"data: ");
        events.extend_from_slice(&self.answer);
        events.extend_from_slice(b"\n\n");
        events
    }

    /// The whole response, after the `reported` progress events: JSON when there is
    /// nothing to send before the answer, else SSE.
    fn response(self, mut reported: Vec<u8>) -> Response<Body> {
        if reported.is_empty() && self.notifications.is_empty() {
            let mut response = with_type(self.answer, "application/json");
            *response.status_mut() = self.status;
            return response;
        }
        reported.extend_from_slice(&self.events());
        with_type(reported, "text/event-stream")
    }
}

/// One `notifications/progress` as an SSE event.
fn progress_event(params: &ProgressNotificationParam) -> Vec<u8> {
    let notification = serde_json::json!({
        "jsonrpc": "2.0", "method": "notifications/progress", "params": params
    });
    let mut event = b"data: ".to_vec();
    serde_json::to_writer(&mut event, &notification).expect("a notification serialises");
    event.extend_from_slice(b"\n\n");
    event
}

/// The body of a call answered as it runs: each progress notification as it is reported,
/// then, once the call has ended, the ones still queued and the rest of the answer. Polling
/// the body runs the call; dropping it (the client gone) ends the call.
struct Streamed {
    /// In a mutex only to make the body `Sync`, as hyper's boxed bodies are; polling holds
    /// `&mut self` and never locks it.
    call: Option<Mutex<Pin<Box<dyn Future<Output = Ended> + Send>>>>,
    progress: UnboundedReceiver<ProgressNotificationParam>,
    ended: Option<Ended>,
}

impl hyper::body::Body for Streamed {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        if let Some(call) = &mut this.call {
            let call = call.get_mut().unwrap_or_else(PoisonError::into_inner);
            if let Poll::Ready(Some(params)) = this.progress.poll_recv(cx) {
                return Poll::Ready(Some(Ok(Frame::data(progress_event(&params).into()))));
            }
            match call.as_mut().poll(cx) {
                Poll::Ready(ended) => {
                    this.call = None;
                    this.ended = Some(ended);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
        if let Ok(params) = this.progress.try_recv() {
            return Poll::Ready(Some(Ok(Frame::data(progress_event(&params).into()))));
        }
        Poll::Ready(
            this.ended
                .take()
                .map(|ended| Ok(Frame::data(ended.events().into()))),
        )
    }
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
