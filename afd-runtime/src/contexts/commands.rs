//! What the context operations do (afd-context-list, afd-context-enter,
//! afd-context-exit, afd-context-suggest; their catalog entries are in the registry), and
//! the in-process API behind them: default contexts and activated commands.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::gate::{Host, store_unavailable};
use super::{Frame, Scope, SessionState};
use crate::command::CommandDef;
use crate::error::{CommandError, codes};
use crate::registry::{ENTER, EXIT, EnterInput, ExitInput, LIST, ListInput, SUGGEST, SuggestInput};
use crate::result::CommandResult;

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

/// Runs the context operation `def` (one of the registry's context operations) for a call
/// whose transport session is `session`: the input's own `session` wins.
pub(crate) async fn run(
    host: Host<'_>,
    def: &CommandDef,
    input: Value,
    session: Option<&str>,
) -> CommandResult<Value> {
    let name = def.name();
    if std::ptr::eq(def, &LIST) {
        match decode::<ListInput>(name, input) {
            Ok(input) => into_result(
                host.list_contexts(input.session.as_deref().or(session))
                    .await,
            ),
            Err(failure) => failure,
        }
    } else if std::ptr::eq(def, &ENTER) {
        match decode::<EnterInput>(name, input) {
            Ok(input) => {
                let session = input.session.as_deref().or(session);
                into_result(
                    host.enter_context(session, &input.context, input.scope)
                        .await,
                )
            }
            Err(failure) => failure,
        }
    } else if std::ptr::eq(def, &EXIT) {
        match decode::<ExitInput>(name, input) {
            Ok(input) => into_result(
                host.exit_context(input.session.as_deref().or(session))
                    .await,
            ),
            Err(failure) => failure,
        }
    } else if std::ptr::eq(def, &SUGGEST) {
        match decode::<SuggestInput>(name, input) {
            Ok(input) => suggest(host, input, session).await,
            Err(failure) => failure,
        }
    } else {
        CommandResult::failure(CommandError::internal(format!(
            "'{name}' is not a context operation"
        )))
    }
}

fn decode<I: serde::de::DeserializeOwned>(
    name: &str,
    input: Value,
) -> Result<I, CommandResult<Value>> {
    crate::validate::deserialize_input(name, input).map_err(CommandResult::failure)
}

async fn suggest(
    host: Host<'_>,
    input: SuggestInput,
    session: Option<&str>,
) -> CommandResult<Value> {
    let session = input.session.as_deref().or(session);
    let active = host
        .session_view(session)
        .await
        .ok()
        .flatten()
        .and_then(|state| state.active_context().map(str::to_owned));
    let suggestions = host.suggest_contexts(&input.intent, input.limit.unwrap_or(3));
    let reasoning = match suggestions.first() {
        Some(best) if Some(&best.suggested_context) == active.as_ref() => format!(
            "'{}' fits best ({}), and the session is already in it",
            best.suggested_context, best.reason
        ),
        Some(best) => format!(
            "'{}' fits best ({}); enter it with afd-context-enter",
            best.suggested_context, best.reason
        ),
        None => "No context matches these words; afd-context-list shows them all".to_owned(),
    };
    let confidence = suggestions.first().map_or(0.0, |best| best.confidence);
    CommandResult::success(json!({ "suggestions": suggestions }))
        .with_reasoning(reasoning)
        .with_confidence(confidence)
}

fn into_result(outcome: Result<(Value, String), CommandError>) -> CommandResult<Value> {
    match outcome {
        Ok((data, reasoning)) => CommandResult::success(data)
            .with_reasoning(reasoning)
            .with_confidence(1.0),
        Err(error) => CommandResult::failure(error),
    }
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

impl Host<'_> {
    /// Sets (or clears) the default context of a session: the host's choice, for example
    /// from the UI state (the editor open: `document-editing`). It lies under
    /// the contexts the agent enters; afd-context-exit never leaves it.
    ///
    /// # Errors
    ///
    /// `CONTEXT_NOT_FOUND` for an undeclared context, `SESSION_NOT_FOUND` for an unknown
    /// session.
    pub(crate) async fn set_default_context(
        &self,
        session: &str,
        context: Option<&str>,
        scope: Scope,
    ) -> Result<(), CommandError> {
        let frame = match context {
            Some(name) => {
                let def = self
                    .registry
                    .contexts()
                    .get(name)
                    .ok_or_else(|| self.context_not_found(name))?;
                let scope = if self.registry.contexts().is_read_only(def.name()) {
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
        self.sessions
            .update(session, |state| state.set_base(frame.clone()))
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(session))
    }

    /// afd-context-list: every declared context, and where the session stands.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` for an unknown session.
    pub(crate) async fn list_contexts(
        &self,
        session: Option<&str>,
    ) -> Result<(Value, String), CommandError> {
        let state = self.session_view(session).await?;
        let active = state.as_deref().and_then(SessionState::active_context);
        let tree = self.registry.contexts();
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
    pub(crate) async fn enter_context(
        &self,
        session: Option<&str>,
        context: &str,
        scope: Option<Scope>,
    ) -> Result<(Value, String), CommandError> {
        let tree = self.registry.contexts();
        let def = tree
            .get(context)
            .ok_or_else(|| self.context_not_found(context))?;
        let forced = tree.is_read_only(def.name());
        let scope = if forced {
            Scope::ReadOnly
        } else {
            scope.unwrap_or_default()
        };
        let handle = match session {
            Some(handle) => {
                // The caller must own the session it names.
                self.session_view(Some(handle)).await?;
                handle.to_owned()
            }
            None => self.sessions.create().await.map_err(store_unavailable)?,
        };
        let subject = self.subject;
        let max_depth = self.sessions.config().get_max_depth();
        let frame = Frame {
            context: def.name().to_owned(),
            scope,
        };
        let (previous, pushed, state) = self
            .sessions
            .update(&handle, |state| {
                if let Some(subject) = subject {
                    state.claim(subject);
                }
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
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(&handle))?;
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
    pub(crate) async fn exit_context(
        &self,
        session: Option<&str>,
    ) -> Result<(Value, String), CommandError> {
        let Some(handle) = session else {
            return Err(CommandError::new(
                codes::SESSION_NOT_FOUND,
                "There is no session to exit a context from",
            )
            .with_suggestion(
                "Pass the `session` handle afd-context-enter returned; without one no context was entered.",
            ));
        };
        // The caller must own the session it names.
        self.session_view(Some(handle)).await?;
        let (exited, state) = self
            .sessions
            .update(handle, |state| (state.pop(), state.clone()))
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(handle))?;
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

    /// Activates commands for a session: they are listed as tools, with full
    /// schemas, from the session's next `tools/list` where the server follows the session.
    /// Only commands the session may call are activated; the oldest activations make room
    /// beyond the bound. Returns the activated names and those evicted.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` without a session or for an unknown one.
    pub(crate) async fn activate(
        &self,
        session: Option<&str>,
        names: &[&str],
    ) -> Result<(Vec<String>, Vec<String>), CommandError> {
        let handle = require_session(session, "activate commands")?;
        let state = self.session_view(Some(handle)).await?;
        let callable: Vec<&str> = names
            .iter()
            .filter_map(|name| self.registry.get(name))
            .filter(|entry| {
                self.is_exposed(entry.name()) && self.allows(state.as_deref(), entry.def())
            })
            .map(|entry| entry.name())
            .collect();
        let max = self.sessions.config().get_max_activated();
        let evicted = self
            .sessions
            .update(handle, |state| state.activate(&callable, max))
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(handle))?;
        Ok((callable.iter().map(|n| (*n).to_owned()).collect(), evicted))
    }

    /// Undoes activations: `names`, or every one when `None`. Returns those that were
    /// active.
    ///
    /// # Errors
    ///
    /// `SESSION_NOT_FOUND` without a session or for an unknown one.
    pub(crate) async fn deactivate(
        &self,
        session: Option<&str>,
        names: Option<&[&str]>,
    ) -> Result<Vec<String>, CommandError> {
        let handle = require_session(session, "deactivate commands")?;
        self.session_view(Some(handle)).await?;
        let canonical: Option<Vec<&str>> = names.map(|names| {
            names
                .iter()
                .map(|name| self.registry.get(name).map_or(*name, |e| e.name()))
                .collect()
        });
        self.sessions
            .update(handle, |state| state.deactivate(canonical.as_deref()))
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(handle))
    }
}
