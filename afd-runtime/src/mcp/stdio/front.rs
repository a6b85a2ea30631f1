//! Serving a byte stream (stdio): `tools/call` answered in front of rmcp, everything else
//! handed to it.
//!
//! rmcp's service loop spawns a task per request and passes each response through two
//! channels and one more task before it reaches the transport. For the request an agent
//! sends over and over (`tools/call`, mostly through `afd-call`) that is most of what a call
//! costs the server (BENCHMARKS.md, "End to end"). So the stream is read here first:
//!
//! - a `tools/call` that rmcp would answer with nothing but our handler's result (the
//!   connection initialised with `initialize` on a protocol version before 2026-07-28, the
//!   params only `name`, `arguments` and a `_meta` that at most names an `afd/session` and
//!   a progress token; or, on a connection whose first request carried its own metadata
//!   (2026-07-28), a `_meta` with that metadata too, and the answers and state of an
//!   earlier round if any; so no task or other extension) runs through the same
//!   `McpServer::run_tool_call` rmcp's handler calls (the same context, the same answer),
//!   and its response is written straight back without building rmcp's types, batched with the other responses to the same read. A call
//!   that completes when first polled (every sync command, every meta-tool but batch and
//!   pipe) runs inline; anything else, and commands declared `slow` or `long-running`, runs
//!   on a task of its own, cancellable with `notifications/cancelled`;
//! - a line rmcp would drop or answer without its id (not JSON, invalid UTF-8, nested
//!   deeper than serde_json reads, longer than rmcp reads, not a JSON-RPC 2.0 request
//!   object, params that do not fit the method, a request rmcp cannot read: an id that is
//!   no string or 64-bit integer) is answered here with a JSON-RPC error, bearing the
//!   request's id where it can be read (the `malformed` module); this is looked at only for
//!   lines the front's own parse refused. A line longer than rmcp reads is answered as soon
//!   as the limit is passed, and the rest of it skipped unread (the `lines` module), so no
//!   line costs more memory than the limit;
//! - every other message (the handshake, listings, resources, pings, calls this front does
//!   not take) goes to rmcp unchanged through an in-memory pipe, and rmcp's output is
//!   copied back line by line.
//!
//! The responses are the ones rmcp writes (`tests/mcp_stream.rs` compares them).

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::Instant;

use futures_util::FutureExt as _;
use rmcp::{Peer, RoleServer, ServiceExt as _};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::lines::{self, Line};
use super::order::{Counted, Order};
use crate::command::ExecutionTime;
use crate::mcp::server::call::{Input, Outbound, PROGRESS_TOKEN, ToolCall};
use crate::mcp::server::state::McpServer;
use crate::mcp::server::tools::Route;
use crate::mcp::wire::malformed::{self, Refused};
use crate::mcp::wire::message::{self, CallParams, CallRequest, Envelope, InitializeResponse};
use crate::metrics::{self, Transport};

/// The in-memory pipe to rmcp, each way.
const PIPE_BYTES: usize = 64 * 1024;

/// The boxed error `serve_stdio` and `serve_stream` return.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The stream's writer, shared by the front and the copy of rmcp's output; each write is
/// whole lines.
type SharedWriter<W> = Arc<tokio::sync::Mutex<W>>;

/// Calls running on their own task, by JSON-RPC id (as JSON text).
pub(super) type InFlight = Arc<Mutex<HashMap<String, CancellationToken>>>;

/// How far the connection's handshake has gone.
#[derive(Debug, Default)]
pub(super) struct Handshake {
    /// The `initialize` request's id.
    initialize_id: Option<Value>,
    /// The protocol version rmcp answered it with.
    version: Option<String>,
    /// `notifications/initialized` has been passed on.
    initialized: bool,
    /// rmcp's handle on the client, once its handshake is done: what a call's
    /// notifications go through.
    peer: Option<Peer<RoleServer>>,
}

impl Handshake {
    /// The front answers calls once the connection is initialised on a version whose
    /// requests need no metadata of their own.
    fn ready(&self) -> bool {
        self.initialized
            && self.peer.is_some()
            && self
                .version
                .as_deref()
                .is_some_and(|version| version < message::INLINE_VERSION)
    }

    /// rmcp's handle on the client where it chose the lifecycle of 2026-07-28: a request
    /// that carried its own metadata came first, and no `initialize`.
    fn inline(&self) -> Option<&Peer<RoleServer>> {
        if self.initialize_id.is_some() || self.version.is_some() {
            return None;
        }
        self.peer.as_ref()
    }
}

type CallFuture = Pin<Box<dyn Future<Output = Vec<u8>> + Send>>;

impl McpServer {
    /// Serves over stdin/stdout until the client disconnects. Logs must go to stderr.
    ///
    /// Where both streams are pipes (how MCP clients start stdio servers) they are driven
    /// by Tokio's non-blocking pipe reactor rather than a blocking thread per read and
    /// write ([`rmcp::transport::stdio_pipes`]); a terminal or a file falls back to the
    /// blocking handles. The stream is served by [`serve_stream`](McpServer::serve_stream):
    /// `tools/call` answered by afd-rs directly, everything else by rmcp.
    ///
    /// # Errors
    ///
    /// The transport failed to start.
    pub async fn serve_stdio(self) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        self.serve_stream(stdin, stdout).await
    }

    /// Serves one client over a byte stream of newline-delimited JSON-RPC (what
    /// [`serve_stdio`](McpServer::serve_stdio) does with stdin and stdout), until the
    /// reader ends and every answer is written.
    ///
    /// `tools/call` requests are answered by afd-rs itself, everything else by rmcp (the
    /// `stdio::front` module's documentation says which calls and why); the answers are the same.
    ///
    /// # Errors
    ///
    /// The client closed the stream before the `initialize` handshake completed, or rmcp's
    /// service failed.
    pub async fn serve_stream<R, W>(self, reader: R, writer: W) -> Result<(), BoxError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        // One connection: the front and rmcp share its transport session (a clone is a new
        // connection, `with_connection_of` the same one).
        let server = self.clone();
        let handler = server.with_connection_of(&server);
        let opened = Instant::now();
        metrics::session_opened(Transport::Pipe);
        let (ours, theirs) = tokio::io::duplex(PIPE_BYTES);
        let (from_rmcp, to_rmcp) = tokio::io::split(ours);
        let writer: SharedWriter<W> = Arc::new(tokio::sync::Mutex::new(writer));
        let handshake = Arc::new(Mutex::new(Handshake::default()));
        let order = Arc::new(Order::new());
        let theirs = Counted::new(theirs, order.clone());
        let handshaken = handshake.clone();
        let rmcp = tokio::spawn(async move {
            let running = handler.serve(theirs).await?;
            handshaken
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .peer = Some(running.peer().clone());
            running.waiting().await?;
            Ok::<(), BoxError>(())
        });
        // Tasks, not futures joined here: the caller may be `block_on`'s thread, which every
        // I/O event would then have to wake from a worker.
        let copy = tokio::spawn(copy_lines(
            from_rmcp,
            writer.clone(),
            handshake.clone(),
            order.clone(),
        ));
        let front = tokio::spawn(server.front(reader, to_rmcp, writer, handshake, order));
        front.await?;
        match copy.await? {
            Ok(()) => {}
            Err(error) => tracing::debug!(%error, "could not copy rmcp's output"),
        }
        let result = match rmcp.await {
            Ok(result) => result,
            Err(error) => Err(error.into()),
        };
        metrics::session_closed(
            Transport::Pipe,
            opened.elapsed().as_secs_f64(),
            result.is_err().then_some("transport_error"),
        );
        result
    }

    /// Reads the client's messages: answers the calls it can, passes the rest to rmcp.
    async fn front<R, W, P>(
        self,
        reader: R,
        mut to_rmcp: P,
        writer: SharedWriter<W>,
        handshake: Arc<Mutex<Handshake>>,
        order: Arc<Order>,
    ) where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
        P: AsyncWrite + Unpin,
    {
        let mut reader = BufReader::with_capacity(PIPE_BYTES, reader);
        let mut line = Vec::with_capacity(1024);
        let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
        let in_flight: InFlight = Arc::default();
        let mut tasks = JoinSet::new();
        // rmcp's handle on the client once the front takes calls, and whether the
        // connection keeps a session (it began with `initialize`): a server whose
        // tools/list follows the session leaves every call to rmcp.
        let mut taking: Option<(Peer<RoleServer>, bool)> = None;
        let fast = !self.inner.session_tools;
        let drain = self.inner.drain.clone();
        loop {
            let read = tokio::select! {
                biased;
                () = drain.closed() => break,
                read = lines::read_line(&mut reader, &mut line, malformed::MAX_LINE_BYTES) => read,
            };
            match read {
                Ok(Line::End) => break,
                Ok(Line::Whole) => {}
                Ok(Line::TooLong) => {
                    // Answered at once, before the rest of the line arrives; the rest is
                    // skipped as it does.
                    out.extend_from_slice(&malformed::too_long(&line));
                    if !write_lines(&writer, &out).await {
                        break;
                    }
                    out.clear();
                    match lines::skip_line(&mut reader).await {
                        Ok(true) => continue,
                        Ok(false) => break,
                        Err(error) => {
                            tracing::debug!(%error, "could not read the client's stream");
                            break;
                        }
                    }
                }
                Err(error) => {
                    tracing::debug!(%error, "could not read the client's stream");
                    break;
                }
            }
            if fast && taking.is_none() {
                let handshake = handshake.lock().unwrap_or_else(PoisonError::into_inner);
                if handshake.ready() {
                    taking = handshake.peer.clone().map(|peer| (peer, true));
                } else if let Some(peer) = handshake.inline() {
                    taking = Some((peer.clone(), false));
                }
            }
            let call = taking.as_ref().and_then(|(peer, legacy)| {
                serde_json::from_slice::<CallRequest<'_>>(&line)
                    .ok()
                    .filter(|call| match legacy {
                        true => call.plain(),
                        false => call.plain_inline(),
                    })
                    .map(|call| (call, peer.clone(), *legacy))
            });
            match call {
                Some((call, peer, legacy)) => {
                    let id = call.id;
                    // The catalog served now, on this connection.
                    let now = self.current();
                    let spawn = !now.runs_inline(&call.params);
                    let token = CancellationToken::new();
                    let mut future = now.answer(
                        id.clone(),
                        call.params,
                        token.clone(),
                        peer,
                        legacy,
                        order.clone(),
                    );
                    let polled = if spawn {
                        Poll::Pending
                    } else {
                        std::future::poll_fn(|cx| Poll::Ready(future.as_mut().poll(cx))).await
                    };
                    if let Poll::Ready(answer) = polled {
                        out.extend_from_slice(&answer);
                    } else {
                        let key = id.to_string();
                        in_flight
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .insert(key.clone(), token.clone());
                        let writer = writer.clone();
                        let in_flight = in_flight.clone();
                        // The drain waits for the answer to be written, not only computed.
                        let work = drain.enter_admitted();
                        tasks.spawn(async move {
                            let _work = work;
                            let answer = future.await;
                            in_flight
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .remove(&key);
                            // A cancelled request gets no response (the MCP spec, and rmcp).
                            if !token.is_cancelled() {
                                write_lines(&writer, &answer).await;
                            }
                        });
                    }
                }
                None => {
                    if drain.is_draining() && malformed::is_request(&line) {
                        // No new sessions or requests once the drain has begun.
                        let id = malformed::readable_id(line.trim_ascii());
                        out.extend_from_slice(&malformed::shutting_down(id).to_line());
                    } else if let Some(answer) = refuse(&line, &handshake, &in_flight) {
                        out.extend_from_slice(&answer);
                    } else if let Err(error) = to_rmcp.write_all(&line).await {
                        tracing::debug!(%error, "rmcp's side of the pipe closed");
                        break;
                    }
                }
            }
            // Write the answers before waiting for more input.
            if !out.is_empty() && !reader.buffer().contains(&b'\n') {
                if !write_lines(&writer, &out).await {
                    break;
                }
                out.clear();
            }
        }
        if !out.is_empty() {
            write_lines(&writer, &out).await;
        }
        tasks.join_all().await;
        // rmcp sees the end of the stream, answers what it holds, and stops.
        if let Err(error) = to_rmcp.shutdown().await {
            tracing::debug!(%error, "could not close rmcp's side of the pipe");
        }
    }

    /// Whether a call runs on the reader's task: everything but batch, pipe and commands
    /// declared slow.
    fn runs_inline(&self, params: &CallParams) -> bool {
        let argument = |key: &str| {
            params
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(key))
                .and_then(Value::as_str)
        };
        let route = self.inner.routes.get(params.name.as_str());
        if matches!(route, Some(Route::Batch | Route::Pipe)) {
            return false;
        }
        let command = Route::command(route, params.name.as_str(), argument);
        let slow = command
            .and_then(|command| self.inner.dispatcher.registry().get(command))
            .and_then(|entry| entry.def().execution_time())
            .is_some_and(|time| matches!(time, ExecutionTime::Slow | ExecutionTime::LongRunning));
        !slow
    }

    /// The call through the same path as rmcp's `call_tool`, to the bytes of its response
    /// line (of the 2026-07-28 shape where the connection keeps no session: not `legacy`).
    fn answer(
        self,
        id: Value,
        params: CallParams,
        token: CancellationToken,
        peer: Peer<RoleServer>,
        legacy: bool,
        order: Arc<Order>,
    ) -> CallFuture {
        Box::pin(async move {
            let CallParams {
                name,
                arguments,
                meta,
                input_responses,
                request_state,
            } = params;
            let declared = meta
                .as_ref()
                .map(|meta| meta.inline.declared)
                .unwrap_or_default();
            let call = ToolCall {
                name: &name,
                arguments: Value::Object(arguments.unwrap_or_default()),
                meta: meta.as_ref().map(|meta| &meta.read),
                cancel: token,
                peer: Outbound::Peer(&peer),
                legacy,
                principal: None,
                request_id: Some(id.to_string()),
                origin: crate::telemetry::Origin::default(),
                input: Input {
                    declared,
                    responses: input_responses.as_ref(),
                    state: request_state.as_deref(),
                },
            };
            let called = AssertUnwindSafe(self.run_tool_call(call))
                .catch_unwind()
                .await;
            match called {
                Ok(called) => {
                    // The call's notifications went out through rmcp: the response follows
                    // them.
                    if called.notified {
                        order.passed_on().await;
                    }
                    message::response_line(&id, called.answer, !legacy)
                }
                Err(_) => {
                    // Whatever progress it reported before it panicked still goes first.
                    if meta.is_some_and(|meta| meta.read.contains_key(PROGRESS_TOKEN)) {
                        order.passed_on().await;
                    }
                    tracing::error!(tool = %name, "a tools/call panicked outside its handler");
                    message::internal_error_line(&id)
                }
            }
        })
    }
}

/// The error line the front answers a line with itself, because rmcp would drop it or
/// answer it without its id; `None` passes the line on to rmcp (after noting what it means
/// for the front, see [`observe`]).
///
/// A notification whose params do not fit its method gets no answer (JSON-RPC forbids
/// one) and is not passed on either: the empty line.
pub(super) fn refuse(
    line: &[u8],
    handshake: &Mutex<Handshake>,
    in_flight: &InFlight,
) -> Option<Vec<u8>> {
    if !observe(line, handshake, in_flight) {
        return malformed::answer(line);
    }
    // The envelope is right; rmcp may still not read the message.
    match malformed::refused(line) {
        Some(Refused::Request(error)) => Some(error.to_line()),
        Some(Refused::Notification(why)) => {
            tracing::warn!(%why, "a notification the server cannot read");
            Some(Vec::new())
        }
        None => malformed::unreadable(line),
    }
}

/// Notes what a message passed on to rmcp means for the front: the handshake, and a
/// cancellation of one of the front's own calls. False when the line is not a JSON object
/// of valid UTF-8 whose envelope members have the right types.
fn observe(line: &[u8], handshake: &Mutex<Handshake>, in_flight: &InFlight) -> bool {
    // serde_json skips members it does not read without checking their UTF-8, and rmcp
    // then drops the line: checked here, off the front's own call path.
    if line.first() != Some(&b'{') || std::str::from_utf8(line).is_err() {
        return false;
    }
    let Ok(message) = serde_json::from_slice::<Envelope>(line) else {
        return false;
    };
    if message.problem().is_some() {
        return false;
    }
    match message.method.as_deref() {
        Some("initialize") => {
            let mut handshake = handshake.lock().unwrap_or_else(PoisonError::into_inner);
            handshake.initialize_id = message.id;
        }
        Some("notifications/initialized") => {
            handshake
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .initialized = true;
        }
        Some("notifications/cancelled") => {
            let request = message
                .params
                .as_ref()
                .and_then(|params| params.get("requestId"))
                .map(Value::to_string);
            if let Some(request) = request
                && let Some(token) = in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&request)
            {
                token.cancel();
            }
        }
        _ => {}
    }
    true
}

/// Writes whole lines and flushes; false when the stream is gone.
async fn write_lines<W: AsyncWrite + Unpin>(writer: &tokio::sync::Mutex<W>, lines: &[u8]) -> bool {
    let mut writer = writer.lock().await;
    match async {
        writer.write_all(lines).await?;
        writer.flush().await
    }
    .await
    {
        Ok(()) => true,
        Err(error) => {
            tracing::debug!(%error, "could not write to the client's stream");
            false
        }
    }
}

/// Copies rmcp's output to the client a line at a time (never half a line, so the front's
/// own writes cannot land inside one), and notes the version `initialize` settled on.
async fn copy_lines<R, W>(
    from: R,
    writer: SharedWriter<W>,
    handshake: Arc<Mutex<Handshake>>,
    order: Arc<Order>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let copied = copy_until_end(from, &writer, &handshake, &order).await;
    order.ended();
    copied
}

async fn copy_until_end<R, W>(
    from: R,
    writer: &tokio::sync::Mutex<W>,
    handshake: &Mutex<Handshake>,
    order: &Order,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::with_capacity(PIPE_BYTES, from);
    let mut line = Vec::with_capacity(1024);
    let mut out = Vec::with_capacity(PIPE_BYTES);
    let mut versioned = false;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).await?;
        if read > 0 && !versioned {
            versioned = note_version(&line, handshake);
        }
        out.extend_from_slice(&line);
        if !out.is_empty() && (read == 0 || !reader.buffer().contains(&b'\n')) {
            if !write_lines(writer, &out).await {
                return Ok(());
            }
            order.copied(out.len());
            out.clear();
        }
        if read == 0 {
            return Ok(());
        }
    }
}

/// Records the version of rmcp's answer to `initialize`; true once it has.
fn note_version(line: &[u8], handshake: &Mutex<Handshake>) -> bool {
    let mut handshake = handshake.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(id) = handshake.initialize_id.as_ref() else {
        return false;
    };
    match serde_json::from_slice::<InitializeResponse>(line) {
        Ok(response) if response.id == *id => {
            handshake.version = Some(response.result.protocol_version);
            true
        }
        _ => false,
    }
}
