//! A `tools/call`, whichever way it arrived: [`McpServer::run_tool_call`] is the one path
//! that rmcp's handler and the direct paths all take. It builds the call's context (the
//! server's base context, the request's cancellation, its `afd/session` or else the
//! transport's session, progress reporting, log messages and requests to the client),
//! refuses what the caller cannot call, runs the call (as a task where it is one), and
//! announces a changed session listing.

use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ClientCapabilities, ErrorData, JsonObject, ProgressNotificationParam,
    ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde::Deserialize as _;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::answer::Answer;
use super::asking::Declared;
use super::client::{LevelCell, McpClient, McpLog};
use super::env::SESSION_META;
use super::observe::Request;
use super::progress::Progress;
use super::rounds::{Bound, RoundClient};
use super::state::McpServer;
use super::tasks::TaskClient;
use super::tools::{BATCH, DETAIL, DISCOVER, DOCS, HELP, PIPE, Route, SCHEMA};
use crate::audit::{AuditEvent, Decision};
use crate::client::ClientRequests;
use crate::command::{CommandDef, TaskStart, TaskSupport};
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::metrics;
use crate::result::CommandResult;
use crate::telemetry::{self, Origin};
use crate::tools::meta::{BuiltinOutcome, MetaTools};

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
        // What the call runs, where it names one command (itself, or through afd-call).
        let def = self.command_of(name, &arguments);
        // A command that needs a client capability the caller did not declare does not run.
        let missing = def.and_then(|def| self.missing_capability(def, legacy, peer, input));
        if let Some(answer) = missing {
            return self.refused(audited, codes::CLIENT_CAPABILITY_MISSING, started, answer);
        }
        // A command that runs as a task does so for a client that declared the extension.
        let task_start = match def.map(|def| self.task_plan(def, legacy, peer, input)) {
            None | Some(Ok(None)) => None,
            Some(Ok(Some(start))) => Some(start),
            Some(Err(answer)) => {
                return self.refused(audited, codes::CLIENT_CAPABILITY_MISSING, started, answer);
            }
        };
        // On the stateless revision the handler asks its client through rounds: the
        // request's answers, and its state bound to the request.
        // A client that declared nothing it could be asked, and brought no earlier round,
        // needs none: its handler's questions fail at once, as without a client.
        let rounds = !legacy
            && (input.declared.can_be_asked()
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
        let asks: Option<Arc<dyn ClientRequests>> = match (&round, client) {
            (Some(round), _) => Some(round.clone()),
            // The stateless revision forbids the server's own requests mid-call.
            (None, Some(peer)) if legacy => Some(Arc::new(McpClient::new(peer.clone()))),
            (None, _) => None,
        };
        // In a call that is or may become a task, questions wait in the task once it is one.
        let task = task_start.map(|start| {
            let declared = self.declared(legacy, peer, input).unwrap_or_default();
            let before = (start == TaskStart::Handler)
                .then(|| asks.clone())
                .flatten();
            let task = TaskClient::new(
                self.inner.tasks.clone(),
                declared,
                before,
                name,
                subject.as_deref(),
                token.clone(),
                // A session's client hears of each change of its task.
                client.filter(|_| legacy).cloned(),
            );
            (Arc::new(task), start)
        });
        match (&task, asks) {
            (Some((task, _)), _) => ctx = ctx.with_client(task.clone()),
            (None, Some(asks)) => ctx = ctx.with_client(asks),
            (None, None) => {}
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
        let answer = if let Some((task, start)) = task {
            self.run_as_task(task, start, name, arguments, ctx, &span, &token, &cancel)
                .await
        } else {
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
        let answer = match (round, &bound, answer) {
            (_, _, answer @ Answer::Task(_)) => answer,
            (Some(round), Some(bound), answer) => self.after_round(answer, &round, bound),
            (_, _, answer) => answer,
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
        def: &CommandDef,
        legacy: bool,
        peer: Outbound<'_>,
        input: Input<'_>,
    ) -> Option<Answer> {
        let command = def.name();
        let needs = def.needs_client();
        if needs.is_empty() {
            return None;
        }
        let declared = self.declared(legacy, peer, input)?;
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

    /// The command a call of the tool `name` with `arguments` runs: the tool's own, or the
    /// one afd-call names; `None` for the other built-in tools and unknown names.
    fn command_of(&self, name: &str, arguments: &Value) -> Option<&'static CommandDef> {
        let route = self.inner.routes.get(name);
        let argument = |key: &str| arguments.get(key).and_then(Value::as_str);
        let command = Route::command(route, name, argument)?;
        Some(self.inner.dispatcher.registry().get(command)?.def())
    }

    /// What the caller declared it can do: on the stateless revision its request's
    /// `_meta`, else what its client declared at `initialize`; `None` where that is not
    /// known (a session whose calls the HTTP direct path takes: one that declared neither
    /// sampling, elicitation nor tasks).
    fn declared(&self, legacy: bool, peer: Outbound<'_>, input: Input<'_>) -> Option<Declared> {
        if !legacy {
            return Some(input.declared);
        }
        match peer {
            Outbound::Peer(peer) => Some(Declared::of(
                peer.peer_info()
                    .and_then(|info| serde_json::to_value(&info.capabilities).ok())
                    .as_ref(),
            )),
            Outbound::Held(_) => None,
        }
    }

    /// Whether the call runs as a task, and when it becomes one: `None` for a plain call
    /// (a command without task support, or a client without the extension where the
    /// command allows that).
    ///
    /// # Errors
    ///
    /// The answer to a caller without the extension calling a command that runs only as a
    /// task: -32021 naming the extension on the stateless revision, else a tool error.
    fn task_plan(
        &self,
        def: &CommandDef,
        legacy: bool,
        peer: Outbound<'_>,
        input: Input<'_>,
    ) -> Result<Option<TaskStart>, Answer> {
        let command = def.name();
        let support = def.task_support();
        if support == TaskSupport::Forbidden {
            return Ok(None);
        }
        let declared = self
            .declared(legacy, peer, input)
            .is_some_and(|declared| declared.tasks);
        match (declared, support) {
            (true, _) => Ok(Some(def.task_start())),
            (false, TaskSupport::Required) if !legacy => {
                let mut required = ClientCapabilities::default();
                required.extensions = Some(
                    [(
                        rmcp::model::TASKS_EXTENSION_ID.to_owned(),
                        JsonObject::new(),
                    )]
                    .into_iter()
                    .collect(),
                );
                Err(Answer::Protocol(
                    ErrorData::missing_required_client_capability(required),
                ))
            }
            (false, TaskSupport::Required) => {
                let error = CommandError::new(
                    codes::CLIENT_CAPABILITY_MISSING,
                    format!(
                        "'{command}' runs only as a task, and this client did not declare MCP's tasks extension ({})",
                        rmcp::model::TASKS_EXTENSION_ID
                    ),
                )
                .with_suggestion("Call it from an MCP client that supports tasks.")
                .with_retryable(false);
                Err(Answer::Command(CommandResult::failure(error)))
            }
            (false, _) => Ok(None),
        }
    }

    /// Runs a call that is, or may become, a task: made one at once (`task_start =
    /// "call"`), or when its handler says so; the client is answered with the task and the
    /// handler runs on in the background, its end written to the task's record.
    #[allow(clippy::too_many_arguments)]
    async fn run_as_task(
        &self,
        task: Arc<TaskClient>,
        start: TaskStart,
        name: &str,
        arguments: Value,
        ctx: CommandContext,
        span: &tracing::Span,
        token: &CancellationToken,
        cancel: &CancellationToken,
    ) -> Answer {
        let (promoted, mut promotion) = tokio::sync::oneshot::channel();
        let created = match start {
            TaskStart::Call => match task.start().await {
                Ok((created, _, _)) => Some(created),
                Err(error) => return Answer::Protocol(error),
            },
            TaskStart::Handler => {
                task.offer(promoted);
                None
            }
        };
        let server = self.clone();
        let tool = name.to_owned();
        let mut handle = tokio::spawn(
            async move { server.answer_call(&tool, arguments, ctx).await }.instrument(span.clone()),
        );
        let created = match created {
            Some(created) => created,
            None => {
                // The handler's end, or the task it made of the call.
                let waited = tokio::select! {
                    biased;
                    Ok(created) = &mut promotion => Ok(created),
                    joined = &mut handle => Err(joined),
                    () = cancel.cancelled() => {
                        token.cancel();
                        promotion.close();
                        Err((&mut handle).await)
                    }
                    () = self.inner.drain.aborted() => {
                        token.cancel();
                        promotion.close();
                        Err((&mut handle).await)
                    }
                };
                match waited {
                    Ok(created) => created,
                    Err(Ok(answer)) => return answer,
                    Err(Err(error)) => return joined_failure(error),
                }
            }
        };
        let Some((id, running)) = task.task() else {
            return Answer::Protocol(ErrorData::internal_error("a task without its record", None));
        };
        tokio::spawn(self.inner.tasks.clone().finish(
            id,
            running,
            handle,
            self.inner.drain.clone(),
        ));
        Answer::Task(created)
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

/// The answer of a call whose spawned handler did not return: its panic goes on up to the
/// entrance (which answers it as any panic outside a handler); a runtime shutting down is
/// an internal error.
fn joined_failure(error: tokio::task::JoinError) -> Answer {
    match error.try_into_panic() {
        Ok(panic) => std::panic::resume_unwind(panic),
        Err(_) => Answer::Command(CommandResult::failure(CommandError::internal(
            "the call was stopped with its runtime",
        ))),
    }
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
