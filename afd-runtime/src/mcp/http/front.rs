//! Streamable HTTP: bound to 127.0.0.1 by default, `Host` and `Origin` validated, a
//! static bearer token or an OAuth 2.1 resource server (feature `oauth`: every request's
//! token checked, its caller shown only what its scopes cover, its sessions bound to its
//! subject, a direct call beyond its scopes refused 403), and a bound on open sessions, in
//! front of rmcp's streamable HTTP service; a plain `tools/call` (stateless, or on a session
//! opened here) is answered on its connection by the direct path (`http_direct`).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::direct::{self, Direct};
use super::ops::{self, Body, SessionClock};
use crate::audit::{Audit, AuditEvent, Decision};
use crate::auth::Principal;
use crate::mcp::server::caller::{ClientAddress, SESSION_HEADER};
use crate::mcp::server::state::McpServer;
use crate::mcp::wire::malformed::{self, Malformed, Refused};
use crate::mcp::wire::message;

/// The largest request body the endpoint reads (rmcp's own default, which it is given too).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The JSON-RPC error code of an `initialize` refused because every session is taken (in
/// the range the spec leaves to servers).
const SESSIONS_FULL: rmcp::model::ErrorCode = rmcp::model::ErrorCode(-32000);

/// How long a connection may take to finish the answer it is writing once the endpoint
/// stops.
const CLOSE_GRACE: Duration = Duration::from_secs(1);

/// How often sessions the manager ended while idle are looked for, for the metrics.
const SESSION_SWEEP: Duration = Duration::from_secs(10);

/// rmcp's streamable HTTP service over the handler `S`.
type HttpService<S> = StreamableHttpService<S, LocalSessionManager>;

/// How the HTTP endpoint is served.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    addr: SocketAddr,
    path: String,
    allowed_origins: Vec<String>,
    allowed_hosts: Option<Vec<String>>,
    bearer_token: Option<String>,
    sessions: bool,
    max_sessions: usize,
    session_idle_timeout: Duration,
    body_timeout: Duration,
    #[cfg(feature = "oauth")]
    oauth: Option<crate::mcp::oauth::OAuth>,
}

impl HttpOptions {
    /// Serve on `addr` (use `127.0.0.1:<port>` unless the server must be reachable from
    /// other machines), at `/mcp`.
    pub fn new(addr: SocketAddr) -> Self {
        HttpOptions {
            addr,
            path: "/mcp".to_owned(),
            allowed_origins: vec![
                "http://localhost:*".to_owned(),
                "http://127.0.0.1:*".to_owned(),
            ],
            allowed_hosts: None,
            bearer_token: None,
            sessions: true,
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(300),
            body_timeout: Duration::from_secs(30),
            #[cfg(feature = "oauth")]
            oauth: None,
        }
    }

    /// Makes the endpoint an OAuth 2.1 resource server (feature `oauth`): every request
    /// needs a bearer token from `oauth`'s issuer for its resource; a caller sees and may
    /// call only the commands its token's scopes cover; its sessions are bound to its
    /// subject. The protected resource metadata is served at
    /// `/.well-known/oauth-protected-resource` and at that path followed by the endpoint's.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn oauth(mut self, oauth: crate::mcp::oauth::OAuth) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// The endpoint path (default `/mcp`).
    #[must_use]
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Browser origins allowed to call the server (default: localhost and 127.0.0.1 on any
    /// port). Requests with any other `Origin` are refused with 403; requests without one
    /// (non-browser clients) pass.
    #[must_use]
    pub fn allowed_origins<I, S>(mut self, origins: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Hostnames accepted in the `Host` header (default: loopback names only, against DNS
    /// rebinding). Set your public names when serving beyond this machine.
    #[must_use]
    pub fn allowed_hosts<I, S>(mut self, hosts: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.allowed_hosts = Some(hosts.into_iter().map(Into::into).collect());
        self
    }

    /// Requires `Authorization: Bearer <token>` on every request: one shared secret, for
    /// local use. On a network, use [`oauth`](HttpOptions::oauth).
    #[must_use]
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer_token = Some(token.into());
        self
    }

    /// How long a request body may take to arrive once its headers have (default 30 s);
    /// a client that stalls longer is answered 408 and its connection closed.
    #[must_use]
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// Keep sessions for clients that negotiate the 2025-11-25 protocol (default on);
    /// 2026-07-28 requests are always stateless.
    #[must_use]
    pub fn sessions(mut self, on: bool) -> Self {
        self.sessions = on;
        self
    }

    /// How many sessions may be open at once (default 1024). An `initialize` beyond it is
    /// answered 503 with a JSON-RPC error that names the limit, until a session is closed
    /// (HTTP `DELETE`) or expires.
    #[must_use]
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max;
        self
    }

    /// How long a session may stay idle before the server closes it (default 5 minutes);
    /// a request on it afterwards is answered 404, and the client starts a new session.
    /// After a session's last call answered on the connection (most `tools/call`s), it
    /// stays open at least seven eighths of this.
    #[must_use]
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }
}

/// A running HTTP endpoint.
#[derive(Debug)]
pub struct HttpHandle {
    local_addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl HttpHandle {
    /// The address the server listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, `http://<addr><path>`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Stops accepting connections and ends open sessions.
    pub async fn shutdown(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }

    /// Waits until the server stops.
    pub async fn wait(self) {
        let _ = self.task.await;
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

/// A JSON-RPC error response with `status`.
fn json_error(status: StatusCode, error: &Malformed) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(error.to_line())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}

/// Marks a response as the connection's last (its request body is left unread).
fn closing(mut response: Response<Body>) -> Response<Body> {
    response.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    response
}

/// 413 for a body over [`MAX_BODY_BYTES`].
fn too_large(declared: Option<u64>) -> Response<Body> {
    let size = declared.map_or_else(String::new, |bytes| format!(" ({bytes} bytes)"));
    let data = match declared {
        Some(bytes) => serde_json::json!({"limitBytes": MAX_BODY_BYTES, "bodyBytes": bytes}),
        None => serde_json::json!({"limitBytes": MAX_BODY_BYTES}),
    };
    let error = Malformed {
        id: malformed::AnswerId::null(),
        code: rmcp::model::ErrorCode::INVALID_REQUEST,
        message: format!(
            "Payload too large: the request body{size} is over the limit of {MAX_BODY_BYTES} \
             bytes; send smaller arguments, or split the work into several calls"
        ),
        data: Some(data),
    };
    closing(json_error(StatusCode::PAYLOAD_TOO_LARGE, &error))
}

/// Whether the request says its body is JSON (what rmcp requires of a POST; anything else
/// it answers with 415 before reading the body).
fn json_content(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|header| header.to_str().ok())
        .is_some_and(|header| {
            header
                .split_once(';')
                .map_or(header, |(essence, _)| essence)
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

/// The bound on open sessions: counts the session manager's sessions (rmcp removes one when
/// it is closed or its idle timeout ends it) and lets one `initialize` at a time check the
/// count and open its session, so the bound holds under a flood of them.
struct SessionGate {
    manager: Arc<LocalSessionManager>,
    max: usize,
    idle_timeout: Duration,
    opening: tokio::sync::Mutex<()>,
}

/// The parts of a message the gate reads.
#[derive(serde::Deserialize)]
struct MethodOnly {
    #[serde(default)]
    method: Option<String>,
}

impl SessionGate {
    /// Whether `parts` and `body` open a session: an `initialize` request without a
    /// session header (it always selects the session lifecycle).
    fn opens_session(parts: &hyper::http::request::Parts, body: &[u8]) -> bool {
        !parts.headers.contains_key(SESSION_HEADER)
            && serde_json::from_slice::<MethodOnly>(body)
                .is_ok_and(|message| message.method.as_deref() == Some("initialize"))
    }

    /// Whether `id` (a session header) names an open session.
    async fn knows(&self, id: &hyper::header::HeaderValue) -> bool {
        let Ok(id) = id.to_str() else { return false };
        self.manager.sessions.read().await.contains_key(id)
    }

    /// 503 for an `initialize` that finds every session taken.
    fn full(&self, open: usize, body: &[u8]) -> Response<Body> {
        let idle = self.idle_timeout.as_secs();
        let error = Malformed {
            id: malformed::readable_id(body.trim_ascii()),
            code: SESSIONS_FULL,
            message: format!(
                "Server busy: {open} sessions are open, the limit is {}; close a session you no \
                 longer use (HTTP DELETE with its Mcp-Session-Id), or retry later: idle \
                 sessions close after {idle} s",
                self.max
            ),
            data: Some(serde_json::json!({
                "maxSessions": self.max,
                "openSessions": open,
                "idleTimeoutSecs": idle,
            })),
        };
        let mut response = json_error(StatusCode::SERVICE_UNAVAILABLE, &error);
        response.headers_mut().insert(
            hyper::header::RETRY_AFTER,
            hyper::header::HeaderValue::from(idle.clamp(1, 60)),
        );
        response
    }
}

/// A JSON POST: a request under a session this server does not know (ended, expired, or
/// never opened here) is answered 404 as rmcp answers it, whatever its body, so that the
/// client starts a new session as MCP says; a body over the limit is refused from its
/// `Content-Length` before it is read; the rest is read (up to the limit); a message whose params do not fit its method
/// (or whose id is not a string or number) is answered 400 with the JSON-RPC error and its
/// id; the rest is handed to rmcp. rmcp answers a body it
/// cannot read as a message with 415 and a plain-text serde message; that becomes 400 with
/// the JSON-RPC error that says what is wrong (parse error, nesting over the limit,
/// invalid request) and the request's id where it can be read.
async fn post<S: ServerHandler + Send + 'static>(
    request: Request<Incoming>,
    front: &Front<S>,
    principal: Option<&Principal>,
) -> Response<Body> {
    let body_timeout = front.body_timeout;
    let gate = front.gate.as_deref();
    if let Some(gate) = gate
        && let Some(id) = request.headers().get(SESSION_HEADER)
        && !gate.knows(id).await
    {
        return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
    }
    let declared = request
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<u64>().ok());
    if declared.is_some_and(|bytes| bytes > MAX_BODY_BYTES as u64) {
        return too_large(declared);
    }
    let (parts, body) = request.into_parts();
    // A body that came with the head is read without arming the timer.
    let mut collect = Limited::new(body, MAX_BODY_BYTES).collect();
    let read = match futures_util::FutureExt::now_or_never(&mut collect) {
        Some(read) => Ok(read),
        None => tokio::time::timeout(body_timeout, collect).await,
    };
    let Ok(read) = read else {
        let error = Malformed {
            id: malformed::AnswerId::null(),
            code: rmcp::model::ErrorCode::INVALID_REQUEST,
            message: format!(
                "Request timeout: the request body did not arrive within {} ms; send the \
                 whole body at once",
                body_timeout.as_millis()
            ),
            data: None,
        };
        return closing(json_error(StatusCode::REQUEST_TIMEOUT, &error));
    };
    let bytes = match read {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => return too_large(None),
        Err(error) => {
            tracing::debug!(%error, "could not read a request body");
            return plain(StatusCode::BAD_REQUEST, "could not read the request body");
        }
    };
    // A call that needs nothing of rmcp's transport: answered here, its body parsed once (a
    // call the direct path takes is one rmcp reads as a `tools/call`, so the checks below
    // for messages rmcp would misread have nothing to say of it).
    if let Some(direct) = &front.direct
        && let Some(taken) = direct.take(&front.server, &parts, &bytes)
    {
        let call = &taken.call;
        let Some(work) = front.server.drain().enter() else {
            return shutting_down(malformed::AnswerId::from(call.id.clone()));
        };
        if let Some(principal) = principal
            && let Some(required) = front
                .server
                .missing_scopes(principal.scopes(), &call.params.name)
        {
            let id = malformed::AnswerId::from(call.id.clone());
            return front.insufficient_scope(principal, &call.params.name, id, &required);
        }
        if let (Some((session, _)), Some(gate)) = (&taken.session, gate) {
            session.keep_alive(&gate.manager, gate.idle_timeout).await;
        }
        let response = direct::answer(&front.server, taken, principal.cloned(), &parts).await;
        return response.map(|body| ops::counted(body, work));
    }
    // A session's `notifications/cancelled` may name a call of the direct path.
    if let Some(direct) = &front.direct {
        direct.cancelled(&parts, &bytes);
    }
    // A method the 2026-07-28 revision removed, asked on that revision: unknown there,
    // whatever its params say.
    if parts
        .headers
        .get("mcp-protocol-version")
        .is_some_and(|version| version.as_bytes() == message::INLINE_VERSION.as_bytes())
        && let Some((id, method)) = message::removed_method(&bytes)
    {
        let error = Malformed {
            id: malformed::AnswerId::from(id),
            code: rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            message: format!(
                "Method not found: `{method}` is not part of protocol version {}",
                message::INLINE_VERSION
            ),
            data: None,
        };
        return json_error(StatusCode::NOT_FOUND, &error);
    }
    // A message rmcp would take for another method, or answer without its id.
    if let Some(refused) = malformed::refused(&bytes) {
        let error = match refused {
            Refused::Request(error) => error,
            Refused::Notification(why) => Malformed {
                id: malformed::AnswerId::null(),
                code: rmcp::model::ErrorCode::INVALID_PARAMS,
                message: format!("Invalid notification: {why}"),
                data: None,
            },
        };
        return json_error(StatusCode::BAD_REQUEST, &error);
    }
    // Counted in flight until the answer is sent. Once the drain has begun a request is
    // refused, retryable; a notification or a response (to the server's own request of a
    // call in flight) still passes.
    let work = match front.server.drain().enter() {
        Some(work) => work,
        None if malformed::is_request(&bytes) => {
            return shutting_down(malformed::readable_id(bytes.trim_ascii()));
        }
        None => front.server.drain().enter_admitted(),
    };
    // A direct call of a command beyond the caller's scopes: 403 naming the scopes, so
    // that the client can ask for them (step-up authorization).
    if let Some(principal) = principal
        && let Some((name, id)) = tools_call(&bytes)
        && let Some(required) = front.server.missing_scopes(principal.scopes(), &name)
    {
        return front.insufficient_scope(principal, &name, id, &required);
    }
    let opening = match gate {
        Some(gate) if SessionGate::opens_session(&parts, &bytes) => {
            let opening = gate.opening.lock().await;
            let open = gate.manager.sessions.read().await.len();
            if open >= gate.max {
                return gate.full(open, &bytes);
            }
            Some(opening)
        }
        _ => None,
    };
    let request = Request::from_parts(parts, Full::new(bytes.clone()));
    // Cloned only here: a clone of rmcp's service copies its configuration (the allowed
    // hosts and origins) and registers with its cancellation token.
    let mut service = front.service.clone();
    let answered = async {
        let Ok(response) = service.call(request).await;
        response
    };
    let response = match (&opening, &front.direct) {
        // The session's server is kept for the direct path.
        (Some(_), Some(direct)) => direct.opening(&bytes, answered).await,
        _ => answered.await,
    };
    // The session is in the manager once rmcp has answered its `initialize`.
    drop(opening);
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response.map(|body| ops::counted(body, work));
    }
    let error = malformed::diagnose(&bytes).unwrap_or_else(|| {
        if bytes.trim_ascii().is_empty() {
            return Malformed {
                id: malformed::AnswerId::null(),
                code: rmcp::model::ErrorCode::PARSE_ERROR,
                message: "Parse error: the request body is empty; send one JSON-RPC message"
                    .to_owned(),
                data: None,
            };
        }
        // JSON whose members have the right types, yet not a message rmcp reads (a
        // request without a method, say).
        Malformed {
            id: malformed::readable_id(bytes.trim_ascii()),
            code: rmcp::model::ErrorCode::INVALID_REQUEST,
            message: "Invalid request: not a JSON-RPC request, notification or response \
                      the server reads"
                .to_owned(),
            data: None,
        }
    });
    json_error(StatusCode::BAD_REQUEST, &error)
}

/// 503 for a request that arrives once the drain has begun: retryable, and the
/// connection closed so that the client's next one goes elsewhere.
fn shutting_down(id: malformed::AnswerId) -> Response<Body> {
    let error = malformed::shutting_down(id);
    let mut response = closing(json_error(StatusCode::SERVICE_UNAVAILABLE, &error));
    response.headers_mut().insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static("1"),
    );
    response
}

fn authorised(request: &Request<Incoming>, token: &str) -> bool {
    let Some(value) = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
    else {
        return false;
    };
    let Some(given) = value.strip_prefix("Bearer ") else {
        return false;
    };
    // Compare in time independent of where the first difference is.
    given.len() == token.len()
        && given
            .bytes()
            .zip(token.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// The parts of a `tools/call` request the front reads.
#[derive(serde::Deserialize)]
struct CallProbe<'a> {
    #[serde(default, borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    params: Option<CallProbeParams>,
}

#[derive(serde::Deserialize)]
struct CallProbeParams {
    #[serde(default)]
    name: Option<String>,
}

/// The tool name and id of a `tools/call` request.
fn tools_call(body: &[u8]) -> Option<(String, malformed::AnswerId)> {
    let probe: CallProbe<'_> = serde_json::from_slice(body).ok()?;
    if probe.method.as_deref() != Some("tools/call") {
        return None;
    }
    let name = probe.params?.name?;
    let id = probe
        .id
        .map_or_else(malformed::AnswerId::null, malformed::AnswerId::written);
    Some((name, id))
}

/// What every request of one endpoint shares: rmcp's service, the checks in front of it,
/// and the server (to know what a caller may call).
struct Front<S: ServerHandler + Send + 'static> {
    service: HttpService<S>,
    path: Arc<str>,
    token: Option<Arc<str>>,
    body_timeout: Duration,
    gate: Option<Arc<SessionGate>>,
    server: McpServer,
    audit: Arc<Audit>,
    /// The subject each session was opened by (sessions opened with a token).
    owners: Mutex<HashMap<String, Arc<str>>>,
    /// When each session opened, for the session metrics.
    clock: Arc<SessionClock>,
    /// The direct path for stateless calls, where the handler is the server itself.
    direct: Option<Direct>,
    #[cfg(feature = "oauth")]
    oauth: Option<OAuthFront>,
}

/// The resource server's part of the front.
#[cfg(feature = "oauth")]
struct OAuthFront {
    verifier: Arc<crate::mcp::oauth::TokenVerifier>,
    /// The scopes a client is told to ask for.
    scopes: Vec<String>,
    /// The metadata document and the two paths it is served at.
    metadata: Bytes,
    metadata_paths: [String; 2],
}

impl<S: ServerHandler + Send + 'static> Front<S> {
    /// Answers one request: `/healthz` and `/readyz`, else [`serve`](Front::serve).
    async fn handle(&self, request: Request<Incoming>) -> Response<Body> {
        let started = Instant::now();
        if let Some(response) = ops::probe(
            request.method(),
            request.uri().path(),
            self.server.readiness(),
        )
        .await
        {
            return response;
        }
        let mut response = self.serve(request, started).await;
        if self.server.drain().is_draining() {
            // Clients open their next connection elsewhere.
            response.headers_mut().insert(
                hyper::header::CONNECTION,
                hyper::header::HeaderValue::from_static("close"),
            );
        }
        response
    }

    /// Answers a request for the endpoint (or the metadata): the path, the token, the
    /// session's owner, then the POST checks or rmcp.
    async fn serve(&self, request: Request<Incoming>, started: Instant) -> Response<Body> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth
            && oauth
                .metadata_paths
                .iter()
                .any(|path| path == request.uri().path())
        {
            return metadata_response(request.method(), &oauth.metadata);
        }
        if request.uri().path() != &*self.path {
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        // A CORS preflight never carries credentials: rmcp answers it.
        let preflight = request.method() == Method::OPTIONS;
        if let Some(token) = &self.token
            && !preflight
            && !authorised(&request, token)
        {
            let mut response = plain(StatusCode::UNAUTHORIZED, "a bearer token is required");
            response.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                hyper::header::HeaderValue::from_static("Bearer"),
            );
            self.refused(
                Decision::Unauthenticated,
                401,
                None,
                "no valid token",
                started,
            );
            return response;
        }
        if preflight {
            let Ok(response) = self.service.clone().call(request).await;
            return response;
        }
        let (request, principal) = match self.authenticate(request, started).await {
            Ok(checked) => checked,
            Err(refusal) => return refusal,
        };
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|id| id.to_str().ok())
            .map(str::to_owned);
        // A session opened under another subject is answered as one that does not exist.
        if let (Some(principal), Some(id)) = (&principal, &session)
            && self
                .owners()
                .get(id)
                .is_some_and(|owner| **owner != *principal.subject())
        {
            return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
        }
        let deleting = request.method() == Method::DELETE;
        let drain = self.server.drain();
        let mut response = if request.method() == Method::POST && json_content(&request) {
            post(request, self, principal.as_ref()).await
        } else if request.method() == Method::GET {
            // A stream of server messages: none while draining, and closed when the drain
            // begins (it carries no answer to wait for).
            if drain.is_draining() {
                return shutting_down(malformed::AnswerId::null());
            }
            let Ok(response) = self.service.clone().call(request).await;
            let closed = drain.began_owned();
            response.map(|body| ops::closing(body, closed))
        } else {
            let Ok(response) = self.service.clone().call(request).await;
            response
        };
        // A session closed: 204, which clients expect (rmcp says 202, which the official
        // Python client reports as a failed termination).
        if deleting && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
            *response.body_mut() = Full::new(Bytes::new()).boxed();
        }
        if let Some(principal) = &principal {
            // Boxed, as the other steps few requests take: a future holds the state of every
            // step it may await, and hyper moves each request's future into place whole.
            Box::pin(self.bind_session(principal, session.as_deref(), deleting, &response)).await;
        }
        match (&session, deleting) {
            (Some(id), true) if response.status().is_success() => {
                if let Some(direct) = &self.direct {
                    direct.closed(id);
                }
                self.clock.close(id, None);
            }
            (None, false) => {
                if let Some(opened) = response
                    .headers()
                    .get(SESSION_HEADER)
                    .and_then(|id| id.to_str().ok())
                {
                    self.clock.open(opened);
                }
            }
            _ => {}
        }
        if response.status() == StatusCode::BAD_REQUEST
            || response.status() == StatusCode::PAYLOAD_TOO_LARGE
            || response.status() == StatusCode::REQUEST_TIMEOUT
        {
            self.refused(
                Decision::ProtocolError,
                response.status().as_u16(),
                principal.as_ref(),
                "the message cannot be read",
                started,
            );
        }
        response
    }

    /// The caller of `request` where OAuth is on: the principal of its checked token, also
    /// put in the request's extensions for the handler; or the refusal.
    #[cfg(feature = "oauth")]
    async fn authenticate(
        &self,
        mut request: Request<Incoming>,
        started: Instant,
    ) -> Result<(Request<Incoming>, Option<Principal>), Response<Body>> {
        let Some(oauth) = &self.oauth else {
            return Ok((request, None));
        };
        let header = request
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(hyper::header::HeaderValue::as_bytes);
        // Boxed: the check (an introspection request, perhaps) would otherwise be part of
        // every request's future, OAuth or not.
        match Box::pin(oauth.verifier.check(header)).await {
            Ok(principal) => {
                request.extensions_mut().insert(principal.clone());
                Ok((request, Some(principal)))
            }
            Err(rejection) => Err(self.rejected(oauth, &rejection, started)),
        }
    }

    /// Without OAuth, no request has a principal.
    #[cfg(not(feature = "oauth"))]
    async fn authenticate(
        &self,
        request: Request<Incoming>,
        _started: Instant,
    ) -> Result<(Request<Incoming>, Option<Principal>), Response<Body>> {
        Ok((request, None))
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<str>>> {
        self.owners
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the subject of a session an `initialize` just opened; forgets a session
    /// the client closed.
    async fn bind_session(
        &self,
        principal: &Principal,
        session: Option<&str>,
        deleting: bool,
        response: &Response<Body>,
    ) {
        if deleting {
            if let Some(id) = session
                && response.status().is_success()
            {
                self.owners().remove(id);
            }
            return;
        }
        if session.is_some() {
            return;
        }
        let Some(opened) = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|id| id.to_str().ok())
        else {
            return;
        };
        let limit = self.gate.as_ref().map_or(1024, |gate| gate.max) + 64;
        if self.owners().len() >= limit
            && let Some(gate) = &self.gate
        {
            // Forget the sessions that ended (closed or idle).
            let open: std::collections::HashSet<Arc<str>> =
                gate.manager.sessions.read().await.keys().cloned().collect();
            self.owners().retain(|id, _| open.contains(id.as_str()));
        }
        self.owners()
            .insert(opened.to_owned(), Arc::from(principal.subject()));
    }

    /// Records a refusal in the audit trail.
    fn refused(
        &self,
        decision: Decision,
        status: u16,
        principal: Option<&Principal>,
        why: &str,
        started: Instant,
    ) {
        if !self.audit.is_enabled() {
            return;
        }
        let mut event = AuditEvent::new(decision, started.elapsed());
        event.status = Some(status);
        event.error = Some(why.to_owned());
        if let Some(principal) = principal {
            event.subject = Some(principal.subject().to_owned());
            event.client_id = principal.client_id().map(str::to_owned);
        }
        self.audit.record(&event);
    }

    /// 401 (or 503) for a request whose token is missing, refused, or cannot be checked.
    #[cfg(feature = "oauth")]
    fn rejected(
        &self,
        oauth: &OAuthFront,
        rejection: &crate::mcp::oauth::TokenRejection,
        started: Instant,
    ) -> Response<Body> {
        use crate::mcp::oauth::{TokenRejection, metadata};
        let audience = &oauth.verifier.settings.audience;
        let (status, challenge, why) = match rejection {
            TokenRejection::Missing => (
                StatusCode::UNAUTHORIZED,
                metadata::challenge(audience, &oauth.scopes, None),
                "no bearer token",
            ),
            TokenRejection::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                metadata::challenge(audience, &oauth.scopes, Some(("invalid_token", why))),
                *why,
            ),
            TokenRejection::Unavailable => (
                StatusCode::SERVICE_UNAVAILABLE,
                metadata::challenge(audience, &oauth.scopes, None),
                "the token could not be checked",
            ),
        };
        let decision = if status == StatusCode::UNAUTHORIZED {
            Decision::Unauthenticated
        } else {
            Decision::Unavailable
        };
        self.refused(decision, status.as_u16(), None, why, started);
        let text = match rejection {
            TokenRejection::Missing => "Unauthorized: a bearer token is required".to_owned(),
            TokenRejection::Invalid(why) => format!("Unauthorized: {why}"),
            TokenRejection::Unavailable => {
                "Service unavailable: the token could not be checked; retry shortly".to_owned()
            }
        };
        let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
        *response.status_mut() = status;
        if let Ok(value) = hyper::header::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(hyper::header::WWW_AUTHENTICATE, value);
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response.headers_mut().insert(
                hyper::header::RETRY_AFTER,
                hyper::header::HeaderValue::from_static("5"),
            );
        }
        response
    }

    /// 403 `insufficient_scope` for a direct call of `tool`, naming every scope it needs.
    fn insufficient_scope(
        &self,
        principal: &Principal,
        tool: &str,
        id: malformed::AnswerId,
        required: &[String],
    ) -> Response<Body> {
        let started = Instant::now();
        let scope = required.join(" ");
        let error = Malformed {
            id,
            code: INSUFFICIENT_SCOPE,
            message: format!(
                "Forbidden: '{tool}' needs the scope{} {}, which the token does not grant",
                if required.len() == 1 { "" } else { "s" },
                required.join(", ")
            ),
            data: Some(serde_json::json!({
                "code": crate::codes::INSUFFICIENT_SCOPE,
                "requiredScopes": required,
                "missingScopes": principal.scopes().missing(required),
                "suggestion": format!(
                    "Ask the authorization server for a token with scope \"{scope}\", or call a command your scopes cover."
                ),
            })),
        };
        #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
        let mut response = json_error(StatusCode::FORBIDDEN, &error);
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let challenge = crate::mcp::oauth::metadata::challenge(
                &oauth.verifier.settings.audience,
                required,
                Some((
                    "insufficient_scope",
                    "the token lacks a scope this tool needs",
                )),
            );
            if let Ok(value) = hyper::header::HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(hyper::header::WWW_AUTHENTICATE, value);
            }
        }
        if self.audit.is_enabled() {
            let mut event = AuditEvent::new(Decision::Forbidden, started.elapsed());
            event.status = Some(403);
            event.subject = Some(principal.subject().to_owned());
            event.client_id = principal.client_id().map(str::to_owned);
            event.method = Some("tools/call".to_owned());
            event.tool = Some(tool.to_owned());
            event.command = Some(tool.to_owned());
            event.error = Some(crate::codes::INSUFFICIENT_SCOPE.to_owned());
            event.request_id = Some(error.id.to_string());
            self.audit.record(&event);
        }
        response
    }
}

/// The protected resource metadata, to anyone (browsers included: it is public).
#[cfg(feature = "oauth")]
fn metadata_response(method: &Method, document: &Bytes) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD && method != Method::OPTIONS {
        return plain(StatusCode::METHOD_NOT_ALLOWED, "use GET");
    }
    let mut response = Response::new(Full::new(document.clone()).boxed());
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        hyper::header::ACCESS_CONTROL_ALLOW_ORIGIN,
        hyper::header::HeaderValue::from_static("*"),
    );
    response
}

/// The resource server's part of the front: the verifier started, the scopes supported
/// (given, else every scope an exposed command needs) and the metadata document.
#[cfg(feature = "oauth")]
fn oauth_front(server: &McpServer, oauth: crate::mcp::oauth::OAuth, path: &str) -> OAuthFront {
    use crate::mcp::oauth::{TokenVerifier, metadata};
    let scopes = oauth.scopes_supported.clone().unwrap_or_else(|| {
        let dispatcher = server.dispatcher();
        let mut scopes: Vec<String> = dispatcher
            .exposed_entries()
            .flat_map(|entry| dispatcher.required_scopes(entry.def()))
            .map(str::to_owned)
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    });
    let document = metadata::document(&oauth, &scopes, &server.inner.name);
    let metadata = Bytes::from(serde_json::to_vec(&document).unwrap_or_default());
    let metadata_paths = [
        metadata::WELL_KNOWN.to_owned(),
        format!("{}{}", metadata::WELL_KNOWN, path.trim_end_matches('/')),
    ];
    OAuthFront {
        verifier: TokenVerifier::start(oauth),
        scopes,
        metadata,
        metadata_paths,
    }
}

/// The JSON-RPC error code of a call refused for its scopes (in the range the spec leaves
/// to servers).
const INSUFFICIENT_SCOPE: rmcp::model::ErrorCode = rmcp::model::ErrorCode(-32003);

impl McpServer {
    /// Binds the streamable HTTP endpoint and serves it on a background task.
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn bind_http(self, options: HttpOptions) -> std::io::Result<HttpHandle> {
        let server = self.for_http();
        let connections = server.clone();
        // A clone per HTTP session: each has its own transport session. The front keeps a
        // weak handle on it, for the direct path's calls of the session.
        let connection = move || {
            let session = connections.clone();
            direct::made(&session);
            session
        };
        serve(server, connection, options, true).await
    }

    /// Binds the streamable HTTP endpoint for another handler over this server's catalog (a
    /// gateway that wraps it), made afresh for each HTTP session by `connection`, with the
    /// same checks in front: `Host` and `Origin`, the token (this server's audit trail, and
    /// the scopes its commands need), the session bound.
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn bind_http_with<S, F>(
        self,
        connection: F,
        options: HttpOptions,
    ) -> std::io::Result<HttpHandle>
    where
        S: ServerHandler + Send + 'static,
        F: Fn() -> S + Send + Sync + 'static,
    {
        // The handler is not this server's: every call goes through it.
        serve(self.for_http(), connection, options, false).await
    }
}

/// Serves `connection`'s handlers over streamable HTTP, behind the front's checks; `server`
/// says what callers may call and keeps the audit trail. With `direct`, the handlers are
/// `server`'s own and a stateless call may take the direct path.
async fn serve<S, F>(
    server: McpServer,
    connection: F,
    options: HttpOptions,
    direct: bool,
) -> std::io::Result<HttpHandle>
where
    S: ServerHandler + Send + 'static,
    F: Fn() -> S + Send + Sync + 'static,
{
    let shutdown = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_allowed_origins(options.allowed_origins.clone())
        .enforce_origin_validation()
        .with_legacy_session_mode(options.sessions)
        .with_cancellation_token(shutdown.child_token());
    if let Some(hosts) = &options.allowed_hosts {
        config = config.with_allowed_hosts(hosts.clone());
    }
    let direct = direct.then(|| Direct::new(&config.allowed_hosts));
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(options.session_idle_timeout);
    let manager = Arc::new(manager);
    let gate = options.sessions.then(|| {
        Arc::new(SessionGate {
            manager: manager.clone(),
            max: options.max_sessions,
            idle_timeout: options.session_idle_timeout,
            opening: tokio::sync::Mutex::new(()),
        })
    });
    let service = StreamableHttpService::new(move || Ok(connection()), manager.clone(), config);
    let clock = Arc::new(SessionClock::default());
    let listener = TcpListener::bind(options.addr).await?;
    let local_addr = listener.local_addr()?;
    tracing::info!(%local_addr, path = %options.path, "serving MCP over streamable HTTP");
    #[cfg(feature = "oauth")]
    let oauth = options
        .oauth
        .clone()
        .map(|oauth| oauth_front(&server, oauth, &options.path));
    let front = Arc::new(Front {
        service,
        path: Arc::from(options.path.as_str()),
        token: options.bearer_token.clone().map(Arc::<str>::from),
        body_timeout: options.body_timeout,
        gate,
        audit: server.inner.audit.clone(),
        server,
        owners: Mutex::default(),
        clock: clock.clone(),
        direct,
        #[cfg(feature = "oauth")]
        oauth,
    });
    // Sessions the manager ended while idle leave the session metrics too.
    if crate::metrics::is_installed() && options.sessions {
        let (manager, clock, stop) = (manager.clone(), clock.clone(), shutdown.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SESSION_SWEEP);
            loop {
                tokio::select! {
                    () = stop.cancelled() => break,
                    _ = every.tick() => {
                        let open: std::collections::HashSet<Arc<str>> =
                            manager.sessions.read().await.keys().cloned().collect();
                        clock.sweep(&open);
                    }
                }
            }
            clock.close_all();
        });
    }
    let stop = shutdown.clone();
    let task = tokio::spawn(async move {
        loop {
            let (stream, peer) = tokio::select! {
                () = stop.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok(accepted) => accepted,
                    Err(error) => {
                        tracing::warn!(%error, "accept failed");
                        continue;
                    }
                },
            };
            // An answer written in more than one segment must not wait for the client's
            // delayed acknowledgement (Nagle's algorithm): 40 ms a call on a kept-alive
            // connection.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "could not set TCP_NODELAY");
            }
            let front = front.clone();
            let stop = stop.clone();
            tokio::spawn(async move {
                let handler = hyper::service::service_fn(move |mut request: Request<Incoming>| {
                    let front = front.clone();
                    // Read by traces alone: without them, no allocation for it.
                    if crate::telemetry::enabled() {
                        request.extensions_mut().insert(ClientAddress(peer));
                    }
                    async move { Ok::<_, Infallible>(front.handle(request).await) }
                });
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                let connection =
                    builder.serve_connection_with_upgrades(TokioIo::new(stream), handler);
                tokio::pin!(connection);
                let result = tokio::select! {
                    result = connection.as_mut() => result,
                    () = stop.cancelled() => {
                        // An answer being written is finished; an idle connection closes.
                        connection.as_mut().graceful_shutdown();
                        match tokio::time::timeout(CLOSE_GRACE, connection).await {
                            Ok(result) => result,
                            Err(_) => Ok(()),
                        }
                    }
                };
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
            });
        }
    });
    Ok(HttpHandle {
        local_addr,
        path: options.path,
        shutdown,
        task,
    })
}

impl McpServer {
    /// Serves streamable HTTP on `addr` (at `/mcp`, origins limited to localhost) until the
    /// process ends.
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn serve_http(self, addr: SocketAddr) -> std::io::Result<()> {
        self.bind_http(HttpOptions::new(addr)).await?.wait().await;
        Ok(())
    }
}
