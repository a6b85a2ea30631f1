//! A `tools/call`, whichever way it arrived: [`McpServer::run_tool_call`] is the one path
//! that rmcp's handler and the stdio front both take. It builds the call's context (the
//! server's base context, the request's cancellation, its `afd/session` or else the
//! transport's session, progress reporting, log messages and requests to the client),
//! routes the call to the dispatcher, and announces a changed session listing. Also the tool result's two forms: rmcp's
//! [`CallToolResult`] (with a command's content blocks) and the JSON the stdio front writes
//! itself.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ClientCapabilities, ErrorData, InputRequiredResult, JsonObject,
    ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde::{Deserialize as _, Serialize};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::client::{LevelCell, McpClient, McpLog};
use super::env::SESSION_META;
use super::observe::Request;
use super::progress::Progress;
use super::rounds::{Bound, Declared, RoundClient};
use super::state::McpServer;
use super::tools::{BATCH, DETAIL, DISCOVER, DOCS, HELP, PIPE, Route, SCHEMA};
use crate::audit::{AuditEvent, Decision};
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::metrics;
use crate::result::CommandResult;
use crate::telemetry::{self, Origin};
use crate::tools::batch::BatchResult;
use crate::tools::meta::{BuiltinOutcome, MetaTools};
use crate::tools::pipe::PipeResult;

/// The `_meta` key of a request's progress token.
pub(in crate::mcp) const PROGRESS_TOKEN: &str = "progressToken";

/// A `tools/call` request as an entrance received it.
pub(in crate::mcp) struct ToolCall<'a> {
    /// The tool's name.
    pub(in crate::mcp) name: &'a str,
    /// The tool's arguments (an object; `{}` when the request had none).
    pub(in crate::mcp) arguments: Value,
    /// The request's `_meta`, where the client names an `afd/session` or a progress token.
    pub(in crate::mcp) meta: Option<&'a JsonObject>,
    /// Cancelled when the client cancels the request.
    pub(in crate::mcp) cancel: CancellationToken,
    /// Where the call's messages to the client go: its log messages, progress, sampling
    /// and elicitation requests, and `notifications/tools/list_changed`.
    pub(in crate::mcp) peer: Outbound<'a>,
    /// Whether the client's protocol keeps sessions (2025-11-25 and earlier).
    pub(in crate::mcp) legacy: bool,
    /// Who is calling, where the transport checked a token.
    pub(in crate::mcp) principal: Option<crate::auth::Principal>,
    /// The JSON-RPC request id, as written, for the audit trail.
    pub(in crate::mcp) request_id: Option<String>,
    /// Where the request came from, for its span.
    pub(in crate::mcp) origin: Origin,
    /// What a 2026-07-28 request brought for a handler that asks its client something:
    /// the capabilities its `_meta` declared, the answers and the state of earlier rounds.
    pub(in crate::mcp) input: Input<'a>,
}

/// What a 2026-07-28 request declared and answered (see [`rounds`](super::rounds)).
#[derive(Clone, Copy, Default)]
pub(in crate::mcp) struct Input<'a> {
    /// The client capabilities its `_meta` declared.
    pub(in crate::mcp) declared: Declared,
    /// Its `inputResponses`.
    pub(in crate::mcp) responses: Option<&'a Value>,
    /// Its `requestState`.
    pub(in crate::mcp) state: Option<&'a str>,
}

/// Where a call's messages to its client go.
#[derive(Clone, Copy)]
pub(in crate::mcp) enum Outbound<'a> {
    /// Through rmcp's peer of the client, as they happen.
    Peer(&'a Peer<RoleServer>),
    /// Held for the entrance to send before the answer: log messages, and the notice of a
    /// changed listing; progress, where the request asked for it, goes into the entrance's
    /// channel as it is reported. The call cannot ask the client anything (the entrance
    /// takes only calls from a client the server cannot ask anything mid-call).
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    Held(Option<&'a UnboundedSender<ProgressNotificationParam>>),
}

/// What a [`ToolCall`] produced.
pub(in crate::mcp) struct Called {
    pub(in crate::mcp) answer: Answer,
    /// Whether notifications may have been sent to the client during the call (progress,
    /// a changed listing): they must reach it before the response.
    pub(in crate::mcp) notified: bool,
    /// The params of the `notifications/message` of a call whose messages were
    /// [held](Outbound::Held), in order.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(in crate::mcp) held: Vec<Value>,
    /// Whether the call changed what `tools/list` shows its session, where the messages
    /// were held: the entrance sends `notifications/tools/list_changed` before the answer.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(in crate::mcp) listing_changed: bool,
}

/// The JSON-RPC error message (-32603) of a `tools/call` that panicked outside its
/// handler (whose own panics are tool results).
pub(in crate::mcp) const CALL_PANICKED: &str = "the tool call failed inside the server";

impl McpServer {
    /// Runs a `tools/call` request: the context rmcp's handler and the stdio front both
    /// give a call, its answer, and `notifications/tools/list_changed` where `tools/list`
    /// follows the session and the call changed what it lists.
    pub(in crate::mcp) async fn run_tool_call(&self, call: ToolCall<'_>) -> Called {
        let ToolCall {
            name,
            arguments,
            meta,
            cancel,
            peer,
            legacy,
            principal,
            request_id,
            origin,
            input,
        } = call;
        let started = std::time::Instant::now();
        let span = self.server_span(&Request {
            method: "tools/call",
            target: Some(name),
            id: request_id.as_deref(),
            meta,
            origin: &origin,
        });
        let audit = &self.inner.audit;
        // What the audit trail keeps of the request, taken before the call consumes it.
        let audited = audit.is_enabled().then(|| {
            let mut event = AuditEvent::new(Decision::Allowed, Default::default());
            event.subject = principal.as_ref().map(|p| p.subject().to_owned());
            event.client_id = principal
                .as_ref()
                .and_then(|p| p.client_id().map(str::to_owned));
            event.method = Some("tools/call".to_owned());
            event.tool = Some(name.to_owned());
            let route = self.inner.routes.get(name);
            let argument = |key: &str| arguments.get(key).and_then(Value::as_str);
            event.command = Route::command(route, name, argument)
                .and_then(|command| match route {
                    // A command called by its own tool name: as the registry names it.
                    None => self
                        .inner
                        .dispatcher
                        .registry()
                        .get(command)
                        .map(|entry| entry.name()),
                    Some(_) => Some(command),
                })
                .map(str::to_owned);
            event.request_id = request_id;
            event.arguments = audit.arguments(&arguments);
            event
        });
        // Counted in flight until answered, so that a drain waits for it; refused once the
        // drain has begun.
        let Some(_work) = self.inner.drain.enter() else {
            let answer = Answer::Command(CommandResult::failure(shutting_down()));
            return self.refused(audited, codes::SHUTTING_DOWN, started, answer);
        };
        // A command that needs a client capability the caller did not declare does not run.
        if let Some(answer) = self.missing_capability(name, &arguments, legacy, peer, input) {
            return self.refused(audited, codes::CLIENT_CAPABILITY_MISSING, started, answer);
        }
        // On the stateless revision the handler asks its client through rounds: the
        // request's answers, and its state bound to the request.
        // A client that declared nothing it could be asked, and brought no earlier round,
        // needs none: its handler's questions fail at once, as without a client.
        let rounds = !legacy
            && (input.declared != Declared::default()
                || input.responses.is_some()
                || input.state.is_some());
        let subject = principal.as_ref().map(|p| p.subject().to_owned());
        let bound = rounds.then(|| Bound::new("tools/call", name, &arguments, subject.as_deref()));
        let round = match &bound {
            None => None,
            Some(bound) => {
                match self
                    .inner
                    .rounds
                    .client(bound, input.declared, input.responses, input.state)
                {
                    Ok(round) => Some(Arc::new(match self.inner.routes.get(name) {
                        Some(Route::Batch) => round.within(BATCH),
                        Some(Route::Pipe) => round.within(PIPE),
                        _ => round,
                    })),
                    Err(error) => {
                        let answer = Answer::Protocol(error);
                        return self.refused(audited, codes::VALIDATION_ERROR, started, answer);
                    }
                }
            }
        };
        // The call's own token: cancelled by the client's request, or by the drain once its
        // grace period is over (the answer is then CANCELLED, and still sent).
        let token = CancellationToken::new();
        let mut ctx = self.inner.context.clone().with_cancellation(token.clone());
        if let Some(principal) = principal {
            ctx = ctx.with_principal(principal);
        }
        let explicit = meta
            .and_then(|meta| meta.get(SESSION_META))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let session = match explicit {
            Some(explicit) => Some(explicit),
            None => self.transport_session(legacy).await,
        };
        if let Some(session) = session {
            ctx = ctx.with_session(session);
        }
        let progress = meta
            .and_then(|meta| meta.get(PROGRESS_TOKEN))
            .and_then(|token| ProgressToken::deserialize(token).ok());
        let mut notified = progress.is_some();
        // The handler's log messages, sampling and elicitation go to this client.
        let (client, progress_to) = match peer {
            Outbound::Peer(peer) => (Some(peer), None),
            Outbound::Held(progress_to) => (None, progress_to),
        };
        // The connection's level (`logging/setLevel`), or on the stateless revision the
        // request's own, and no messages when it names none.
        let log = if legacy {
            McpLog::new(client.cloned(), self.log_level().clone(), false)
        } else {
            McpLog::new(client.cloned(), Arc::new(LevelCell::of_request(meta)), true)
        };
        ctx = ctx.with_log(Arc::new(log.clone()));
        match (&round, client) {
            (Some(round), _) => ctx = ctx.with_client(round.clone()),
            // The stateless revision forbids the server's own requests mid-call.
            (None, Some(peer)) if legacy => {
                ctx = ctx.with_client(Arc::new(McpClient::new(peer.clone())));
            }
            (None, _) => {}
        }
        let progress = match (progress, client, progress_to) {
            (Some(token), Some(peer), _) => Some(Progress::new(peer.clone(), token)),
            (Some(token), None, Some(answer)) => Some(Progress::for_answer(answer.clone(), token)),
            _ => None,
        };
        if let Some(progress) = progress {
            ctx = ctx
                .with_state(progress.clone())
                .with_progress(Arc::new(progress));
        }
        // Where tools/list follows the transport session, announce what the call changed.
        let followed = self.followed_session(legacy).await;
        let before = match followed.as_deref() {
            Some(handle) => self.inner.dispatcher.session(handle).await.ok(),
            None => None,
        };
        let answer = {
            let call = self
                .answer_call(name, arguments, ctx)
                .instrument(span.clone());
            tokio::pin!(call);
            tokio::select! {
                biased;
                answer = &mut call => answer,
                () = cancel.cancelled() => {
                    token.cancel();
                    call.await
                }
                () = self.inner.drain.aborted() => {
                    token.cancel();
                    call.await
                }
            }
        };
        // A round that left a question unanswered is answered with the questions, whatever
        // the handler made of the error its question returned.
        let answer = match (round, &bound) {
            (Some(round), Some(bound)) => self.after_round(answer, &round, bound),
            _ => answer,
        };
        if !answer.success() {
            telemetry::fail(&span, "tool_error");
        }
        if metrics::is_installed() {
            metrics::operation(
                "tools/call",
                Some(self.bounded_tool(name)),
                self.network_transport(),
                (!answer.success()).then_some("tool_error"),
                started.elapsed().as_secs_f64(),
            );
        }
        if let Some(mut event) = audited {
            if !answer.success() {
                event.decision = Decision::ToolError;
                event.error = answer.error_code().map(str::to_owned);
            }
            event.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            // Within the request's span: a JSON log line carries its trace id.
            span.in_scope(|| audit.record(&event));
        }
        // Log messages of `tracing` events still queued go before the answer.
        log.flush().await;
        // Log messages that went out must reach the client before the answer.
        notified |= log.sent();
        let mut listing_changed = false;
        if let (Some(handle), Some(before)) = (followed.as_deref(), before) {
            let after = self.inner.dispatcher.session(handle).await;
            // A store that cannot be read now says nothing about a change: no notice.
            if let Ok(after) = after
                && self.listing_changed(before.as_deref(), after.as_deref())
            {
                notified = true;
                match client {
                    Some(peer) => {
                        if let Err(error) = peer.notify_tool_list_changed().await {
                            tracing::debug!(
                                %error,
                                "could not send notifications/tools/list_changed"
                            );
                        }
                    }
                    None => listing_changed = true,
                }
            }
        }
        Called {
            answer,
            notified,
            held: log.take_held(),
            listing_changed,
        }
    }

    /// A call refused before it ran: `answer`, recorded in the audit trail under `code`.
    fn refused(
        &self,
        audited: Option<AuditEvent>,
        code: &str,
        started: std::time::Instant,
        answer: Answer,
    ) -> Called {
        if let Some(mut event) = audited {
            event.decision = Decision::ToolError;
            event.error = Some(code.to_owned());
            event.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            self.inner.audit.record(&event);
        }
        Called {
            answer,
            notified: false,
            held: Vec::new(),
            listing_changed: false,
        }
    }

    /// The answer of a call whose command needs a client capability the caller did not
    /// declare: on the stateless revision the protocol's error (-32021), else a tool error
    /// the agent can read. `None` when nothing is missing (or nothing can be known).
    fn missing_capability(
        &self,
        name: &str,
        arguments: &Value,
        legacy: bool,
        peer: Outbound<'_>,
        input: Input<'_>,
    ) -> Option<Answer> {
        let route = self.inner.routes.get(name);
        let argument = |key: &str| arguments.get(key).and_then(Value::as_str);
        let command = Route::command(route, name, argument)?;
        let needs = self
            .inner
            .dispatcher
            .registry()
            .get(command)?
            .def()
            .needs_client();
        if needs.is_empty() {
            return None;
        }
        let declared = if legacy {
            // A session's client declared its capabilities at `initialize`; a call whose
            // messages are held has a client that declared neither sampling nor elicitation.
            match peer {
                Outbound::Peer(peer) => Declared::of(
                    peer.peer_info()
                        .and_then(|info| serde_json::to_value(&info.capabilities).ok())
                        .as_ref(),
                ),
                Outbound::Held(_) => return None,
            }
        } else {
            input.declared
        };
        let missing: Vec<&str> = needs
            .iter()
            .copied()
            .filter(|need| !declared.has(need))
            .collect();
        if missing.is_empty() {
            return None;
        }
        if !legacy {
            let required: serde_json::Map<String, Value> = missing
                .iter()
                .map(|need| ((*need).to_owned(), json!({})))
                .collect();
            let required = serde_json::from_value::<ClientCapabilities>(Value::Object(required))
                .unwrap_or_default();
            return Some(Answer::Protocol(
                ErrorData::missing_required_client_capability(required),
            ));
        }
        let error = CommandError::new(
            codes::CLIENT_CAPABILITY_MISSING,
            format!(
                "'{command}' needs a client that supports {}, which this client did not declare",
                missing.join(" and ")
            ),
        )
        .with_suggestion("Call it from an MCP client that declares these capabilities.")
        .with_retryable(false);
        Some(Answer::Command(CommandResult::failure(error)))
    }

    /// What a round of a stateless call comes to: the handler's answer, the questions it
    /// left unanswered, or the error of an answer that does not fit its question.
    fn after_round(&self, answer: Answer, round: &RoundClient, bound: &Bound) -> Answer {
        match self.inner.rounds.settle(bound, round) {
            Ok(None) => answer,
            Ok(Some(result)) => Answer::InputRequired(result),
            Err(error) => Answer::Protocol(error),
        }
    }

    /// Runs a tool call: the same answer whatever the transport.
    ///
    /// The call's session is `ctx`'s, unless the meta-tools' `session` argument names one.
    /// With a [principal](CommandContext::with_principal) in `ctx`, the call sees what
    /// that caller may see.
    pub async fn call(&self, name: &str, arguments: Value, ctx: CommandContext) -> CallToolResult {
        self.seen_by(ctx.principal())
            .answer_call(name, arguments, ctx)
            .await
            .into_tool_result()
    }

    /// A tool call's outcome, before it becomes a [`CallToolResult`] (which the stream front
    /// writes without building one).
    async fn answer_call(&self, name: &str, arguments: Value, ctx: CommandContext) -> Answer {
        let inner = &*self.inner;
        // The sessions a caller with a token uses are bound to its subject.
        let dispatcher = &match ctx.principal() {
            Some(principal) => inner.dispatcher.with_subject(principal.subject()),
            None => inner.dispatcher.clone(),
        };
        let mut arguments = arguments;
        let mut ctx = ctx;
        let route = inner.routes.get(name).cloned().or_else(|| {
            // A tools/call naming an exposed command works in every strategy.
            // One the caller's scopes do not cover is routed too: the call then says which
            // scopes it needs.
            dispatcher
                .registry()
                .get(name)
                .filter(|e| dispatcher.is_exposed(e.name()) || dispatcher.withholds(e.def()))
                .map(|e| Route::Command(e.name()))
        });
        match &route {
            // afd-discover and afd-detail read `session` from their input.
            Some(Route::Discover | Route::Detail) => {
                if let (Some(session), Some(map)) = (ctx.session(), arguments.as_object_mut())
                    && !map.contains_key("session")
                {
                    map.insert("session".into(), json!(session));
                }
            }
            Some(Route::Call | Route::Batch | Route::Pipe) => match take_session(&mut arguments) {
                Ok(Some(session)) => ctx = ctx.with_session(session),
                Ok(None) => {}
                Err(error) => return Answer::Command(CommandResult::failure(error)),
            },
            _ => {}
        }
        // The built-in tools pass through the middleware stack, so observers see them too.
        let builtin = |tool| builtin(dispatcher, tool, name, arguments.clone(), ctx.clone());
        match route {
            Some(Route::Discover) => builtin(DISCOVER).await,
            Some(Route::Detail) => builtin(DETAIL).await,
            Some(Route::Help) => builtin(HELP).await,
            Some(Route::Docs) => builtin(DOCS).await,
            Some(Route::Schema) => builtin(SCHEMA).await,
            Some(Route::Batch) => builtin(BATCH).await,
            Some(Route::Pipe) => builtin(PIPE).await,
            Some(Route::Call) => {
                let (command, input) = match call_arguments(arguments) {
                    Ok(parts) => parts,
                    Err(error) => return Answer::Command(CommandResult::failure(error)),
                };
                Answer::Command(dispatcher.call(&command, input, ctx).await)
            }
            Some(Route::Command(command)) => {
                Answer::Command(dispatcher.call(command, arguments, ctx).await)
            }
            Some(Route::Group(category)) => {
                let mut arguments = arguments;
                let action = arguments
                    .as_object_mut()
                    .and_then(|map| map.remove("action"));
                match action.as_ref().and_then(Value::as_str) {
                    Some(command)
                        if dispatcher
                            .registry()
                            .get(command)
                            .is_some_and(|e| e.category() == category) =>
                    {
                        Answer::Command(dispatcher.call(command, arguments, ctx).await)
                    }
                    _ => {
                        let actions: Vec<&str> = dispatcher
                            .exposed_entries()
                            .filter(|e| e.category() == category)
                            .map(|e| e.name())
                            .collect();
                        let error = CommandError::new(
                            codes::VALIDATION_ERROR,
                            format!(
                                "Invalid input for '{category}': `action` must be one of {}",
                                actions.join(", ")
                            ),
                        )
                        .with_suggestion(format!(
                            "Pass action: \"{}\" (or another listed command).",
                            actions.first().copied().unwrap_or_default()
                        ));
                        Answer::Command(CommandResult::failure(error))
                    }
                }
            }
            None => Answer::Command(CommandResult::failure(dispatcher.not_found(name))),
        }
    }
}

/// A built-in tool's answer, run through the dispatcher's middleware stack.
async fn builtin(
    dispatcher: &crate::dispatch::Dispatcher,
    tool: &str,
    name: &str,
    arguments: Value,
    ctx: CommandContext,
) -> Answer {
    match dispatcher.call_builtin(tool, arguments, ctx).await {
        Some(BuiltinOutcome::Result(result)) => Answer::Command(result),
        Some(BuiltinOutcome::Batch(result)) => Answer::Batch(result),
        Some(BuiltinOutcome::Pipe(result)) => Answer::Pipe(result),
        None => Answer::Command(CommandResult::failure(dispatcher.not_found(name))),
    }
}

/// Removes the `session` argument of afd-call, afd-batch and afd-pipe.
fn take_session(arguments: &mut Value) -> Result<Option<String>, CommandError> {
    let Some(map) = arguments.as_object_mut() else {
        return Ok(None);
    };
    match map.remove("session") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(session)) if !session.is_empty() => Ok(Some(session)),
        Some(_) => Err(CommandError::new(
            codes::VALIDATION_ERROR,
            "Invalid input: Field 'session' must be the handle afd-context-enter returned",
        )
        .with_suggestion("Pass session as a string, or leave it out.")),
    }
}

fn call_arguments(arguments: Value) -> Result<(String, Value), CommandError> {
    let invalid = |message: &str| {
        CommandError::new(
            codes::VALIDATION_ERROR,
            format!("Invalid input for 'afd-call': {message}"),
        )
        .with_suggestion("Send {command: \"<name>\", input: {...}}; afd-discover lists the names.")
    };
    let Value::Object(mut map) = arguments else {
        return Err(invalid("the arguments must be an object"));
    };
    let command = match map.remove("command") {
        Some(Value::String(command)) if !command.is_empty() => command,
        Some(_) => return Err(invalid("Field 'command' must be a non-empty string")),
        None => return Err(invalid("Required field 'command' is missing")),
    };
    let input = map.remove("input").unwrap_or_else(|| json!({}));
    if let Some(extra) = map.keys().next() {
        return Err(invalid(&format!("Unknown field '{extra}' is not allowed")));
    }
    Ok((command, input))
}

/// What a tool call produced.
pub(in crate::mcp) enum Answer {
    Command(CommandResult<Value>),
    Batch(BatchResult),
    Pipe(PipeResult),
    /// The handler asked its client something (2026-07-28): the questions and the state.
    InputRequired(InputRequiredResult),
    /// The request itself is refused: a JSON-RPC error, not a tool result.
    Protocol(ErrorData),
}

impl Answer {
    pub(in crate::mcp) fn success(&self) -> bool {
        match self {
            Answer::Command(result) => result.success,
            Answer::Batch(result) => result.success,
            Answer::Pipe(result) => result.success,
            Answer::InputRequired(_) => true,
            Answer::Protocol(_) => false,
        }
    }

    /// The error code of a failed answer (a batch's or pipeline's first failure).
    pub(in crate::mcp) fn error_code(&self) -> Option<&str> {
        match self {
            Answer::Command(result) => result.error.as_ref().map(|e| e.code.as_ref()),
            Answer::Batch(result) => result
                .results
                .iter()
                .find_map(|entry| entry.result.error.as_ref().map(|e| e.code.as_ref())),
            Answer::Pipe(result) => result.error.as_ref().map(|e| e.code.as_ref()),
            Answer::InputRequired(_) => None,
            Answer::Protocol(_) => None,
        }
    }

    /// Whether the answer carries content blocks of its own (then it is not written in the
    /// stdio front's fixed shape).
    pub(in crate::mcp) fn has_content(&self) -> bool {
        matches!(self, Answer::Command(result) if !result.content.is_empty())
    }

    /// The result as rmcp sends it: structured content, the same JSON as text, `isError`;
    /// a command's content blocks first, when it returned some.
    pub(in crate::mcp) fn into_tool_result(self) -> CallToolResult {
        let success = self.success();
        match &self {
            Answer::Command(result) if !result.content.is_empty() => rich_tool_result(result),
            Answer::Command(result) => tool_result(result, success),
            Answer::Batch(result) => tool_result(result, success),
            Answer::Pipe(result) => tool_result(result, success),
            // Never built for a caller that takes a tool result: said as a tool error.
            Answer::InputRequired(_) => tool_result(
                &CommandResult::<Value>::failure(CommandError::new(
                    codes::INPUT_REQUIRED,
                    "The call needs the client's input, which this surface cannot ask for",
                )),
                false,
            ),
            Answer::Protocol(error) => tool_result(
                &CommandResult::<Value>::failure(CommandError::new(
                    codes::VALIDATION_ERROR,
                    error.message.to_string(),
                )),
                false,
            ),
        }
    }

    /// The JSON of [`into_tool_result`](Answer::into_tool_result)'s structured content,
    /// written once (rmcp's path builds a `Value` of it, then writes it twice).
    pub(in crate::mcp) fn to_json(&self) -> String {
        let json = match self {
            Answer::Command(result) => serde_json::to_string(result),
            Answer::Batch(result) => serde_json::to_string(result),
            Answer::Pipe(result) => serde_json::to_string(result),
            Answer::InputRequired(result) => serde_json::to_string(result),
            Answer::Protocol(error) => serde_json::to_string(error),
        };
        json.unwrap_or_else(|error| serialization_failure(&error).to_string())
    }
}

/// The result as `structuredContent` and as JSON text, with `isError` on failure.
fn tool_result<T: Serialize>(result: &T, success: bool) -> CallToolResult {
    let value = serde_json::to_value(result).unwrap_or_else(|error| serialization_failure(&error));
    if success {
        CallToolResult::structured(value)
    } else {
        CallToolResult::structured_error(value)
    }
}

/// A result with content blocks: the blocks, then (where there is data, or an error) the
/// rest of the result as `structuredContent` and as JSON text. A success made only of
/// content is its blocks alone.
fn rich_tool_result(result: &CommandResult<Value>) -> CallToolResult {
    let mut content = serde_json::to_value(&result.content).unwrap_or_else(|_| json!([]));
    let has_data = result.data.as_ref().is_some_and(|data| !data.is_null());
    let mut structured = None;
    if has_data || !result.success {
        let envelope = CommandResult {
            content: Vec::new(),
            ..result.clone()
        };
        let value =
            serde_json::to_value(&envelope).unwrap_or_else(|error| serialization_failure(&error));
        if let Some(blocks) = content.as_array_mut() {
            blocks.push(json!({"type": "text", "text": value.to_string()}));
        }
        structured = Some(value);
    }
    let blocks = match serde_json::from_value(content) {
        Ok(blocks) => blocks,
        Err(error) => return CallToolResult::structured_error(serialization_failure(&error)),
    };
    let mut answer = if result.success {
        CallToolResult::success(blocks)
    } else {
        CallToolResult::error(blocks)
    };
    answer.structured_content = structured;
    answer
}

/// The structured content of a result that could not be serialised.
fn serialization_failure(error: &serde_json::Error) -> Value {
    json!({"success": false, "error": {"code": codes::INTERNAL_ERROR, "message": error.to_string()}})
}

/// `SHUTTING_DOWN`: a call that arrived once the drain had begun.
fn shutting_down() -> CommandError {
    CommandError::new(
        codes::SHUTTING_DOWN,
        "The server is shutting down and takes no new calls; this one did not run",
    )
    .with_suggestion(
        "Retry the call: a new connection reaches another replica, or this server once it restarts.",
    )
    .with_retryable(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::content::{Content, ResourceContents};

    fn wire(answer: Answer) -> Value {
        serde_json::to_value(answer.into_tool_result()).unwrap()
    }

    #[test]
    fn a_content_only_success_is_its_blocks_without_structured_content() {
        let result = CommandResult::<Value>::content_only([
            Content::text("Here:"),
            Content::image([1u8, 2, 3], "image/png"),
            Content::resource(
                ResourceContents::text("test://a", "hi").with_mime_type("text/plain"),
            ),
            Content::resource_link("test://b", "b"),
        ]);
        assert_eq!(
            wire(Answer::Command(result)),
            json!({
                "content": [
                    {"type": "text", "text": "Here:"},
                    {"type": "image", "data": "AQID", "mimeType": "image/png"},
                    {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hi"}},
                    {"type": "resource_link", "uri": "test://b", "name": "b"}
                ],
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn data_beside_content_is_structured_and_written_after_the_blocks() {
        let result = CommandResult::success(json!({"rows": 2}))
            .with_content(Content::audio([0u8], "audio/wav"));
        let wire = wire(Answer::Command(result));
        assert_eq!(
            wire["structuredContent"],
            json!({"success": true, "data": {"rows": 2}})
        );
        assert_eq!(wire["content"][0]["type"], "audio");
        assert_eq!(
            wire["content"][1],
            json!({"type": "text", "text": r#"{"success":true,"data":{"rows":2}}"#})
        );
        assert_eq!(wire["isError"], false);
    }

    #[test]
    fn data_only_results_keep_their_shape() {
        let wire = wire(Answer::Command(CommandResult::success(json!(1))));
        assert_eq!(
            wire,
            json!({
                "content": [{"type": "text", "text": r#"{"success":true,"data":1}"#}],
                "structuredContent": {"success": true, "data": 1},
                "isError": false,
                "resultType": "complete"
            })
        );
    }

    #[test]
    fn a_failure_with_content_stays_an_error_with_its_structured_error() {
        let mut result = CommandResult::<Value>::failure(CommandError::new("NOT_FOUND", "gone"));
        result.content.push(Content::text("partial log"));
        let wire = wire(Answer::Command(result));
        assert_eq!(wire["isError"], true);
        assert_eq!(wire["structuredContent"]["error"]["code"], "NOT_FOUND");
        assert_eq!(
            wire["content"][0],
            json!({"type": "text", "text": "partial log"})
        );
    }
}
