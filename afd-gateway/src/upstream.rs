//! One upstream MCP server: started on first use (or eagerly), connected with rmcp's
//! client over stdio or streamable HTTP, watched, and restarted with backoff when it fails.
//! Every failure is a structured [`CommandError`] naming the server; none reaches further
//! than the call that met it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use afd_oauth::token::ClientAuth;
use afd_oauth::{
    Authorized, ClientCredentials, ClientCredentialsConfig, FileStore, KeptSignIn, Secret,
    TokenSource,
};
use afd_runtime::mcp::Progress;
use afd_runtime::{CommandContext, CommandError, CommandResult, Content, codes};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, RequestId, ServerNotification, ServerResult, SubscriptionFilter,
};
use rmcp::service::RunningServiceCancellationToken;
use rmcp::service::{ClientInitializeError, ClientLifecycleMode};
use rmcp::service::{NotificationContext, PeerRequestOptions, ServiceError};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransportConfig, StreamableHttpError,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ClientServiceExt as _, Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::mpsc::UnboundedSender;
use tracing::Instrument as _;

use crate::cache::ToolList;
use crate::config::{ServerConfig, Transport, UpstreamAuth};

/// `error` and the errors under it, `: `-separated, so that a refused certificate or
/// connection is named. rmcp keeps the transport's error, and the HTTP client's under it,
/// without naming them as sources: those steps are taken by hand.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut cause = next(error);
    while let Some(error) = cause {
        let more = error.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        cause = next(error);
    }
    text
}

/// The error under `error`, including those rmcp keeps without naming them as sources.
fn next<'a>(
    error: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    if let Some(ClientInitializeError::TransportError { error, .. }) = error.downcast_ref() {
        return Some(error);
    }
    match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        Some(StreamableHttpError::Client(inner)) => Some(inner),
        _ => error.source(),
    }
}

/// Whether `error` is the upstream refusing the gateway's credentials (a 401 or 403
/// challenge) or the gateway failing to get a token for it.
fn is_authorization_failure(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if afd_oauth::find_oauth_error(error).is_some()
            || matches!(
                error.downcast_ref::<StreamableHttpError<reqwest::Error>>(),
                Some(
                    StreamableHttpError::AuthRequired(_)
                        | StreamableHttpError::InsufficientScope(_)
                )
            )
        {
            return true;
        }
        cause = next(error);
    }
    false
}

/// The token source an upstream's `auth` describes, if any. A private key that can no
/// longer be read gives a source that refuses every request with that reason (the
/// configuration was checked when it was read; the file changed since).
fn token_source(config: &ServerConfig, transport: &Transport) -> Option<Arc<dyn TokenSource>> {
    let Transport::Http { url } = transport else {
        return None;
    };
    match config.auth.as_ref()? {
        UpstreamAuth::None => None,
        UpstreamAuth::SignIn {
            credentials_dir,
            client_secret,
        } => {
            let dir = credentials_dir.clone().or_else(FileStore::default_dir);
            Some(match dir {
                Some(dir) => {
                    let kept = KeptSignIn::new(url.clone(), FileStore::new(dir, url));
                    Arc::new(match client_secret {
                        Some(secret) => kept.client_secret(Secret::new(secret.clone())),
                        None => kept,
                    })
                }
                None => Arc::new(Unusable(
                    "no directory of kept sign-ins: set `auth.credentialsDir`, HOME or AFD_CREDENTIALS_DIR"
                        .to_owned(),
                )),
            })
        }
        UpstreamAuth::ClientCredentials {
            client_id,
            client_secret,
            private_key_file,
            algorithm,
            method,
            scopes,
            issuer,
            token_endpoint,
            resource,
        } => {
            let assertion_key = match private_key_file {
                Some(path) => match private_key(path, algorithm.as_deref()) {
                    Ok(key) => Some(key),
                    Err(why) => return Some(Arc::new(Unusable(why))),
                },
                None => None,
            };
            Some(Arc::new(ClientCredentials::new(
                afd_oauth::client(),
                url.clone(),
                ClientCredentialsConfig {
                    client_id: client_id.clone(),
                    client_secret: client_secret.clone().map(Secret::new),
                    assertion_key,
                    auth: method.as_deref().and_then(ClientAuth::from_name),
                    scopes: scopes.clone(),
                    issuer: issuer.clone(),
                    token_endpoint: token_endpoint.clone(),
                    resource: resource.clone(),
                },
            )))
        }
    }
}

/// The private key of `private_key_jwt` read from `path` (PEM), for `algorithm` (default
/// `RS256`).
fn private_key(
    path: &std::path::Path,
    algorithm: Option<&str>,
) -> Result<afd_oauth::token::AssertionKey, String> {
    let pem = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    afd_oauth::token::AssertionKey::from_pem(&pem, algorithm.unwrap_or("RS256"))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A token source whose configuration cannot work: every request is refused with why.
struct Unusable(String);

impl TokenSource for Unusable {
    fn token(&self) -> futures_util::future::BoxFuture<'_, Result<Secret, afd_oauth::OAuthError>> {
        Box::pin(async move { Err(afd_oauth::OAuthError::Config(self.0.clone())) })
    }

    fn renew<'a>(
        &'a self,
        _rejected: &'a Secret,
    ) -> futures_util::future::BoxFuture<'a, Result<Secret, afd_oauth::OAuthError>> {
        self.token()
    }
}

/// The handshake for an HTTP upstream: 2026-07-28 when it speaks it, else the newest
/// revision with `initialize` it speaks.
fn either_wire() -> ClientLifecycleMode {
    let mut preferred = vec![ProtocolVersion::V_2026_07_28];
    for version in ProtocolVersion::KNOWN_VERSIONS.iter().rev() {
        if !preferred.contains(version) {
            preferred.push(version.clone());
        }
    }
    ClientLifecycleMode::Auto {
        preferred_versions: preferred,
        legacy_version: None,
    }
}

/// Why a start failed.
#[derive(Debug)]
struct StartFailure {
    reason: String,
    /// The upstream refused the gateway's credentials, or no token could be had.
    unauthorized: bool,
}

impl From<String> for StartFailure {
    fn from(reason: String) -> Self {
        Self {
            reason,
            unauthorized: false,
        }
    }
}

/// Error codes of the gateway, beside afd-runtime's (`TIMEOUT`, `CANCELLED`, `FORBIDDEN`).
pub mod error_codes {
    /// The upstream server could not be started, crashed, or is waiting out its restart
    /// backoff. Retryable.
    pub const UPSTREAM_UNAVAILABLE: &str = "UPSTREAM_UNAVAILABLE";
    /// The upstream refused the gateway's credentials, or the gateway could not get a
    /// token for it (its `auth` or `headers` need fixing, or its authorization server is
    /// down). Retryable after the backoff.
    pub const UPSTREAM_UNAUTHORIZED: &str = "UPSTREAM_UNAUTHORIZED";
    /// The upstream tool ran and reported an error (`isError: true`) or the upstream
    /// refused the request with a JSON-RPC error.
    pub const UPSTREAM_TOOL_ERROR: &str = "UPSTREAM_TOOL_ERROR";
    /// The upstream answered something that is not a valid tool result.
    pub const UPSTREAM_PROTOCOL_ERROR: &str = "UPSTREAM_PROTOCOL_ERROR";
}

use error_codes::{
    UPSTREAM_PROTOCOL_ERROR, UPSTREAM_TOOL_ERROR, UPSTREAM_UNAUTHORIZED, UPSTREAM_UNAVAILABLE,
};

/// The longest restart backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The first restart backoff; doubles with each failure in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
/// How long a health probe (ping) after a timed-out call may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// What an upstream tells the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The named server's tool list may have changed (it started, or it sent
    /// `notifications/tools/list_changed`).
    ToolsChanged(String),
    /// The named eager server went down; restart it once its backoff has passed.
    Restart(String),
}

/// Where the upstream stands, for the gateway's server list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Not started (its tools come from the cache).
    Stopped,
    /// Connected.
    Running,
    /// Its last start or connection failed; the next try waits for the backoff.
    Failing,
    /// Its last start failed on authorization: the upstream refused the gateway's
    /// credentials, or no token could be had for it.
    Unauthorized,
}

impl Status {
    /// The word agents see.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Stopped => "not started",
            Status::Running => "running",
            Status::Failing => "failing",
            Status::Unauthorized => "authorization failed",
        }
    }
}

type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, Progress>>>;

/// The client side of one upstream connection: forwards progress to the downstream
/// caller and announces tool-list changes.
#[derive(Clone)]
struct Handler {
    server: String,
    progress: ProgressRoutes,
    events: UnboundedSender<Event>,
}

impl ClientHandler for Handler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = lock(&self.progress).get(&params.progress_token).cloned();
        if let Some(progress) = route {
            progress
                .report(params.progress, params.total, params.message)
                .await;
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.server, "upstream tool list changed");
        let _ = self.events.send(Event::ToolsChanged(self.server.clone()));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A live connection. The gateway stops it by taking it out of the state first, so a
/// connection that ends while still in the state ended without being asked to.
struct Live {
    peer: Peer<RoleClient>,
    stop: RunningServiceCancellationToken,
    generation: u64,
}

#[derive(Default)]
struct State {
    live: Option<Live>,
    generation: u64,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<String>,
    /// The last failure was an authorization failure.
    unauthorized: bool,
    tools: Option<ToolList>,
    starts: u32,
}

/// One upstream server.
pub struct Upstream {
    name: String,
    config: ServerConfig,
    transport: Transport,
    call_timeout: Duration,
    gateway_read_only: bool,
    start_lock: tokio::sync::Mutex<()>,
    state: Mutex<State>,
    progress: ProgressRoutes,
    events: UnboundedSender<Event>,
    /// Where its tokens come from (`auth`), kept across restarts so a valid token is reused.
    tokens: Option<Arc<dyn TokenSource>>,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl Upstream {
    /// An upstream, not started, knowing the tools in `cached` if any.
    ///
    /// # Panics
    ///
    /// `config` has no valid transport (checked by [`Config::parse`](crate::Config::parse)).
    pub fn new(
        name: String,
        config: ServerConfig,
        call_timeout: Duration,
        gateway_read_only: bool,
        cached: Option<ToolList>,
        events: UnboundedSender<Event>,
    ) -> Upstream {
        let transport = config
            .transport()
            .expect("the configuration was checked when it was read");
        let tokens = token_source(&config, &transport);
        Upstream {
            tokens,
            call_timeout: config.call_timeout(call_timeout),
            name,
            config,
            transport,
            gateway_read_only,
            start_lock: tokio::sync::Mutex::new(()),
            state: Mutex::new(State {
                tools: cached,
                ..State::default()
            }),
            progress: Arc::default(),
            events,
        }
    }

    /// The server's name (the prefix of its tools).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Whether the whole gateway is read-only.
    pub fn gateway_read_only(&self) -> bool {
        self.gateway_read_only
    }

    /// The tools known now (from the running server, else from the cache).
    pub fn tools(&self) -> Option<ToolList> {
        lock(&self.state).tools.clone()
    }

    /// Where it stands.
    pub fn status(&self) -> Status {
        let state = lock(&self.state);
        if state.live.is_some() {
            Status::Running
        } else if state.last_error.is_some() && state.unauthorized {
            Status::Unauthorized
        } else if state.last_error.is_some() {
            Status::Failing
        } else {
            Status::Stopped
        }
    }

    /// How many times it was started (successfully connected).
    pub fn starts(&self) -> u32 {
        lock(&self.state).starts
    }

    /// The last start or connection error, if the last attempt failed.
    pub fn last_error(&self) -> Option<String> {
        lock(&self.state).last_error.clone()
    }

    fn live_peer(&self) -> Option<Peer<RoleClient>> {
        lock(&self.state)
            .live
            .as_ref()
            .map(|live| live.peer.clone())
    }

    /// The connected peer, starting the server if it is not running (one start at a time;
    /// concurrent callers wait for it). Other servers are never blocked by this one.
    ///
    /// # Errors
    ///
    /// `UPSTREAM_UNAVAILABLE`: the start failed or timed out, or the server is waiting
    /// out its restart backoff.
    pub async fn connect(self: &Arc<Self>) -> Result<Peer<RoleClient>, CommandError> {
        if let Some(peer) = self.live_peer() {
            return Ok(peer);
        }
        let _starting = self.start_lock.lock().await;
        if let Some(peer) = self.live_peer() {
            return Ok(peer);
        }
        {
            let state = lock(&self.state);
            if let Some(at) = state.retry_at
                && let Some(wait) = at.checked_duration_since(Instant::now())
            {
                return Err(self.unavailable(
                    state.last_error.as_deref().unwrap_or("it failed"),
                    Some(wait),
                    state.unauthorized,
                ));
            }
        }
        let timeout = self.config.start_timeout();
        let started = match tokio::time::timeout(timeout, self.start()).await {
            Ok(Ok(started)) => started,
            Ok(Err(failure)) => return Err(self.failed(failure)),
            Err(_) => {
                return Err(self.failed(StartFailure::from(format!(
                    "it did not finish starting (initialize and tools/list) within {} ms",
                    timeout.as_millis()
                ))));
            }
        };
        let (peer, list) = started;
        let changed = {
            let mut state = lock(&self.state);
            state.last_error = None;
            state.unauthorized = false;
            state.retry_at = None;
            state.starts += 1;
            let changed = state
                .tools
                .as_ref()
                .is_none_or(|known| !known.same_catalog(&list));
            state.tools = Some(list);
            changed
        };
        let protocol = peer
            .peer_info()
            .map(|info| info.protocol_version.to_string())
            .unwrap_or_default();
        tracing::info!(server = %self.name, changed, %protocol, "upstream started");
        if changed {
            let _ = self.events.send(Event::ToolsChanged(self.name.clone()));
        }
        Ok(peer)
    }

    /// On the 2026-07-28 wire, changes of the upstream's tools come on a
    /// `subscriptions/listen` stream rather than the session's: one is kept open for the
    /// connection's life, each change sent as `on_tool_list_changed` sends it on the older
    /// wire.
    fn listen_for_tool_changes(&self, peer: &Peer<RoleClient>) {
        let (peer, server, events) = (peer.clone(), self.name.clone(), self.events.clone());
        tokio::spawn(async move {
            // A stream that ends while the connection lives (the upstream closed it, a
            // network blip) is opened again, a second later each time.
            while !peer.is_transport_closed() {
                let filter = SubscriptionFilter::builder().tools_list_changed().build();
                match peer.listen(filter).await {
                    Ok(mut subscription) => {
                        while let Ok(Some(notification)) = subscription.next().await {
                            if let ServerNotification::ToolListChangedNotification(_) = notification
                            {
                                tracing::info!(%server, "upstream tool list changed");
                                let _ = events.send(Event::ToolsChanged(server.clone()));
                            }
                        }
                        tracing::debug!(%server, "the upstream's subscriptions/listen stream ended");
                    }
                    Err(error) => {
                        tracing::warn!(%server, %error, "the upstream refused subscriptions/listen: its tool changes will not be seen");
                        return;
                    }
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
    }

    /// Starts the server and fetches its tools; on success it is live.
    async fn start(self: &Arc<Self>) -> Result<(Peer<RoleClient>, ToolList), StartFailure> {
        let handler = Handler {
            server: self.name.clone(),
            progress: self.progress.clone(),
            events: self.events.clone(),
        };
        let running = match &self.transport {
            Transport::Stdio { command, args } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).envs(&self.config.env);
                if let Some(dir) = &self.config.cwd {
                    process.current_dir(dir);
                }
                let (transport, stderr) = TokioChildProcess::builder(process)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|error| format!("cannot start '{command}': {error}"))?;
                if let Some(stderr) = stderr {
                    let server = self.name.clone();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::info!(target: "afd_gateway::upstream_stderr", server = %server, "{line}");
                        }
                    });
                }
                handler
                    .serve(transport)
                    .await
                    .map_err(|error| format!("the MCP handshake failed: {}", with_causes(&error)))?
            }
            Transport::Http { url } => {
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.clone());
                for (name, value) in &self.config.headers {
                    let name = http::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|e| format!("invalid header name '{name}': {e}"))?;
                    let value = http::HeaderValue::from_str(value)
                        .map_err(|e| format!("invalid value of header '{name}': {e}"))?;
                    config.custom_headers.insert(name, value);
                }
                // The stateless 2026-07-28 wire when the upstream answers `server/discover`,
                // else `initialize`.
                let handshake = match &self.tokens {
                    Some(tokens) => {
                        let client = Authorized::new(reqwest::Client::new(), tokens.clone());
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        handler.serve_with_lifecycle(transport, either_wire()).await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::from_config(config);
                        handler.serve_with_lifecycle(transport, either_wire()).await
                    }
                };
                handshake.map_err(|error| StartFailure {
                    reason: format!(
                        "the MCP handshake with {url} failed: {}",
                        with_causes(&error)
                    ),
                    unauthorized: is_authorization_failure(&error),
                })?
            }
        };
        let peer = running.peer().clone();
        let info = peer.peer_info();
        if info
            .as_ref()
            .is_some_and(|info| info.protocol_version == ProtocolVersion::V_2026_07_28)
        {
            self.listen_for_tool_changes(&peer);
        }
        let tools = match peer.list_all_tools().await {
            Ok(tools) => tools,
            Err(error) => {
                running.cancellation_token().cancel();
                return Err(format!("tools/list failed: {error}").into());
            }
        };
        let list = ToolList {
            fingerprint: self.config.fingerprint(),
            server_name: info
                .as_ref()
                .and_then(|i| i.server_info.as_ref())
                .map(|s| s.name.clone()),
            server_version: info
                .as_ref()
                .and_then(|i| i.server_info.as_ref())
                .map(|s| s.version.clone()),
            instructions: info.as_ref().and_then(|i| i.instructions.clone()),
            tools,
        };
        let stop = running.cancellation_token();
        let generation = {
            let mut state = lock(&self.state);
            state.generation += 1;
            state.live = Some(Live {
                peer: peer.clone(),
                stop,
                generation: state.generation,
            });
            state.generation
        };
        // Watch the connection: when it ends without the gateway asking, the server is down.
        let me = Arc::downgrade(self);
        tokio::spawn(async move {
            let reason = running.waiting().await;
            if let Some(me) = me.upgrade() {
                me.ended(generation, format!("{reason:?}"));
            }
        });
        Ok((peer, list))
    }

    /// The connection of `generation` ended.
    fn ended(&self, generation: u64, reason: String) {
        let mut state = lock(&self.state);
        let Some(live) = &state.live else { return };
        if live.generation != generation {
            return;
        }
        state.live = None;
        drop(state);
        tracing::warn!(server = %self.name, %reason, "upstream connection ended");
        self.record_failure(
            format!("it exited or closed the connection ({reason})"),
            false,
        );
        if self.config.eager {
            let _ = self.events.send(Event::Restart(self.name.clone()));
        }
    }

    /// Marks the connection of the peer dead (after a transport failure) and stops it.
    fn drop_connection(&self, reason: &str) {
        let mut state = lock(&self.state);
        let Some(live) = state.live.take() else {
            // The watcher saw the connection end first, and recorded it.
            return;
        };
        live.stop.cancel();
        drop(state);
        self.record_failure(reason.to_owned(), false);
        if self.config.eager {
            let _ = self.events.send(Event::Restart(self.name.clone()));
        }
    }

    fn record_failure(&self, reason: String, unauthorized: bool) -> Duration {
        let mut state = lock(&self.state);
        state.unauthorized = unauthorized;
        state.failures = state.failures.saturating_add(1);
        let exponent = state.failures.saturating_sub(1).min(16);
        let backoff = FIRST_BACKOFF.saturating_mul(1 << exponent).min(MAX_BACKOFF);
        state.retry_at = Some(Instant::now() + backoff);
        state.last_error = Some(reason);
        backoff
    }

    /// The time left before the next start may be tried.
    pub fn backoff_left(&self) -> Option<Duration> {
        lock(&self.state)
            .retry_at
            .and_then(|at| at.checked_duration_since(Instant::now()))
    }

    fn failed(&self, failure: StartFailure) -> CommandError {
        let StartFailure {
            reason,
            unauthorized,
        } = failure;
        tracing::warn!(server = %self.name, %reason, unauthorized, "upstream failed to start");
        let backoff = self.record_failure(reason.clone(), unauthorized);
        self.unavailable(&reason, Some(backoff), unauthorized)
    }

    fn unavailable(
        &self,
        reason: &str,
        retry_in: Option<Duration>,
        unauthorized: bool,
    ) -> CommandError {
        let name = &self.name;
        let wait = retry_in.map_or(0, |d| d.as_millis() as u64);
        if unauthorized {
            return CommandError::new(
                UPSTREAM_UNAUTHORIZED,
                format!("The gateway is not authorized to use the upstream server '{name}': {reason}"),
            )
            .with_suggestion(format!(
                "Check the `auth` (or `headers`) of '{name}' in the gateway's configuration and its authorization server; the gateway tries again on the next call after {wait} ms. Other servers are unaffected."
            ))
            .with_retryable(true)
            .with_details(json!({"server": name, "retryAfterMs": wait}));
        }
        CommandError::new(
            UPSTREAM_UNAVAILABLE,
            format!("The upstream server '{name}' is unavailable: {reason}"),
        )
        .with_suggestion(format!(
            "The gateway restarts '{name}' on the next call after {wait} ms; other servers are unaffected. If it keeps failing, check its command and logs (the gateway logs its stderr)."
        ))
        .with_retryable(true)
        .with_details(json!({"server": name, "retryAfterMs": wait}))
    }

    /// Stops the server (the gateway is shutting down).
    pub fn stop(&self) {
        if let Some(live) = lock(&self.state).live.take() {
            live.stop.cancel();
        }
    }

    /// Refetches the tool list of a running server (after
    /// `notifications/tools/list_changed`); returns whether it changed.
    pub async fn refresh_tools(&self) -> bool {
        let Some(peer) = self.live_peer() else {
            return false;
        };
        match tokio::time::timeout(self.config.start_timeout(), peer.list_all_tools()).await {
            Ok(Ok(tools)) => {
                let mut state = lock(&self.state);
                let Some(known) = state.tools.as_mut() else {
                    return false;
                };
                if known.tools == tools {
                    return false;
                }
                known.tools = tools;
                true
            }
            Ok(Err(error)) => {
                tracing::warn!(server = %self.name, %error, "refreshing the tool list failed");
                false
            }
            Err(_) => {
                tracing::warn!(server = %self.name, "refreshing the tool list timed out");
                false
            }
        }
    }

    /// Calls the upstream tool `tool` (its upstream name) with `input`: starts the server
    /// if needed, applies the per-call timeout, forwards progress and cancellation, and
    /// maps the answer. `mutation` is the tool's flag, for the read-only policy.
    pub async fn call(
        self: &Arc<Self>,
        tool: &str,
        mutation: bool,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        let span = client_span(&self.name, tool);
        let result = self
            .call_upstream(tool, mutation, input, ctx)
            .instrument(span.clone())
            .await;
        if let Some(error) = &result.error {
            afd_runtime::telemetry::fail(&span, &error.code);
        }
        result
    }

    /// [`call`](Upstream::call), within its CLIENT span.
    async fn call_upstream(
        self: &Arc<Self>,
        tool: &str,
        mutation: bool,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        if let Some(reason) =
            crate::config::refusal(&self.config, self.gateway_read_only, tool, mutation)
        {
            return CommandResult::failure(
                CommandError::new(
                    codes::FORBIDDEN,
                    format!(
                        "The gateway's policy refuses {}.{tool}: {reason}",
                        self.name
                    ),
                )
                .with_suggestion("Pick another tool; afd-discover lists the callable ones.")
                .with_retryable(false)
                .with_details(json!({"server": self.name, "tool": tool})),
            );
        }
        let peer = match self.connect().await {
            Ok(peer) => peer,
            Err(error) => return CommandResult::failure(error),
        };
        let arguments = match input {
            Value::Object(map) => map,
            _ => Default::default(),
        };
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        // The upstream's spans join the caller's trace.
        let mut meta = serde_json::Map::new();
        afd_runtime::telemetry::inject(&mut meta);
        if !meta.is_empty() {
            params.meta = Some(meta.into());
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(error) => {
                let reason = format!("sending the call failed: {error}");
                self.drop_connection(&reason);
                return CommandResult::failure(self.unavailable(
                    &reason,
                    self.backoff_left(),
                    false,
                ));
            }
        };
        // Until the answer arrives, dropping this call (the dispatcher drops a cancelled
        // call's future) tells the upstream to stop, and forgets the progress route.
        let mut guard = InFlight {
            peer: Some(peer.clone()),
            id: handle.id.clone(),
            token: handle.progress_token.clone(),
            routes: self.progress.clone(),
        };
        if let Some(progress) = ctx.try_state::<Progress>() {
            lock(&self.progress).insert(guard.token.clone(), progress.clone());
        }
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(self.call_timeout, handle.await_response()) => Some(outcome),
            () = ctx.cancelled() => None,
        };
        if matches!(outcome, Some(Ok(_))) {
            guard.peer = None;
        }
        drop(guard);
        let outcome = match outcome {
            None => {
                return CommandResult::failure(
                    CommandError::new(
                        codes::CANCELLED,
                        format!("The call of {}.{tool} was cancelled", self.name),
                    )
                    .with_suggestion(
                        "The upstream server was told to stop; check its state before retrying a change.",
                    )
                    .with_details(json!({"server": self.name, "tool": tool})),
                );
            }
            Some(Err(_elapsed)) => {
                self.probe(peer);
                let ms = self.call_timeout.as_millis() as u64;
                return CommandResult::failure(
                    CommandError::new(
                        codes::TIMEOUT,
                        format!(
                            "The upstream server '{}' did not answer {tool} within {ms} ms",
                            self.name
                        ),
                    )
                    .with_suggestion(format!(
                        "The call was cancelled upstream. Retry later, or raise timeoutMs for '{}' in the gateway configuration.",
                        self.name
                    ))
                    .with_retryable(true)
                    .with_details(json!({"server": self.name, "tool": tool, "timeoutMs": ms})),
                );
            }
            Some(Ok(outcome)) => outcome,
        };
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => {
                lock(&self.state).failures = 0;
                map_result(&self.name, tool, result)
            }
            Ok(other) => CommandResult::failure(protocol_error(
                &self.name,
                tool,
                &format!("it answered tools/call with {}", result_kind(&other)),
            )),
            Err(ServiceError::McpError(error)) => CommandResult::failure(
                CommandError::new(
                    UPSTREAM_TOOL_ERROR,
                    format!(
                        "The upstream server '{}' refused {tool}: {}",
                        self.name, error.message
                    ),
                )
                .with_suggestion("Check the input against afd-detail's schema and retry.")
                .with_retryable(false)
                .with_details(json!({"server": self.name, "tool": tool, "rpcError": error})),
            ),
            Err(ServiceError::UnexpectedResponse) => CommandResult::failure(protocol_error(
                &self.name,
                tool,
                "it answered with an unexpected response",
            )),
            Err(error) => {
                let reason = format!("the connection failed during the call ({error})");
                self.drop_connection(&reason);
                CommandResult::failure(self.unavailable(&reason, self.backoff_left(), false))
            }
        }
    }

    /// After a timed-out call: pings the server, and drops the connection if the server
    /// does not answer (a hung server is restarted; a slow tool is not).
    fn probe(self: &Arc<Self>, peer: Peer<RoleClient>) {
        let me = self.clone();
        tokio::spawn(async move {
            let answered = tokio::time::timeout(
                PROBE_TIMEOUT,
                peer.send_request(rmcp::model::ClientRequest::PingRequest(Default::default())),
            )
            .await;
            if !matches!(answered, Ok(Ok(_))) {
                tracing::warn!(server = %me.name, "upstream does not answer ping after a timeout; restarting it");
                me.drop_connection("it stopped answering (ping failed after a call timed out)");
            }
        });
    }
}

/// A call waiting for its answer: dropped before the answer (cancelled, timed out, or its
/// future dropped), it sends `notifications/cancelled` upstream.
struct InFlight {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    token: ProgressToken,
    routes: ProgressRoutes,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        lock(&self.routes).remove(&self.token);
        if let Some(peer) = self.peer.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let id = self.id.clone();
            runtime
                .spawn(async move { cancel(&peer, id, "the caller cancelled or timed out").await });
        }
    }
}

async fn cancel(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notification = CancelledNotification::new(CancelledNotificationParam::new(
        Some(id),
        Some(reason.to_owned()),
    ));
    if let Err(error) = peer.send_notification(notification.into()).await {
        tracing::debug!(%error, "could not send notifications/cancelled upstream");
    }
}

fn result_kind(result: &ServerResult) -> String {
    serde_json::to_value(result)
        .ok()
        .and_then(|v| {
            v.as_object()
                .map(|m| m.keys().cloned().collect::<Vec<_>>().join(","))
        })
        .unwrap_or_else(|| "something else".to_owned())
}

fn protocol_error(server: &str, tool: &str, what: &str) -> CommandError {
    CommandError::new(
        UPSTREAM_PROTOCOL_ERROR,
        format!("The upstream server '{server}' answered {tool} with something that is not a tool result: {what}"),
    )
    .with_suggestion(format!(
        "This is a fault of '{server}'; report it to its authors. Other servers are unaffected."
    ))
    .with_retryable(false)
    .with_details(json!({"server": server, "tool": tool}))
}

/// The CLIENT span of a call to an upstream server: `tools/call {tool}`, with the
/// server's name. Disabled, and free, when no subscriber takes afd's spans.
fn client_span(server: &str, tool: &str) -> tracing::Span {
    if !tracing::enabled!(target: "afd::otel", tracing::Level::INFO) {
        return tracing::Span::none();
    }
    tracing::info_span!(
        target: "afd::otel",
        "mcp.client",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "tools/call",
        gen_ai.tool.name = tool,
        gen_ai.operation.name = "execute_tool",
        server.address = server,
        error.type = tracing::field::Empty,
    )
}

/// Maps an upstream tool result: `structuredContent` (else `{content}` with the text
/// blocks) as the data, the blocks that are not text (images, audio, resources, resource
/// links) passed on as content blocks, so a client shows them as the upstream sent them;
/// `isError` as a failure carrying the upstream's text.
pub fn map_result(server: &str, tool: &str, result: CallToolResult) -> CommandResult<Value> {
    let content = serde_json::to_value(&result.content).unwrap_or(Value::Null);
    if result.is_error == Some(true) {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
            .collect();
        let mut text = text.join(" ");
        if text.chars().count() > 500 {
            text = text.chars().take(500).collect::<String>() + "...";
        }
        if text.is_empty() {
            text = "no message".to_owned();
        }
        let mut details = json!({"server": server, "tool": tool, "content": content});
        if let Some(structured) = result.structured_content {
            details["structuredContent"] = structured;
        }
        return CommandResult::failure(
            CommandError::new(
                UPSTREAM_TOOL_ERROR,
                format!("{server}.{tool} failed: {text}"),
            )
            .with_suggestion(format!(
                "The upstream server '{server}' reported this error; fix the input or the state it describes, then retry."
            ))
            .with_details(details),
        );
    }
    // Text stays in the data (the JSON an agent reads and a pipe passes on); the other
    // blocks, in the same MCP form on both sides, become content blocks. A block the
    // runtime does not model stays in the data rather than being lost.
    let mut kept = Vec::new();
    let mut blocks = Vec::new();
    for block in result.content {
        let value = serde_json::to_value(&block).unwrap_or(Value::Null);
        match block.as_text() {
            Some(_) => kept.push(value),
            None => match serde_json::from_value::<Content>(value.clone()) {
                Ok(content) => blocks.push(content),
                Err(_) => kept.push(value),
            },
        }
    }
    let data = match result.structured_content {
        Some(structured) => Some(structured),
        None if kept.is_empty() && !blocks.is_empty() => None,
        None => Some(json!({"content": kept})),
    };
    let mut mapped = match data {
        Some(data) => CommandResult::success(data),
        None => CommandResult::content_only(Vec::<Content>::new()),
    };
    mapped.content = blocks;
    mapped
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock as McpContent;

    #[test]
    fn text_is_data_and_other_blocks_pass_on_as_content() {
        let mut result = CallToolResult::success(vec![
            McpContent::text("the chart:"),
            McpContent::image("iVBORw0KGgo=", "image/png"),
        ]);
        let mapped = map_result("charts", "draw", result.clone());
        assert!(mapped.success);
        assert_eq!(mapped.data.unwrap()["content"][0]["text"], "the chart:");
        assert_eq!(
            mapped.content,
            vec![Content::Image {
                data: "iVBORw0KGgo=".to_owned(),
                mime_type: "image/png".to_owned(),
            }]
        );

        // With structured content, that is the data; the image still passes on.
        result.structured_content = Some(json!({"points": 3}));
        let mapped = map_result("charts", "draw", result);
        assert_eq!(mapped.data, Some(json!({"points": 3})));
        assert_eq!(mapped.content.len(), 1);
    }

    #[test]
    fn a_result_of_blocks_only_is_content_only() {
        let result = CallToolResult::success(vec![McpContent::image("AAAA", "image/png")]);
        let mapped = map_result("charts", "draw", result);
        assert!(mapped.is_content_only(), "{mapped:?}");
    }

    #[test]
    fn text_only_results_keep_their_data_form() {
        let result = CallToolResult::success(vec![McpContent::text("{\"now\": 1}")]);
        let mapped = map_result("time", "now", result);
        assert_eq!(
            mapped.data,
            Some(json!({"content": [{"type": "text", "text": "{\"now\": 1}"}]}))
        );
        assert!(mapped.content.is_empty());
    }
}
