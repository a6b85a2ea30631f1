//! The context operations: afd-context-list, afd-context-enter, afd-context-exit and
//! afd-context-suggest, as built-in commands of any registry that declares a context, and
//! the in-process API behind them and behind enforcement ([`Dispatcher::check_context`]).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::suggest::{self, ContextHint};
use super::{Frame, NoContextPolicy, Scope, SessionState, Sessions};
use crate::command::{CommandDef, HandlerFuture, SourceLocation};
use crate::context::CommandContext;
use crate::dispatch::Dispatcher;
use crate::error::{CommandError, codes};
use crate::glue::input_schema;
use crate::result::CommandResult;
use crate::similarity::find_similar;

/// The category of the context operations.
pub const CATEGORY: &str = "context";

const fn here(line: u32) -> SourceLocation {
    SourceLocation {
        file: file!(),
        line,
        column: 1,
        module_path: module_path!(),
    }
}

/// afd-context-list.
pub static LIST: CommandDef = CommandDef::new(
    "afd-context-list",
    "List the contexts that scope which commands may be called, with the active one. Enter one with afd-context-enter.",
    list_handler,
    input_schema::<ListInput>,
    here(line!()),
)
.with_category(CATEGORY)
.with_execution_time(crate::ExecutionTime::Instant);

/// afd-context-enter.
pub static ENTER: CommandDef = CommandDef::new(
    "afd-context-enter",
    "Enter a context: its commands become callable for this session, and afd-context-exit returns to the previous one. Returns the session handle to pass as `session` where the transport keeps no session.",
    enter_handler,
    input_schema::<EnterInput>,
    here(line!()),
)
.with_category(CATEGORY)
.with_errors(&[codes::CONTEXT_NOT_FOUND, codes::SESSION_NOT_FOUND])
.with_execution_time(crate::ExecutionTime::Instant);

/// afd-context-exit.
pub static EXIT: CommandDef = CommandDef::new(
    "afd-context-exit",
    "Leave the active context and return to the one entered before it.",
    exit_handler,
    input_schema::<ExitInput>,
    here(line!()),
)
.with_category(CATEGORY)
.with_errors(&[codes::SESSION_NOT_FOUND])
.with_execution_time(crate::ExecutionTime::Instant);

/// afd-context-suggest.
pub static SUGGEST: CommandDef = CommandDef::new(
    "afd-context-suggest",
    "Suggest the contexts that fit an intent, ranked by trigger keywords and by the names and descriptions of their commands.",
    suggest_handler,
    input_schema::<SuggestInput>,
    here(line!()),
)
.with_category(CATEGORY)
.with_execution_time(crate::ExecutionTime::Instant);

/// The four context operations, added to every registry that declares a context.
pub static CONTEXT_OPS: [&CommandDef; 4] = [&LIST, &ENTER, &EXIT, &SUGGEST];

/// Whether `def` is one of the context operations.
pub(crate) fn is_op(def: &CommandDef) -> bool {
    CONTEXT_OPS.iter().any(|op| std::ptr::eq(*op, def))
}

/// The input of afd-context-list.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListInput {
    /// The session handle (optional where the transport keeps a session).
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-enter.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterInput {
    /// The context to enter.
    #[schemars(length(min = 1))]
    pub context: String,
    /// `read-only` to refuse every mutation while in it (default `full`; a read-only
    /// context is always read-only).
    #[serde(default)]
    pub scope: Option<Scope>,
    /// The session handle; omit it to use the transport's session or to start a new one.
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-exit.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitInput {
    /// The session handle (optional where the transport keeps a session).
    #[serde(default)]
    pub session: Option<String>,
}

/// The input of afd-context-suggest.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestInput {
    /// What the agent means to do, in words.
    #[schemars(length(min = 1, max = 2000))]
    pub intent: String,
    /// Most suggestions (default 3).
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    pub limit: Option<usize>,
    /// The session handle (optional).
    #[serde(default)]
    pub session: Option<String>,
}

/// A declared context, as afd-context-list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// The context it is nested in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Higher is suggested first.
    pub priority: u16,
    /// Whether entering it makes the session read-only.
    pub read_only: bool,
    /// Commands that name it (its parent's are callable in it too).
    pub commands: usize,
    /// Whether it is the session's active context.
    pub active: bool,
}

/// Where a session stands: its handle, active context, scope and stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// The session handle, when there is a session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The active context (none: the server's no-context policy applies).
    pub active: Option<String>,
    /// The scope in force.
    pub scope: Scope,
    /// The entered contexts, oldest first, under which lies the default context if any.
    pub stack: Vec<String>,
    /// The default context the host set for the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_context: Option<String>,
}

impl SessionStatus {
    fn of(session: Option<&str>, state: Option<&SessionState>) -> Self {
        SessionStatus {
            session: session.map(str::to_owned),
            active: state.and_then(|s| s.active_context()).map(str::to_owned),
            scope: state.map_or(Scope::Full, SessionState::scope),
            stack: state.map_or_else(Vec::new, |s| {
                s.stack().iter().map(|f| f.context.clone()).collect()
            }),
            default_context: state
                .and_then(SessionState::default_context)
                .map(|f| f.context.clone()),
        }
    }
}

/// Most command names afd-context-enter lists.
const MAX_LISTED: usize = 50;

/// The private binding through which the built-in handlers reach their dispatcher.
#[derive(Clone)]
pub(crate) struct OpsBinding(pub(crate) Dispatcher);

fn binding(ctx: &CommandContext) -> Result<&Dispatcher, CommandError> {
    ctx.try_state::<OpsBinding>()
        .map(|binding| &binding.0)
        .ok_or_else(|| {
            CommandError::internal(
                "context operations run through a Dispatcher, not Registry::call",
            )
        })
}

fn run<I: serde::de::DeserializeOwned + Send + 'static>(
    name: &'static str,
    input: Value,
    ctx: CommandContext,
    op: fn(&Dispatcher, I, Option<&str>) -> CommandResult<Value>,
) -> HandlerFuture {
    Box::pin(async move {
        let input: I = match crate::validate::deserialize_input(name, input) {
            Ok(input) => input,
            Err(error) => return CommandResult::failure(error),
        };
        match binding(&ctx) {
            Ok(dispatcher) => op(dispatcher, input, ctx.session()),
            Err(error) => CommandResult::failure(error),
        }
    })
}

fn list_handler(input: Value, ctx: CommandContext) -> HandlerFuture {
    run(LIST.name(), input, ctx, |d, input: ListInput, session| {
        let session = input.session.as_deref().or(session);
        into_result(d.list_contexts(session))
    })
}

fn enter_handler(input: Value, ctx: CommandContext) -> HandlerFuture {
    run(ENTER.name(), input, ctx, |d, input: EnterInput, session| {
        let session = input.session.as_deref().or(session);
        into_result(d.enter_context(session, &input.context, input.scope))
    })
}

fn exit_handler(input: Value, ctx: CommandContext) -> HandlerFuture {
    run(EXIT.name(), input, ctx, |d, input: ExitInput, session| {
        let session = input.session.as_deref().or(session);
        into_result(d.exit_context(session))
    })
}

fn suggest_handler(input: Value, ctx: CommandContext) -> HandlerFuture {
    run(
        SUGGEST.name(),
        input,
        ctx,
        |d, input: SuggestInput, session| {
            let session = input.session.as_deref().or(session);
            let active = d
                .session_view(session)
                .ok()
                .flatten()
                .and_then(|state| state.active_context().map(str::to_owned));
            let suggestions = d.suggest_contexts(&input.intent, input.limit.unwrap_or(3));
            let reasoning = match suggestions.first() {
                Some(best) if Some(&best.suggested_context) == active.as_ref() => format!(
                    "'{}' fits best ({}), and the session is already in it",
                    best.suggested_context, best.reason
                ),
                Some(best) => format!(
                    "'{}' fits best ({}); enter it with afd-context-enter",
                    best.suggested_context, best.reason
                ),
                None => {
                    "No context matches these words; afd-context-list shows them all".to_owned()
                }
            };
            let confidence = suggestions.first().map_or(0.0, |best| best.confidence);
            CommandResult::success(json!({ "suggestions": suggestions }))
                .with_reasoning(reasoning)
                .with_confidence(confidence)
        },
    )
}

fn into_result(outcome: Result<(Value, String), CommandError>) -> CommandResult<Value> {
    match outcome {
        Ok((data, reasoning)) => CommandResult::success(data)
            .with_reasoning(reasoning)
            .with_confidence(1.0),
        Err(error) => CommandResult::failure(error),
    }
}

fn session_not_found(handle: &str, sessions: &Sessions) -> CommandError {
    let idle = humantime::format_duration(sessions.config().get_idle_timeout());
    CommandError::new(
        codes::SESSION_NOT_FOUND,
        format!("No session '{handle}': it is unknown, or expired after {idle} without use"),
    )
    .with_suggestion(
        "Start over: call afd-context-enter without `session` to get a new handle, then pass it as `session`.",
    )
    .with_retryable(false)
}

fn require_session<'a>(session: Option<&'a str>, what: &str) -> Result<&'a str, CommandError> {
    session.ok_or_else(|| {
        CommandError::new(
            codes::SESSION_NOT_FOUND,
            format!("A session is needed to {what}"),
        )
        .with_suggestion(
            "Pass the `session` handle afd-context-enter returned (on stdio the connection is the session).",
        )
    })
}

fn context_not_found(d: &Dispatcher, name: &str) -> CommandError {
    let tree = d.registry().contexts();
    let similar = find_similar(name, tree.iter().map(|c| c.name()), 3);
    let suggestion = match similar.first() {
        Some(close) => format!("Did you mean '{close}'? afd-context-list shows every context."),
        None => "afd-context-list shows every context.".to_owned(),
    };
    let mut error = CommandError::new(
        codes::CONTEXT_NOT_FOUND,
        format!("No context named '{name}'"),
    )
    .with_suggestion(suggestion)
    .with_retryable(false);
    let hint = d.suggest_contexts(name, 1).into_iter().next();
    error = error.with_details(json!({"suggestions": similar, "contextHint": hint}));
    error
}

impl Dispatcher {
    /// The dispatcher's sessions.
    pub fn sessions(&self) -> &Sessions {
        self.session_store()
    }

    /// Starts a session and returns its handle.
    pub fn open_session(&self) -> String {
        self.sessions().create()
    }

    /// The state of a session, if it exists.
    pub fn session(&self, handle: &str) -> Option<Arc<SessionState>> {
        self.sessions().get(handle)
    }

    /// Sets (or clears) the default context of a session: the host's choice, as seed 003's
    /// "default context from UI state" (the editor open: `document-editing`). It lies under
    /// the contexts the agent enters; afd-context-exit never leaves it.
    ///
    /// # Errors
    ///
    /// `CONTEXT_NOT_FOUND` for an undeclared context, `SESSION_NOT_FOUND` for an unknown
    /// session.
    pub fn set_default_context(
        &self,
        session: &str,
        context: Option<&str>,
        scope: Scope,
    ) -> Result<(), CommandError> {
        let frame = match context {
            Some(name) => {
                let def = self
                    .registry()
                    .contexts()
                    .get(name)
                    .ok_or_else(|| context_not_found(self, name))?;
                let scope = if self.registry().contexts().is_read_only(def.name()) {
                    Scope::ReadOnly
                } else {
                    scope
                };
                Some(Frame {
                    context: def.name().to_owned(),
                    scope,
                })
            }
            None => None,
        };
        self.sessions()
            .update(session, |state| state.set_base(frame))
            .ok_or_else(|| session_not_found(session, self.sessions()))
    }

    /// afd-context-list: every declared context, and where the session stands.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` for an unknown session.
    pub fn list_contexts(&self, session: Option<&str>) -> Result<(Value, String), CommandError> {
        let state = self.session_view(session)?;
        let active = state.as_deref().and_then(SessionState::active_context);
        let tree = self.registry().contexts();
        let contexts: Vec<ContextInfo> = tree
            .iter()
            .map(|def| ContextInfo {
                name: def.name().to_owned(),
                description: def.description().to_owned(),
                parent: def.parent().map(str::to_owned),
                priority: def.priority(),
                read_only: def.is_read_only(),
                commands: tree.member_count(def.name()),
                active: Some(def.name()) == active,
            })
            .collect();
        let reasoning = match active {
            Some(active) => format!("{} contexts; '{active}' is active", contexts.len()),
            None => format!("{} contexts; none is active", contexts.len()),
        };
        let status = SessionStatus::of(session, state.as_deref());
        Ok((json!({"contexts": contexts, "status": status}), reasoning))
    }

    /// afd-context-enter: pushes `context` on the session's stack. Without a session, a
    /// new one is started and its handle returned.
    ///
    /// # Errors
    ///
    /// `CONTEXT_NOT_FOUND` (with suggestions and a context hint), `SESSION_NOT_FOUND`, or
    /// `VALIDATION_ERROR` when the stack is full.
    pub fn enter_context(
        &self,
        session: Option<&str>,
        context: &str,
        scope: Option<Scope>,
    ) -> Result<(Value, String), CommandError> {
        let tree = self.registry().contexts();
        let def = tree
            .get(context)
            .ok_or_else(|| context_not_found(self, context))?;
        let forced = tree.is_read_only(def.name());
        let scope = if forced {
            Scope::ReadOnly
        } else {
            scope.unwrap_or_default()
        };
        let handle = match session {
            Some(handle) => handle.to_owned(),
            None => self.sessions().create(),
        };
        let max_depth = self.sessions().config().get_max_depth();
        let frame = Frame {
            context: def.name().to_owned(),
            scope,
        };
        let (previous, pushed, state) = self
            .sessions()
            .update(&handle, |state| {
                let previous = state.active_context().map(str::to_owned);
                let same = state.active() == Some(&frame);
                let pushed = if same {
                    true
                } else if state.stack().len() >= max_depth {
                    false
                } else {
                    state.push(frame.clone());
                    true
                };
                (previous, pushed, state.clone())
            })
            .ok_or_else(|| session_not_found(&handle, self.sessions()))?;
        if !pushed {
            return Err(CommandError::new(
                codes::VALIDATION_ERROR,
                format!("The session is already {max_depth} contexts deep"),
            )
            .with_suggestion("Leave a context with afd-context-exit before entering another."));
        }
        let callable: Vec<&str> = self
            .exposed_entries()
            .filter(|e| !e.def().is_universal() && self.allows(Some(&state), e.def()))
            .map(|e| e.name())
            .collect();
        let listed = &callable[..callable.len().min(MAX_LISTED)];
        let status = SessionStatus::of(Some(&handle), Some(&state));
        let mut reasoning = format!(
            "Entered '{}' ({scope}); {} of its commands are callable",
            def.name(),
            callable.len()
        );
        if forced && scope != Scope::ReadOnly {
            reasoning.push_str("; the context is read-only");
        }
        if session.is_none() {
            reasoning.push_str(&format!(
                ". Pass session: \"{handle}\" with every later call to stay in it"
            ));
        }
        Ok((
            json!({
                "session": handle,
                "context": def.name(),
                "description": def.description(),
                "scope": scope,
                "previous": previous,
                "status": status,
                "commands": listed,
                "moreCommands": callable.len() - listed.len(),
            }),
            reasoning,
        ))
    }

    /// afd-context-exit: pops the session's stack, back to the previous context (or the
    /// default one, or none).
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` for an unknown session, or when there is no session at all.
    pub fn exit_context(&self, session: Option<&str>) -> Result<(Value, String), CommandError> {
        let Some(handle) = session else {
            return Err(CommandError::new(
                codes::SESSION_NOT_FOUND,
                "There is no session to exit a context from",
            )
            .with_suggestion(
                "Pass the `session` handle afd-context-enter returned; without one no context was entered.",
            ));
        };
        let (exited, state) = self
            .sessions()
            .update(handle, |state| (state.pop(), state.clone()))
            .ok_or_else(|| session_not_found(handle, self.sessions()))?;
        let status = SessionStatus::of(Some(handle), Some(&state));
        let reasoning = match (&exited, state.active_context()) {
            (Some(exited), Some(now)) => format!("Left '{}'; back in '{now}'", exited.context),
            (Some(exited), None) => format!("Left '{}'; no context is active", exited.context),
            (None, Some(now)) => {
                format!("No entered context to leave; '{now}' is the session's default")
            }
            (None, None) => "No context was entered; nothing to leave".to_owned(),
        };
        Ok((
            json!({"exited": exited.map(|f| f.context), "status": status}),
            reasoning,
        ))
    }

    /// Activates commands for a session (seed 001): they are listed as tools, with full
    /// schemas, from the session's next `tools/list` where the server follows the session.
    /// Only commands the session may call are activated; the oldest activations make room
    /// beyond the bound. Returns the activated names and those evicted.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` without a session or for an unknown one.
    pub fn activate(
        &self,
        session: Option<&str>,
        names: &[&str],
    ) -> Result<(Vec<String>, Vec<String>), CommandError> {
        let handle = require_session(session, "activate commands")?;
        let state = self.session_view(Some(handle))?;
        let callable: Vec<&str> = names
            .iter()
            .filter_map(|name| self.registry().get(name))
            .filter(|entry| {
                self.is_exposed(entry.name()) && self.allows(state.as_deref(), entry.def())
            })
            .map(|entry| entry.name())
            .collect();
        let max = self.sessions().config().get_max_activated();
        let evicted = self
            .sessions()
            .update(handle, |state| state.activate(&callable, max))
            .ok_or_else(|| session_not_found(handle, self.sessions()))?;
        Ok((callable.iter().map(|n| (*n).to_owned()).collect(), evicted))
    }

    /// Undoes activations: `names`, or every one when `None`. Returns those that were
    /// active.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` without a session or for an unknown one.
    pub fn deactivate(
        &self,
        session: Option<&str>,
        names: Option<&[&str]>,
    ) -> Result<Vec<String>, CommandError> {
        let handle = require_session(session, "deactivate commands")?;
        let canonical: Option<Vec<&str>> = names.map(|names| {
            names
                .iter()
                .map(|name| self.registry().get(name).map_or(*name, |e| e.name()))
                .collect()
        });
        self.sessions()
            .update(handle, |state| state.deactivate(canonical.as_deref()))
            .ok_or_else(|| session_not_found(handle, self.sessions()))
    }

    /// afd-context-suggest: the contexts that fit an intent, best first.
    pub fn suggest_contexts(&self, intent: &str, limit: usize) -> Vec<ContextHint> {
        suggest::suggest(self.registry(), intent, limit.clamp(1, 20))
    }

    /// A session's state, or `SESSION_NOT_FOUND`; `None` without a session.
    pub(crate) fn session_view(
        &self,
        session: Option<&str>,
    ) -> Result<Option<Arc<SessionState>>, CommandError> {
        match session {
            None => Ok(None),
            Some(handle) => self
                .sessions()
                .get(handle)
                .map(Some)
                .ok_or_else(|| session_not_found(handle, self.sessions())),
        }
    }

    /// Whether a session in `state` may call `def` (contexts, scope, policy).
    pub(crate) fn allows(&self, state: Option<&SessionState>, def: &CommandDef) -> bool {
        self.gate(state, def).is_ok()
    }

    /// Checks that the session may call `def`: the active context holds it and the scope
    /// allows it. Context operations are always allowed.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND`, `CONTEXT_MISMATCH` (naming the contexts to enter) or
    /// `FORBIDDEN` (a mutation in a read-only scope).
    pub fn check_context(
        &self,
        session: Option<&str>,
        def: &CommandDef,
    ) -> Result<(), CommandError> {
        if self.registry().contexts().is_empty() || is_op(def) {
            return Ok(());
        }
        let state = self.session_view(session)?;
        self.gate(state.as_deref(), def)
    }

    fn gate(&self, state: Option<&SessionState>, def: &CommandDef) -> Result<(), CommandError> {
        let tree = self.registry().contexts();
        if tree.is_empty() || is_op(def) {
            return Ok(());
        }
        let active = state.and_then(SessionState::active);
        let Some(frame) = active else {
            return match self.sessions().config().policy() {
                NoContextPolicy::Open => Ok(()),
                NoContextPolicy::Lobby if def.is_universal() => Ok(()),
                NoContextPolicy::Lobby => Err(self.mismatch(def, None)),
            };
        };
        if !tree.allows(&frame.context, def) {
            return Err(self.mismatch(def, Some(&frame.context)));
        }
        if def.is_mutation()
            && (frame.scope == Scope::ReadOnly || tree.is_read_only(&frame.context))
        {
            return Err(CommandError::new(
                codes::FORBIDDEN,
                format!(
                    "Command '{}' changes state, and the session is read-only in context '{}'",
                    def.name(),
                    frame.context
                ),
            )
            .with_suggestion(
                "Only commands that change nothing may run here. Leave with afd-context-exit, or enter a context with scope \"full\" if this session may make changes.",
            )
            .with_retryable(false)
            .with_details(json!({
                "activeContext": frame.context,
                "scope": Scope::ReadOnly,
                "mutation": true,
            })));
        }
        Ok(())
    }

    fn mismatch(&self, def: &CommandDef, active: Option<&str>) -> CommandError {
        let contexts = self.registry().contexts().contexts_allowing(def);
        let first = contexts.first().copied().unwrap_or_default();
        let message = match active {
            Some(active) => format!(
                "Command '{}' is not available in context '{active}'",
                def.name()
            ),
            None => format!(
                "Command '{}' is only available inside a context, and none is entered",
                def.name()
            ),
        };
        let back = match active {
            Some(active) => format!("; afd-context-exit returns to '{active}'"),
            None => String::new(),
        };
        let others = if contexts.len() > 1 {
            format!(" (or {})", contexts[1..].join(", "))
        } else {
            String::new()
        };
        CommandError::new(codes::CONTEXT_MISMATCH, message)
            .with_suggestion(format!(
                "Enter '{first}'{others} with afd-context-enter {{context: \"{first}\"}}, then call it again{back}."
            ))
            .with_retryable(false)
            .with_details(json!({
                "command": def.name(),
                "activeContext": active,
                "requiredContexts": contexts,
                "contextHint": {
                    "suggestedContext": first,
                    "confidence": 1.0,
                    "reason": format!("'{}' is in the {first} context", def.name()),
                },
            }))
    }

    /// The context hint for an unknown name, given the session's active context.
    pub(crate) fn context_hint(&self, name: &str, session: Option<&str>) -> Option<ContextHint> {
        let state = self.session_view(session).ok().flatten();
        let active = state.as_deref().and_then(SessionState::active_context);
        suggest::hint_for_name(self.registry(), name, active)
    }
}
