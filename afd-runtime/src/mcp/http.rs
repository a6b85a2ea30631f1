//! Streamable HTTP: bound to 127.0.0.1 by default, `Host` and `Origin` validated, optional
//! bearer-token auth and a bound on open sessions in front of rmcp's streamable HTTP
//! service.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::McpServer;
use super::stream::malformed::{self, Malformed, Refused};

/// The largest request body the endpoint reads (rmcp's own default, which it is given too).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The JSON-RPC error code of an `initialize` refused because every session is taken (in
/// the range the spec leaves to servers).
const SESSIONS_FULL: rmcp::model::ErrorCode = rmcp::model::ErrorCode(-32000);

/// The session header of the 2025-11-25 streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";

type McpHttpService = StreamableHttpService<McpServer, LocalSessionManager>;

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
        }
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

    /// Requires `Authorization: Bearer <token>` on every request.
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

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

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
async fn post(
    request: Request<Incoming>,
    mut service: McpHttpService,
    body_timeout: Duration,
    gate: Option<&SessionGate>,
) -> Response<Body> {
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
    let read = tokio::time::timeout(body_timeout, Limited::new(body, MAX_BODY_BYTES).collect());
    let Ok(read) = read.await else {
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
    let Ok(response) = service.call(request).await;
    // The session is in the manager once rmcp has answered its `initialize`.
    drop(opening);
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
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

impl McpServer {
    /// Binds the streamable HTTP endpoint and serves it on a background task.
    ///
    /// # Errors
    ///
    /// The address cannot be bound.
    pub async fn bind_http(self, options: HttpOptions) -> std::io::Result<HttpHandle> {
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
        let server = self.for_http();
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
        let service = StreamableHttpService::new(
            // A clone per HTTP session: each has its own transport session.
            move || Ok(server.clone()),
            manager,
            config,
        );
        let listener = TcpListener::bind(options.addr).await?;
        let local_addr = listener.local_addr()?;
        tracing::info!(%local_addr, path = %options.path, "serving MCP over streamable HTTP");
        let token = options.bearer_token.clone().map(Arc::<str>::from);
        let path: Arc<str> = Arc::from(options.path.as_str());
        let body_timeout = options.body_timeout;
        let stop = shutdown.clone();
        let task = tokio::spawn(async move {
            loop {
                let (stream, _) = tokio::select! {
                    () = stop.cancelled() => break,
                    accepted = listener.accept() => match accepted {
                        Ok(accepted) => accepted,
                        Err(error) => {
                            tracing::warn!(%error, "accept failed");
                            continue;
                        }
                    },
                };
                let service = service.clone();
                let token = token.clone();
                let path = path.clone();
                let gate = gate.clone();
                let stop = stop.clone();
                tokio::spawn(async move {
                    let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                        let mut service = service.clone();
                        let token = token.clone();
                        let path = path.clone();
                        let gate = gate.clone();
                        async move {
                            if request.uri().path() != &*path {
                                return Ok::<_, Infallible>(plain(
                                    StatusCode::NOT_FOUND,
                                    "not found",
                                ));
                            }
                            if let Some(token) = &token
                                && !authorised(&request, token)
                            {
                                let mut response =
                                    plain(StatusCode::UNAUTHORIZED, "a bearer token is required");
                                response.headers_mut().insert(
                                    hyper::header::WWW_AUTHENTICATE,
                                    hyper::header::HeaderValue::from_static("Bearer"),
                                );
                                return Ok(response);
                            }
                            if request.method() == Method::POST && json_content(&request) {
                                return Ok(
                                    post(request, service, body_timeout, gate.as_deref()).await
                                );
                            }
                            service.call(request).await
                        }
                    });
                    let builder =
                        hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                    let connection =
                        builder.serve_connection_with_upgrades(TokioIo::new(stream), handler);
                    tokio::select! {
                        result = connection => {
                            if let Err(error) = result {
                                tracing::debug!(%error, "connection ended with an error");
                            }
                        }
                        () = stop.cancelled() => {}
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
