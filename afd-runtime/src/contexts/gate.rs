//! The rules that decide what a session may call: its active context must hold the command
//! (universal commands are always allowed; the server's no-context policy applies outside
//! every context), and a read-only scope refuses every mutation. [`Host`] is what the rules
//! read of the dispatcher that enforces them.

use std::sync::Arc;

use serde_json::json;

use super::suggest::{self, ContextHint};
use super::{NoContextPolicy, Scope, SessionState, SessionStoreError, Sessions};
use crate::command::CommandDef;
use crate::error::{CommandError, codes};
use crate::registry::{CommandEntry, Exposed, Registry, is_op};
use crate::similarity::find_similar;

/// What the context rules read of the dispatcher that enforces them: its catalog, which
/// of its commands it exposes, and its sessions.
#[derive(Clone, Copy)]
pub(crate) struct Host<'a> {
    /// The catalog.
    pub(crate) registry: &'a Registry,
    /// The commands the dispatcher exposes.
    pub(crate) exposed: &'a Exposed,
    /// The sessions that hold each agent's context stack.
    pub(crate) sessions: &'a Sessions,
    /// Whether the dispatcher is one caller's view ([`Dispatcher::for_scopes`]): then only
    /// the exposed commands lend their names and words to hints.
    ///
    /// [`Dispatcher::for_scopes`]: crate::Dispatcher::for_scopes
    pub(crate) view: bool,
    /// The subject of the caller, where it carries a token: sessions are bound to it.
    pub(crate) subject: Option<&'a str>,
}

impl Host<'_> {
    /// The exposed commands, in name order.
    pub(crate) fn exposed_entries(&self) -> impl Iterator<Item = &CommandEntry> + '_ {
        self.exposed.entries(self.registry)
    }

    /// Whether `def` may lend its name and words to context hints: any command, unless this
    /// is a caller's view, where only those it may see.
    fn lends(&self, def: &CommandDef) -> bool {
        !self.view || self.exposed.contains(def.name())
    }

    /// Whether the command named `name` (canonical name) may be called here.
    pub(crate) fn is_exposed(&self, name: &str) -> bool {
        self.exposed.contains(name)
    }

    /// afd-context-suggest: the contexts that fit an intent, best first.
    pub(crate) fn suggest_contexts(&self, intent: &str, limit: usize) -> Vec<ContextHint> {
        suggest::suggest(
            self.registry,
            &|def| self.lends(def),
            intent,
            limit.clamp(1, 20),
        )
    }

    /// A session's state, or `SESSION_NOT_FOUND` (`SESSION_STORE_UNAVAILABLE` when the
    /// store cannot be read); `None` without a session.
    pub(crate) async fn session_view(
        &self,
        session: Option<&str>,
    ) -> Result<Option<Arc<SessionState>>, CommandError> {
        let Some(handle) = session else {
            return Ok(None);
        };
        let state = self
            .sessions
            .get(handle)
            .await
            .map_err(store_unavailable)?
            .ok_or_else(|| self.session_not_found(handle))?;
        let Some(subject) = self.subject else {
            return Ok(Some(state));
        };
        match state.owner() {
            Some(owner) if owner == subject => Ok(Some(state)),
            // Another subject's session is answered as one that does not exist.
            Some(_) => Err(self.session_not_found(handle)),
            // Bound to the first subject that uses it (its handle is unguessable and known
            // to no one else before).
            None => {
                let claimed = self
                    .sessions
                    .update(handle, |state| state.claim(subject).then(|| state.clone()))
                    .await
                    .map_err(store_unavailable)?;
                match claimed {
                    Some(Some(state)) => Ok(Some(Arc::new(state))),
                    _ => Err(self.session_not_found(handle)),
                }
            }
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
    /// `SESSION_NOT_FOUND`, `SESSION_STORE_UNAVAILABLE` (the call is refused rather than
    /// run outside the session's context), `CONTEXT_MISMATCH` (naming the contexts to
    /// enter) or `FORBIDDEN` (a mutation in a read-only scope).
    pub(crate) async fn check(
        &self,
        session: Option<&str>,
        def: &CommandDef,
    ) -> Result<(), CommandError> {
        if self.registry.contexts().is_empty() || is_op(def) {
            return Ok(());
        }
        let state = self.session_view(session).await?;
        self.gate(state.as_deref(), def)
    }

    fn gate(&self, state: Option<&SessionState>, def: &CommandDef) -> Result<(), CommandError> {
        let tree = self.registry.contexts();
        if tree.is_empty() || is_op(def) {
            return Ok(());
        }
        let active = state.and_then(SessionState::active);
        let Some(frame) = active else {
            return match self.sessions.config().policy() {
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
        let contexts = self.registry.contexts().contexts_allowing(def);
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
    pub(crate) async fn context_hint(
        &self,
        name: &str,
        session: Option<&str>,
    ) -> Option<ContextHint> {
        let state = self.session_view(session).await.ok().flatten();
        let active = state.as_deref().and_then(SessionState::active_context);
        suggest::hint_for_name(self.registry, &|def| self.lends(def), name, active)
    }

    /// `SESSION_NOT_FOUND` for a handle the sessions do not know.
    pub(crate) fn session_not_found(&self, handle: &str) -> CommandError {
        let idle = humantime::format_duration(self.sessions.config().get_idle_timeout());
        CommandError::new(
        codes::SESSION_NOT_FOUND,
        format!("No session '{handle}': it is unknown, or expired after {idle} without use"),
    )
    .with_suggestion(
        "Start over: call afd-context-enter without `session` to get a new handle, then pass it as `session`.",
    )
    .with_retryable(false)
    }

    /// `CONTEXT_NOT_FOUND` for an undeclared context, with the closest names and a hint.
    pub(crate) fn context_not_found(&self, name: &str) -> CommandError {
        let tree = self.registry.contexts();
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
        let hint = self.suggest_contexts(name, 1).into_iter().next();
        error = error.with_details(json!({"suggestions": similar, "contextHint": hint}));
        error
    }
}

/// `SESSION_STORE_UNAVAILABLE`: the store that holds sessions could not answer, so the call
/// did not run.
pub(crate) fn store_unavailable(error: SessionStoreError) -> CommandError {
    tracing::warn!(%error, "session store unavailable; refusing the call");
    crate::metrics::store_error(crate::metrics::Store::Sessions);
    CommandError::new(
        codes::SESSION_STORE_UNAVAILABLE,
        "The session store cannot be reached, so the session's context and scope are unknown; the call did not run",
    )
    .with_suggestion(
        "Retry in a few seconds with the same session handle: the session is kept and the server reconnects by itself.",
    )
    .with_retryable(true)
    .with_details(json!({"cause": error.message()}))
}
