//! The handler's requests to an MCP client: log messages as `notifications/message` at the
//! level the client set with `logging/setLevel`, or that a 2026-07-28 request names in its
//! `_meta` ([`McpLog`]), and sampling
//! (`sampling/createMessage`) and elicitation (`elicitation/create`) when the client
//! declared them ([`McpClient`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
#[allow(deprecated)]
use rmcp::model::{
    ClientResult, CreateMessageRequestParams, ElicitRequest, ElicitRequestParams,
    ElicitationAction, ServerRequest,
};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};

use crate::client::{
    ClientRequests, Elicitation, LogLevel, LogMessage, LogSink, SamplingRequest, SamplingResponse,
};
use crate::error::{CommandError, codes};

/// The `_meta` key of the log level a 2026-07-28 request asks for; without it the call sends
/// no log messages.
pub(in crate::mcp) const LOG_LEVEL_META: &str = "io.modelcontextprotocol/logLevel";

/// A connection's log level: 0 until the client sends `logging/setLevel`, then the level's
/// position in [`LogLevel::ALL`] plus one.
#[derive(Debug, Default)]
pub(in crate::mcp) struct LevelCell(AtomicU8);

impl LevelCell {
    /// The level a 2026-07-28 request asks for in its `_meta`
    /// (`io.modelcontextprotocol/logLevel`), unset when it names none (or none known).
    pub(in crate::mcp) fn of_request(meta: Option<&serde_json::Map<String, Value>>) -> Self {
        let cell = LevelCell::default();
        if let Some(level) = meta
            .and_then(|meta| meta.get(LOG_LEVEL_META))
            .and_then(|level| serde_json::from_value::<LogLevel>(level.clone()).ok())
        {
            cell.set(level);
        }
        cell
    }

    pub(in crate::mcp) fn set(&self, level: LogLevel) {
        let position = LogLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.0.store(position as u8 + 1, Ordering::Relaxed);
    }

    /// The level the client set, if it set one.
    fn get(&self) -> Option<LogLevel> {
        match self.0.load(Ordering::Relaxed) {
            0 => None,
            n => LogLevel::ALL.get(usize::from(n) - 1).copied(),
        }
    }
}

/// Converts an rmcp level (as JSON, since rmcp marks its logging types deprecated).
pub(in crate::mcp) fn level_of(level: &impl serde::Serialize) -> Option<LogLevel> {
    serde_json::to_value(level)
        .ok()
        .and_then(|value| serde_json::from_value(value).ok())
}

/// Log messages of one call, sent to the MCP client: those awaited at once, those of
/// `tracing` events queued and sent in order (the call's answer waits for them).
#[derive(Clone)]
pub(in crate::mcp) struct McpLog {
    shared: Arc<Shared>,
}

struct Shared {
    /// The client's peer; without one, messages are held for the entrance to send.
    peer: Option<Peer<RoleServer>>,
    /// The params of each `notifications/message` held, as rmcp writes them.
    held: Mutex<Vec<Value>>,
    level: Arc<LevelCell>,
    /// Whether nothing is sent until a level is set (a 2026-07-28 request that named none),
    /// rather than `info` and above.
    quiet_unless_asked: bool,
    queue: Mutex<VecDeque<LogMessage>>,
    /// Held while sending, so messages leave in the order they were logged.
    sending: tokio::sync::Mutex<()>,
    /// Whether a message was sent (so the stdio front orders the answer after it).
    sent: AtomicBool,
}

impl McpLog {
    /// A call's log: at `level`, or, until one is set, `info` and above (or nothing at all
    /// when `quiet_unless_asked`).
    pub(in crate::mcp) fn new(
        peer: Option<Peer<RoleServer>>,
        level: Arc<LevelCell>,
        quiet_unless_asked: bool,
    ) -> Self {
        McpLog {
            shared: Arc::new(Shared {
                peer,
                held: Mutex::new(Vec::new()),
                level,
                quiet_unless_asked,
                queue: Mutex::new(VecDeque::new()),
                sending: tokio::sync::Mutex::new(()),
                sent: AtomicBool::new(false),
            }),
        }
    }

    /// Sends what is queued, then `message`.
    async fn deliver(&self, message: Option<LogMessage>) {
        let _order = self.shared.sending.lock().await;
        loop {
            let next = self
                .shared
                .queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .pop_front();
            match next {
                Some(queued) => self.notify(queued).await,
                None => break,
            }
        }
        if let Some(message) = message {
            self.notify(message).await;
        }
    }

    #[allow(deprecated)]
    async fn notify(&self, message: LogMessage) {
        let params =
            json!({"level": message.level, "logger": message.logger, "data": message.data});
        let Ok(params) =
            serde_json::from_value::<rmcp::model::LoggingMessageNotificationParam>(params)
        else {
            return;
        };
        let Some(peer) = &self.shared.peer else {
            if let Ok(params) = serde_json::to_value(&params) {
                self.shared
                    .held
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(params);
            }
            return;
        };
        self.shared.sent.store(true, Ordering::Relaxed);
        if let Err(error) = peer.notify_logging_message(params).await {
            tracing::debug!(%error, "could not send notifications/message");
        }
    }

    /// The messages held (there being no peer to send them to), in order.
    pub(in crate::mcp) fn take_held(&self) -> Vec<Value> {
        std::mem::take(
            &mut *self
                .shared
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Sends whatever is still queued, and waits for a send under way (a `tracing`
    /// event's): called before the call's answer, which must follow them.
    pub(in crate::mcp) async fn flush(&self) {
        self.deliver(None).await;
    }

    /// Whether any message reached the transport.
    pub(in crate::mcp) fn sent(&self) -> bool {
        self.shared.sent.load(Ordering::Relaxed)
    }
}

impl LogSink for McpLog {
    fn threshold(&self) -> Option<LogLevel> {
        // Until the client chooses, `info` and above (the handler's own messages only), or
        // nothing for a request of the revision where choosing is per request.
        match self.shared.level.get() {
            Some(level) => Some(level),
            None if self.shared.quiet_unless_asked => None,
            None => Some(LogLevel::Info),
        }
    }

    fn wants_tracing(&self) -> bool {
        self.shared.level.get().is_some()
    }

    fn send(&self, message: LogMessage) -> BoxFuture<'_, ()> {
        self.deliver(Some(message)).boxed()
    }

    fn send_later(&self, message: LogMessage) {
        self.shared
            .queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_back(message);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let log = self.clone();
            runtime.spawn(async move { log.flush().await });
        }
    }
}

/// Sampling and elicitation through the MCP client of a call, as far as it declared them.
pub(in crate::mcp) struct McpClient {
    peer: Peer<RoleServer>,
}

impl McpClient {
    pub(in crate::mcp) fn new(peer: Peer<RoleServer>) -> Self {
        McpClient { peer }
    }
}

/// The error of a client request that failed on the way or was refused.
fn request_failed(what: &str, error: impl std::fmt::Display) -> CommandError {
    CommandError::new(
        codes::CLIENT_REQUEST_FAILED,
        format!("The client did not answer the {what} request: {error}"),
    )
    .with_suggestion("The client refused or could not serve it; try again, or go on without it.")
}

impl ClientRequests for McpClient {
    fn can_sample(&self) -> bool {
        self.peer
            .peer_info()
            .is_some_and(|info| info.capabilities.sampling.is_some())
    }

    #[allow(deprecated)]
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'_, Result<SamplingResponse, CommandError>> {
        async move {
            let params = serde_json::to_value(&request)
                .and_then(serde_json::from_value::<CreateMessageRequestParams>)
                .map_err(|error| {
                    CommandError::internal(format!("invalid sampling request: {error}"))
                })?;
            let result = self
                .peer
                .create_message(params)
                .await
                .map_err(|error| request_failed("sampling", error))?;
            let mut answer =
                serde_json::to_value(&result).map_err(|error| request_failed("sampling", error))?;
            // A client may answer with a list of blocks; the first one is the answer.
            if let Some(first) = answer
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .and_then(|blocks| (!blocks.is_empty()).then(|| blocks.remove(0)))
            {
                answer["content"] = first;
            }
            serde_json::from_value(answer).map_err(|error| request_failed("sampling", error))
        }
        .boxed()
    }

    fn can_elicit(&self) -> bool {
        self.peer.peer_info().is_some_and(|info| {
            info.capabilities
                .elicitation
                .as_ref()
                .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
        })
    }

    fn elicit(
        &self,
        message: String,
        schema: Value,
    ) -> BoxFuture<'_, Result<Elicitation<Value>, CommandError>> {
        async move {
            let requested_schema = serde_json::from_value(schema).map_err(|error| {
                CommandError::internal(format!(
                    "the form is not a valid elicitation schema: {error}"
                ))
            })?;
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema,
            };
            // Sent as rmcp's `create_elicitation` sends it, without its `elicitation` feature
            // (which only adds that method, and a URL parser with it).
            let answer = self
                .peer
                .send_request(ServerRequest::ElicitRequest(ElicitRequest::new(params)))
                .await
                .map_err(|error| request_failed("elicitation", error))?;
            let ClientResult::ElicitResult(result) = answer else {
                return Err(request_failed(
                    "elicitation",
                    "the client answered something else",
                ));
            };
            Ok(match result.action {
                ElicitationAction::Accept => {
                    Elicitation::Accept(result.content.unwrap_or_else(|| json!({})))
                }
                ElicitationAction::Decline => Elicitation::Decline,
                _ => Elicitation::Cancel,
            })
        }
        .boxed()
    }
}
