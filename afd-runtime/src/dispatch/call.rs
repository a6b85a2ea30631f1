//! The steps of one call, in order: limits on the input, lookup (with "Did you mean"
//! suggestions and a context hint), exposure, the context gate, validation, cancellation,
//! confirmation by the user where the caller can ask, the middleware stack down to the
//! handler (with its `tracing` events forwarded to a caller that asked for them) (a panic in either is an `INTERNAL_ERROR`), the deprecated-alias warning, usage
//! statistics and timing. [`Registry::call`] runs the same steps with every command
//! exposed and no middleware.

use std::panic::AssertUnwindSafe;
use std::sync::LazyLock;
use std::time::Instant;

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tower::ServiceExt;
use tracing::Instrument as _;

use super::handler::{BARE_STACK, panicked};
use super::{CommandRequest, CommandService, Dispatcher, Limits};
use crate::command::CommandDef;
use crate::command_context::CommandContext;
use crate::error::{CommandError, codes};
use crate::registry::{Exposed, NameKind, Registry, is_op};
use crate::result::CommandResult;
use crate::similarity::find_similar;

impl Registry {
    /// Calls a command in-process, on the same path as the servers (limits, lookup with
    /// "Did you mean" suggestions, validation, the handler with panics caught, cancellation,
    /// timing), with every command exposed and no middleware. Use a [`Dispatcher`] for
    /// exposure rules and middleware.
    ///
    /// Never fails: every problem is a failed [`CommandResult`] with a stable code.
    pub async fn call(
        &self,
        name: &str,
        input: Value,
        ctx: CommandContext,
    ) -> CommandResult<Value> {
        static LIMITS: LazyLock<Limits> = LazyLock::new(Limits::default);
        let route = Route {
            registry: self,
            dispatcher: None,
            limits: &LIMITS,
            stack: &BARE_STACK,
        };
        timed(route, name, input, ctx).await
    }
}

/// A call through `dispatcher`: its exposure, contexts, middleware and usage statistics.
pub(super) async fn call(
    dispatcher: &Dispatcher,
    name: &str,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    let inner = &*dispatcher.inner;
    let route = Route {
        registry: &inner.registry,
        dispatcher: Some(dispatcher),
        limits: &inner.limits,
        stack: &inner.stack,
    };
    timed(route, name, input, ctx).await
}

/// What a call runs through: the catalog, the dispatcher (none for [`Registry::call`]:
/// every command exposed, no contexts, no statistics), the limits and the middleware stack.
#[derive(Clone, Copy)]
struct Route<'a> {
    registry: &'a Registry,
    dispatcher: Option<&'a Dispatcher>,
    limits: &'a Limits,
    stack: &'a CommandService,
}

async fn timed(
    route: Route<'_>,
    name: &str,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    let Route {
        registry,
        dispatcher,
        ..
    } = route;
    let started = Instant::now();
    let session = dispatcher.map(|_| ctx.session().map(str::to_owned));
    let span = command_span(registry, name);
    let mut result = run(route, name, input, ctx).instrument(span.clone()).await;
    if let Some(error) = &result.error {
        crate::telemetry::fail(&span, &error.code);
    }
    if crate::metrics::is_installed() {
        // Under its canonical name, or the one value every unknown name shares.
        let command = registry
            .lookup(name)
            .map_or(crate::metrics::OTHER, |resolved| resolved.entry.name());
        let outcome = match &result.error {
            None if result.success => "success",
            Some(error) => &error.code[..],
            None => "failure",
        };
        crate::metrics::command_call(command, outcome);
    }
    // Every call of a command is recorded under its canonical name (typos are not).
    if let (Some(dispatcher), Some(session)) = (dispatcher, session)
        && let Some(resolved) = registry.lookup(name)
    {
        let session = session.as_deref().unwrap_or_default();
        dispatcher
            .usage()
            .record_now(session, resolved.entry.name(), result.success);
    }
    let metadata = result.metadata_mut();
    if metadata.execution_time_ms.is_none() {
        metadata.execution_time_ms = Some(started.elapsed().as_millis() as u64);
    }
    result
}

/// The span of one command's run, a child of the request's (or of the batch or pipeline
/// that runs it): `execute_tool {command}`. Disabled, and free, when no subscriber takes
/// afd's spans.
fn command_span(registry: &Registry, name: &str) -> tracing::Span {
    if !crate::telemetry::enabled() {
        return tracing::Span::none();
    }
    let command = registry
        .lookup(name)
        .map_or(crate::metrics::OTHER, |resolved| resolved.entry.name());
    tracing::info_span!(
        target: "afd::otel",
        "afd.command",
        otel.name = %format_args!("execute_tool {command}"),
        otel.kind = "internal",
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = command,
        error.type = tracing::field::Empty,
    )
}

async fn run(
    route: Route<'_>,
    name: &str,
    input: Value,
    ctx: CommandContext,
) -> CommandResult<Value> {
    let Route {
        registry,
        dispatcher,
        limits,
        stack,
    } = route;
    if let Err(error) = limits.check_input(&input) {
        return CommandResult::failure(error);
    }
    let mut found = registry.lookup(name);
    if let (Some(resolved), Some(dispatcher)) = (&found, dispatcher)
        && dispatcher.hides(resolved.entry.def())
    {
        // A command this caller's scopes do not cover: named with the scopes it needs
        // where the server exposes it (the caller may ask for them), else unknown.
        if dispatcher.inner.exposed.contains(resolved.entry.name()) {
            return CommandResult::failure(insufficient_scope(dispatcher, resolved.entry.def()));
        }
        found = None;
    }
    let resolved = match found.ok_or_else(|| match dispatcher {
        Some(dispatcher) => dispatcher.not_found(name),
        None => registry.not_found(name),
    }) {
        Ok(resolved) => resolved,
        Err(mut error) => {
            if let Some(dispatcher) = dispatcher
                && let Some(hint) = dispatcher.host().context_hint(name, ctx.session()).await
                && let Some(details) = error.details.as_mut().and_then(Value::as_object_mut)
            {
                details.insert("contextHint".into(), json!(hint));
            }
            return CommandResult::failure(error);
        }
    };
    let entry = resolved.entry;
    let mut host = None;
    if let Some(dispatcher) = dispatcher {
        let exposed = dispatcher.exposed();
        if !exposed.contains(entry.name()) {
            return CommandResult::failure(not_exposed(entry.name(), exposed));
        }
        if let Err(error) = dispatcher.host().check(ctx.session(), entry.def()).await {
            return CommandResult::failure(error);
        }
        if is_op(entry.def()) {
            host = Some(dispatcher.clone());
        }
    }
    let input = if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    };
    if let Err(error) = entry.validate(&input) {
        return CommandResult::failure(error);
    }
    if ctx.is_cancelled() {
        return CommandResult::failure(cancelled(entry.def(), false));
    }
    if super::confirm::wanted(entry.def(), &ctx) {
        // The user may take a while to answer; the caller may cancel meanwhile.
        let confirmed = tokio::select! {
            biased;
            confirmed = super::confirm::confirm(entry.def(), &input, &ctx) => confirmed,
            () = ctx.cancelled() => Err(cancelled(entry.def(), false)),
        };
        if let Err(refusal) = confirmed {
            return CommandResult::failure(refusal);
        }
    }
    let request = CommandRequest {
        def: entry.def(),
        input,
        ctx: ctx.clone(),
        host,
        requested: (resolved.kind != NameKind::Canonical).then(|| name.into()),
        builtin: None,
    };
    // The handler's own panics are caught beneath the stack; this catches a middleware's,
    // so that no call (and no request of a server) ends without an answer.
    let execution = crate::client::scope_tracing(
        ctx.log_sink(),
        AssertUnwindSafe(stack.clone().oneshot(request)).catch_unwind(),
    );
    let mut result = tokio::select! {
        biased;
        outcome = execution => match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(never)) => match never {},
            Err(panic) => panicked(
                entry.name(),
                panic.as_ref(),
                ctx.dev_mode(),
                "the middleware stack panicked",
            ),
        },
        () = ctx.cancelled() => CommandResult::failure(cancelled(entry.def(), true)),
    };
    // A handler that noticed the cancellation and gave up reports it as its own failure;
    // the caller asked to cancel, so the answer is CANCELLED (with the handler's error
    // kept). A handler that finished its work despite the request reports what it did.
    if !result.success
        && ctx.is_cancelled()
        && !result
            .error
            .as_ref()
            .is_some_and(|e| e.is(codes::CANCELLED))
    {
        let handler_error = result
            .error
            .take()
            .and_then(|error| serde_json::to_value(error).ok());
        let mut error = cancelled(entry.def(), true);
        if let (Some(details), Some(handler_error)) = (error.details.as_mut(), handler_error) {
            details["handlerError"] = handler_error;
        }
        result.error = Some(error);
    }
    if resolved.kind == NameKind::DeprecatedAlias {
        result = result.with_warning(
            "DEPRECATED_ALIAS",
            format!(
                "'{name}' is a deprecated name of '{}'; call it by that name",
                entry.name()
            ),
        );
    }
    result
}

fn not_exposed(name: &str, exposed: &Exposed) -> CommandError {
    let similar = find_similar(name, exposed.names(), 1);
    let suggestion = match similar.first() {
        Some(other) => format!(
            "This server does not let agents call '{name}'. '{other}' is callable; use afd-discover to list what is."
        ),
        None => format!(
            "This server does not let agents call '{name}'; use afd-discover to list what is callable."
        ),
    };
    CommandError::new(
        codes::COMMAND_NOT_EXPOSED,
        format!("Command '{name}' is not exposed on this server"),
    )
    .with_suggestion(suggestion)
    .with_retryable(false)
}

/// `INSUFFICIENT_SCOPE` for a call of `def` by a caller whose scopes do not cover it,
/// naming every scope it needs and those missing.
pub(crate) fn insufficient_scope(dispatcher: &Dispatcher, def: &CommandDef) -> CommandError {
    let required = dispatcher.required_scopes(def);
    let missing = match dispatcher.granted_scopes() {
        Some(granted) => granted.missing(&required),
        None => required.clone(),
    };
    let name = def.name();
    CommandError::new(
        codes::INSUFFICIENT_SCOPE,
        format!(
            "Command '{name}' needs the scope{} {}, which the caller's token does not grant",
            if required.len() == 1 { "" } else { "s" },
            required.join(", "),
        ),
    )
    .with_suggestion(format!(
        "Ask the authorization server for a token with scope \"{}\" if this client may have \
         it, or use the commands your scopes cover (afd-discover lists them).",
        required.join(" ")
    ))
    .with_retryable(false)
    .with_details(json!({"requiredScopes": required, "missingScopes": missing}))
}

fn cancelled(def: &CommandDef, started: bool) -> CommandError {
    let name = def.name();
    let (message, suggestion) = match (started, def.is_mutation()) {
        (false, _) => (
            format!("Command '{name}' was cancelled before it started"),
            "Nothing was changed; call it again if it is still wanted.".to_owned(),
        ),
        (true, true) => (
            format!("Command '{name}' was cancelled before it completed"),
            format!(
                "'{name}' changes state and may have applied part of its work: check the state before retrying."
            ),
        ),
        (true, false) => (
            format!("Command '{name}' was cancelled before it completed"),
            "It changes nothing, so it is safe to call again.".to_owned(),
        ),
    };
    CommandError::new(codes::CANCELLED, message)
        .with_suggestion(suggestion)
        .with_details(json!({"started": started, "mutation": def.is_mutation()}))
}
