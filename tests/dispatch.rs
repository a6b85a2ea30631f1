//! Dispatch: afd-call, afd-batch and afd-pipe semantics, middleware, cancellation and
//! limits. Time-dependent tests run on tokio's paused clock, so they are exact, not timed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use afd_runtime::middleware::{
    ConcurrencyLimitLayer, Next, RateLimitLayer, TelemetryEvent, TelemetryLayer, TimeoutLayer,
    TimingLayer, TraceLayer, from_fn,
};
use afd_runtime::prelude::*;
use afd_runtime::{
    BatchRequest, CommandRequest, Dispatcher, DispatcherError, Limits, PipeRequest, StepStatus,
    Surface,
};

// ---- fixtures ---------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Echo {
    value: Value,
    confidence: Option<f64>,
    warning: Option<String>,
}

/// Return the value given.
#[command(category = "test")]
fn echo(input: Echo) -> CommandResult<Value> {
    let mut result = CommandResult::success(input.value).with_reasoning("echoed");
    if let Some(confidence) = input.confidence {
        result = result.with_confidence(confidence);
    }
    if let Some(warning) = input.warning {
        result = result.with_warning("ECHO_WARNING", warning);
    }
    result
}

#[derive(Deserialize, JsonSchema)]
struct Fail {
    code: Option<String>,
}

/// Always fail.
#[command(category = "test")]
fn fail(input: Fail) -> Result<(), CommandError> {
    Err(CommandError::new(
        input.code.unwrap_or_else(|| "BOOM".into()),
        "failed on purpose",
    ))
}

#[derive(Deserialize, JsonSchema)]
struct Sleep {
    ms: u64,
}

/// Tracks how many sleep calls run at once, and which saw their cancellation.
#[derive(Default)]
struct Probe {
    running: AtomicUsize,
    peak: AtomicUsize,
    cancelled: AtomicUsize,
}

fn probe() -> &'static Probe {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    PROBE.get_or_init(Probe::default)
}

/// Sleep, watching for cancellation.
#[command(category = "test", execution_time = "instant")]
async fn sleep(input: Sleep, ctx: &CommandContext) -> Result<u64, CommandError> {
    let probe = ctx
        .try_state::<Arc<Probe>>()
        .map_or(probe(), |p| p.as_ref());
    let now = probe.running.fetch_add(1, Ordering::SeqCst) + 1;
    probe.peak.fetch_max(now, Ordering::SeqCst);
    // Counts down however the call ends, including when its future is dropped.
    struct Running<'a>(&'a AtomicUsize);
    impl Drop for Running<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    let _running = Running(&probe.running);
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(input.ms)) => Ok(input.ms),
        () = ctx.cancelled() => {
            probe.cancelled.fetch_add(1, Ordering::SeqCst);
            Err(CommandError::new("STOPPED", "stopped"))
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct Optional {
    note: Option<String>,
}

/// Accept an empty input.
#[command(category = "test")]
fn optional(input: Optional) -> String {
    input.note.unwrap_or_else(|| "none".into())
}

/// Only for the host, not for agents.
#[command(category = "test", expose(mcp = false))]
fn internal_only() -> &'static str {
    "secret"
}

#[derive(Deserialize, JsonSchema)]
struct NewUser {
    name: String,
    email: String,
}

/// Create a user.
#[command(mutation)]
fn user_create(input: NewUser) -> Value {
    json!({"id": 42, "name": input.name, "email": input.email, "tags": ["a", "b"]})
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderQuery {
    user_id: u64,
}

/// List a user's orders.
#[command]
fn order_list(input: OrderQuery) -> Value {
    json!({"userId": input.user_id, "orders": [{"id": "o-1", "total": 30}, {"id": "o-2", "total": 70}]})
}

/// Panic.
#[command(category = "test")]
fn explode() -> u8 {
    panic!("kaboom")
}

fn mcp() -> Dispatcher {
    Dispatcher::builder(Registry::global())
        .surface(Surface::Mcp)
        .build()
        .unwrap()
}

fn ctx() -> CommandContext {
    CommandContext::new()
}

fn batch(value: Value) -> BatchRequest {
    BatchRequest::from_value(value).unwrap()
}

fn pipe(value: Value) -> PipeRequest {
    PipeRequest::from_value(value).unwrap()
}

// ---- afd-call -----------------------------------------------------------------------------

#[tokio::test]
async fn call_returns_the_handlers_result_unwrapped() {
    let result = mcp()
        .call("echo", json!({"value": {"a": 1}, "confidence": 0.7}), ctx())
        .await;
    assert_eq!(result.data, Some(json!({"a": 1})));
    assert_eq!(result.reasoning.as_deref(), Some("echoed"));
    assert_eq!(result.confidence, Some(0.7));
    assert!(result.metadata.unwrap().execution_time_ms.is_some());
}

#[tokio::test]
async fn call_reports_unknown_unexposed_and_invalid() {
    let d = mcp();
    let unknown = d.call("ech", json!({}), ctx()).await.error.unwrap();
    assert_eq!(unknown.code, "COMMAND_NOT_FOUND");
    assert_eq!(
        unknown.suggestion.as_deref(),
        Some("Did you mean 'echo'? Use afd-discover to list all commands.")
    );

    let hidden = d
        .call("internal-only", json!({}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(hidden.code, "COMMAND_NOT_EXPOSED");
    assert_eq!(
        hidden.message,
        "Command 'internal-only' is not exposed on this server"
    );
    assert!(!d.is_exposed("internal-only") && d.is_exposed("echo"));

    let invalid = d
        .call("user-create", json!({"name": "Alice"}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(
        invalid.message,
        "Invalid input for 'user-create': Required field 'email' is missing"
    );
    assert_eq!(
        invalid.suggestion.as_deref(),
        Some("Call afd-detail with command 'user-create' to see the expected input schema.")
    );
}

#[tokio::test]
async fn the_exposed_set_can_be_narrowed_and_widened() {
    let only = Dispatcher::builder(Registry::global())
        .expose_only(["echo", "internal-only"])
        .build()
        .unwrap();
    assert!(
        only.call("internal-only", json!({}), ctx()).await.success,
        "listing a command exposes it"
    );
    assert_eq!(
        only.call("optional", json!({}), ctx())
            .await
            .error
            .unwrap()
            .code,
        "COMMAND_NOT_EXPOSED"
    );

    let widened = Dispatcher::builder(Registry::global())
        .surface(Surface::Mcp)
        .expose(["internal-only"])
        .hide(["echo"])
        .build()
        .unwrap();
    assert!(widened.is_exposed("internal-only") && !widened.is_exposed("echo"));

    let error = Dispatcher::builder(Registry::global())
        .expose_only(["ecko"])
        .build()
        .unwrap_err();
    assert_eq!(
        error,
        DispatcherError::UnknownCommand {
            name: "ecko".into(),
            suggestion: Some("echo")
        }
    );
    assert_eq!(
        error.to_string(),
        "cannot expose or hide 'ecko': no such command (did you mean 'echo'?)"
    );
}

#[tokio::test]
async fn limits_reject_oversized_and_deep_input() {
    let d = Dispatcher::builder(Registry::global())
        .limits(Limits::default().with_max_input_bytes(64).with_max_depth(4))
        .build()
        .unwrap();
    let big = d
        .call("echo", json!({"value": "x".repeat(100)}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(big.code, "INPUT_TOO_LARGE");
    let deep = d
        .call("echo", json!({"value": [[[[1]]]]}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(deep.code, "INPUT_TOO_LARGE");
    assert!(d.call("echo", json!({"value": [1]}), ctx()).await.success);
}

#[tokio::test]
async fn a_panic_is_an_internal_error_and_the_dispatcher_keeps_serving() {
    let d = mcp();
    let error = d.call("explode", json!({}), ctx()).await.error.unwrap();
    assert_eq!(error.code, "INTERNAL_ERROR");
    assert!(
        !error.message.contains("kaboom"),
        "the panic message is hidden outside dev mode"
    );
    let dev = d
        .call("explode", json!({}), ctx().with_dev_mode(true))
        .await
        .error
        .unwrap();
    assert!(dev.message.contains("kaboom"));
    assert!(d.call("echo", json!({"value": 1}), ctx()).await.success);
}

// ---- schemas on first use -------------------------------------------------------------------

#[tokio::test]
async fn the_search_index_reads_parameters_without_keeping_the_schemas() {
    // A registry of its own: other tests validate calls, which caches schemas.
    let registry: &'static Registry = Box::leak(Box::new(
        Registry::builder()
            .register_all(
                Registry::global()
                    .commands()
                    .iter()
                    .map(|entry| entry.def()),
            )
            .build()
            .unwrap(),
    ));
    let d = Dispatcher::builder(registry)
        .surface(Surface::Mcp)
        .build()
        .unwrap();
    // "email" is only a parameter name of user-create: the index read its schema.
    let hits = d.search("email", 3);
    assert_eq!(
        hits.first().map(|(entry, _)| entry.name()),
        Some("user-create")
    );
    assert!(
        registry
            .commands()
            .iter()
            .all(|entry| entry.cached_input_schema().is_none()),
        "indexing kept a schema"
    );
    // afd-detail generates the schema once and keeps it; the index then reads that one.
    let detail = d.detail(json!({"command": "user-create"})).await;
    assert!(detail.success);
    let entry = registry.get("user-create").unwrap();
    assert_eq!(
        entry.cached_input_schema().unwrap()["properties"]["email"]["type"],
        "string"
    );
    assert_eq!(
        afd_runtime::search::Document::from_entry(entry),
        afd_runtime::search::Document::from_command(entry.def())
    );
}

// ---- cancellation -------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn cancelling_a_call_ends_it_with_cancelled() {
    let p = Arc::new(Probe::default());
    let d = mcp();
    let call_ctx = ctx().with_state(p.clone());
    let token = call_ctx.cancellation_token().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    });
    let error = d
        .call("sleep", json!({"ms": 60_000}), call_ctx)
        .await
        .error
        .unwrap();
    assert_eq!(error.code, "CANCELLED");
    assert_eq!(
        error.message,
        "Command 'sleep' was cancelled before it completed"
    );
    assert_eq!(
        error.details.unwrap()["handlerError"]["code"],
        "STOPPED",
        "the handler's own account is kept"
    );
    assert_eq!(
        p.cancelled.load(Ordering::SeqCst),
        1,
        "the handler saw the token"
    );

    let before = ctx();
    before.cancellation_token().cancel();
    let error = d
        .call("user-create", json!({"name": "a", "email": "b"}), before)
        .await
        .error
        .unwrap();
    assert_eq!(error.code, "CANCELLED");
    assert_eq!(
        error.message,
        "Command 'user-create' was cancelled before it started"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_mutation_mid_way_never_reports_success() {
    #[derive(Deserialize, JsonSchema)]
    struct Steps {
        n: u32,
    }
    /// Apply n steps, one per millisecond.
    #[command(mutation)]
    async fn apply_steps(input: Steps, ctx: &CommandContext) -> Result<u32, CommandError> {
        for _ in 0..input.n {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let _ = ctx;
        Ok(input.n)
    }
    let call_ctx = ctx();
    let token = call_ctx.cancellation_token().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(5)).await;
        token.cancel();
    });
    let result = mcp().call("apply-steps", json!({"n": 100}), call_ctx).await;
    assert!(!result.success);
    let error = result.error.unwrap();
    assert_eq!(error.code, "CANCELLED");
    assert!(
        error
            .suggestion
            .unwrap()
            .contains("may have applied part of its work")
    );
}

// ---- afd-batch ------------------------------------------------------------------------------

#[tokio::test]
async fn one_failure_never_fails_the_batch() {
    let result = mcp()
        .batch(
            batch(json!({"commands": [
                {"command": "echo", "input": {"value": 1, "confidence": 0.8}},
                {"id": "bad", "command": "fail", "input": {}},
                {"command": "echo", "input": {"value": 3, "warning": "careful"}}
            ]})),
            ctx(),
        )
        .await;
    assert!(result.success);
    assert_eq!(result.summary.total, 3);
    assert_eq!(
        (
            result.summary.success_count,
            result.summary.failure_count,
            result.summary.skipped_count
        ),
        (2, 1, 0)
    );
    let ids: Vec<&str> = result.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["cmd-0", "bad", "cmd-2"]);
    assert_eq!(
        result.results[1].result.error.as_ref().unwrap().code,
        "BOOM"
    );
    assert_eq!(
        result.reasoning,
        "Executed 3 commands: 2 succeeded, 1 failed"
    );
    assert!((result.confidence - ((2.0 / 3.0) * 0.5 + 0.9 * 0.5)).abs() < 1e-9);
    assert_eq!(result.warnings.len(), 1);
    assert_eq!(result.warnings[0].command_id, "cmd-2");
    let json = serde_json::to_value(&result).unwrap();
    for key in [
        "success",
        "results",
        "summary",
        "timing",
        "confidence",
        "reasoning",
        "warnings",
        "metadata",
    ] {
        assert!(json.get(key).is_some(), "{key} missing");
    }
    assert!(json["timing"]["startedAt"].as_str().unwrap().ends_with('Z'));
    assert!(json["results"][0]["durationMs"].is_u64());
}

#[tokio::test]
async fn stop_on_error_skips_the_rest_and_counts_them_as_skipped() {
    let result = mcp()
        .batch(
            batch(json!({"commands": [
                {"command": "echo", "input": {"value": 1}},
                {"id": "x", "command": "fail"},
                {"command": "echo", "input": {"value": 2}},
                {"command": "echo", "input": {"value": 3}}
            ], "options": {"stopOnError": true}})),
            ctx(),
        )
        .await;
    assert_eq!(
        (
            result.summary.success_count,
            result.summary.failure_count,
            result.summary.skipped_count
        ),
        (1, 1, 2)
    );
    for skipped in &result.results[2..] {
        let error = skipped.result.error.as_ref().unwrap();
        assert_eq!(error.code, "COMMAND_SKIPPED");
        assert_eq!(
            error.message,
            "Not run: command 'x' failed and stopOnError is set"
        );
    }
    assert_eq!(
        result.reasoning,
        "Executed 4 commands: 1 succeeded, 1 failed, 2 skipped"
    );
}

#[tokio::test]
async fn a_batch_entry_without_input_defaults_to_an_empty_object() {
    let result = mcp()
        .batch(batch(json!({"commands": [{"command": "optional"}]})), ctx())
        .await;
    assert_eq!(result.results[0].result.data, Some(json!("none")));
}

#[tokio::test]
async fn empty_oversized_and_malformed_batches_are_invalid() {
    let d = Dispatcher::builder(Registry::global())
        .limits(Limits::default().with_max_batch_len(2))
        .build()
        .unwrap();
    let empty = d.batch(batch(json!({"commands": []})), ctx()).await;
    assert!(!empty.success);
    assert_eq!(empty.error.unwrap().code, "INVALID_BATCH_REQUEST");
    let three = json!({"command": "optional"});
    let big = d
        .batch(batch(json!({"commands": [three, three, three]})), ctx())
        .await;
    assert_eq!(
        big.error.unwrap().message,
        "The batch has 3 commands; at most 2 are allowed"
    );
    let malformed = BatchRequest::from_value(json!({"commands": [{"input": {}}]})).unwrap_err();
    assert_eq!(malformed.code, "INVALID_BATCH_REQUEST");
    assert!(
        malformed.message.contains("commands[0]"),
        "{}",
        malformed.message
    );
}

#[tokio::test]
async fn restrictions_hold_inside_a_batch() {
    let result = mcp()
        .batch(
            batch(json!({"commands": [{"command": "internal-only"}]})),
            ctx(),
        )
        .await;
    assert_eq!(
        result.results[0].result.error.as_ref().unwrap().code,
        "COMMAND_NOT_EXPOSED"
    );
}

#[tokio::test(start_paused = true)]
async fn parallelism_runs_commands_at_once_and_keeps_input_order() {
    let p = Arc::new(Probe::default());
    let commands: Vec<Value> = [60, 50, 40, 30, 20, 10]
        .iter()
        .map(|ms| json!({"command": "sleep", "input": {"ms": ms}}))
        .collect();
    let started = tokio::time::Instant::now();
    let result = mcp()
        .batch(
            batch(json!({"commands": commands, "options": {"parallelism": 3}})),
            ctx().with_state(p.clone()),
        )
        .await;
    assert_eq!(
        p.peak.load(Ordering::SeqCst),
        3,
        "at most three ran at once, and three did"
    );
    let data: Vec<Value> = result
        .results
        .iter()
        .map(|r| r.result.data.clone().unwrap())
        .collect();
    assert_eq!(
        data,
        [
            json!(60),
            json!(50),
            json!(40),
            json!(30),
            json!(20),
            json!(10)
        ]
    );
    let indices: Vec<usize> = result.results.iter().map(|r| r.index).collect();
    assert_eq!(indices, [0, 1, 2, 3, 4, 5]);
    // Virtual time: three lanes finish in 80 ms of the paused clock, not 210.
    assert!(
        started.elapsed() < Duration::from_millis(120),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn a_batch_timeout_cancels_what_is_still_running() {
    let p = Arc::new(Probe::default());
    let result = mcp()
        .batch(
            batch(json!({"commands": [
                {"command": "sleep", "input": {"ms": 10}},
                {"command": "sleep", "input": {"ms": 60000}},
                {"command": "sleep", "input": {"ms": 10}}
            ], "options": {"timeoutMs": 100}})),
            ctx().with_state(p.clone()),
        )
        .await;
    assert!(result.results[0].result.success);
    let timed_out = result.results[1].result.error.as_ref().unwrap();
    assert_eq!(timed_out.code, "BATCH_TIMEOUT");
    assert_eq!(result.results[1].command, "sleep");
    assert_eq!(
        result.results[2].result.error.as_ref().unwrap().code,
        "COMMAND_SKIPPED"
    );
    assert_eq!(
        (
            result.summary.success_count,
            result.summary.failure_count,
            result.summary.skipped_count
        ),
        (1, 1, 1)
    );
    tokio::task::yield_now().await;
    assert_eq!(
        p.running.load(Ordering::SeqCst),
        0,
        "the running command was stopped, not left behind"
    );
}

// ---- afd-pipe -------------------------------------------------------------------------------

#[tokio::test]
async fn references_resolve_prev_first_steps_and_input() {
    let result = mcp()
        .pipe(
            pipe(json!({
                "input": {"email": "a@b.c", "nested": {"list": [5, 6]}},
                "steps": [
                    {"command": "user-create", "input": {"name": "Alice", "email": "$input.email"}, "as": "user"},
                    {"command": "order-list", "input": {"userId": "$prev.id"}},
                    {"command": "echo", "input": {"value": {
                        "first": "$first.name",
                        "byIndex": "$steps[1].orders[1].id",
                        "byAlias": "$steps.user.email",
                        "count": "$steps[1].orders.length",
                        "tagCount": "$first.tags.length",
                        "fromInput": "$input.nested.list[1]",
                        "whole": "$input",
                        "literal": "$$5.00"
                    }}}
                ]
            })),
            ctx(),
        )
        .await;
    assert!(result.success, "{result:?}");
    assert_eq!(
        result.data.unwrap(),
        json!({
            "first": "Alice",
            "byIndex": "o-2",
            "byAlias": "a@b.c",
            "count": 2,
            "tagCount": 2,
            "fromInput": 6,
            "whole": {"email": "a@b.c", "nested": {"list": [5, 6]}},
            "literal": "$5.00"
        })
    );
    assert_eq!(result.metadata.completed_steps, 3);
    assert_eq!(result.metadata.total_steps, 3);
    assert_eq!(result.steps[0].alias.as_deref(), Some("user"));
}

#[tokio::test]
async fn an_unresolvable_reference_fails_its_step_naming_it() {
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [
                {"command": "user-create", "input": {"name": "A", "email": "e"}},
                {"command": "order-list", "input": {"userId": "$prev.userId"}},
                {"command": "echo", "input": {"value": 1}}
            ]})),
            ctx(),
        )
        .await;
    assert!(!result.success);
    let error = result.steps[1].error.as_ref().unwrap();
    assert_eq!(error.code, "UNRESOLVED_REFERENCE");
    assert_eq!(
        error.message,
        "Step 1 ('order-list'): reference '$prev.userId' does not resolve: there is no field 'userId'"
    );
    assert_eq!(result.steps[2].status, StepStatus::Skipped);
    assert_eq!(
        result.data,
        Some(json!({"id": 42, "name": "A", "email": "e", "tags": ["a", "b"]}))
    );

    for (reference, reason) in [
        (
            "$prev.tags[5]",
            "index 5 is out of range (length 2) at 'tags'",
        ),
        (
            "$prev.name.first",
            "cannot take field 'first' of a string at 'name'",
        ),
        ("$steps.nobody", "no step is named 'nobody'"),
        ("$input.x", "the pipeline has no input"),
        ("$price", "'$price' is not a reference"),
    ] {
        let result = mcp()
            .pipe(
                pipe(json!({"steps": [
                    {"command": "user-create", "input": {"name": "A", "email": "e"}},
                    {"command": "echo", "input": {"value": reference}}
                ]})),
                ctx(),
            )
            .await;
        let message = &result.steps[1].error.as_ref().unwrap().message;
        assert!(message.contains(reason), "{reference}: {message}");
    }
}

#[tokio::test]
async fn step_indices_do_not_shift_after_a_failure() {
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [
                {"command": "echo", "input": {"value": "zero"}},
                {"command": "fail"},
                {"command": "echo", "input": {"value": "two"}},
                {"command": "echo", "input": {"value": ["$steps[2]", "$steps[0]"]}},
                {"command": "echo", "input": {"value": "$steps[1]"}}
            ], "options": {"continueOnFailure": true}})),
            ctx(),
        )
        .await;
    assert_eq!(result.steps[3].data, Some(json!(["two", "zero"])));
    let error = result.steps[4].error.as_ref().unwrap();
    assert!(
        error.message.contains("step 1 ('fail') failed"),
        "{}",
        error.message
    );
    let indices: Vec<usize> = result.steps.iter().map(|s| s.index).collect();
    assert_eq!(indices, [0, 1, 2, 3, 4]);
    assert!(
        !result.success,
        "a failed step fails the pipeline even when it continues"
    );
    assert_eq!(
        result.data,
        Some(json!(["two", "zero"])),
        "data is the last successful step's"
    );
}

#[tokio::test]
async fn input_refers_to_the_pipeline_input_not_the_call_context() {
    let result = mcp()
        .pipe(pipe(json!({"input": {"v": "pipeline"}, "steps": [{"command": "echo", "input": {"value": "$input.v"}}]})), ctx())
        .await;
    assert_eq!(result.data, Some(json!("pipeline")));
}

async fn when(condition: Value) -> bool {
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [
                {"command": "order-list", "input": {"userId": 7}},
                {"command": "echo", "input": {"value": "ran"}, "when": condition}
            ]})),
            ctx(),
        )
        .await;
    assert!(result.success);
    match result.steps[1].status {
        StepStatus::Success => true,
        StepStatus::Skipped => false,
        StepStatus::Failure => panic!("the step failed"),
    }
}

#[tokio::test]
async fn every_when_operator() {
    assert!(when(json!({"$exists": "$prev.userId"})).await);
    assert!(!when(json!({"$exists": "$prev.missing"})).await);
    assert!(when(json!({"$eq": ["$prev.userId", 7]})).await);
    assert!(when(json!({"$eq": ["$prev.orders[0].id", "o-1"]})).await);
    assert!(!when(json!({"$eq": ["$prev.userId", 8]})).await);
    assert!(when(json!({"$ne": ["$prev.userId", 8]})).await);
    assert!(!when(json!({"$ne": ["$prev.userId", 7]})).await);
    assert!(when(json!({"$gt": ["$prev.orders.length", 1]})).await);
    assert!(!when(json!({"$gt": ["$prev.orders.length", 2]})).await);
    assert!(when(json!({"$gte": ["$prev.orders.length", 2]})).await);
    assert!(!when(json!({"$gte": ["$prev.orders.length", 3]})).await);
    assert!(when(json!({"$lt": ["$prev.orders[0].total", 31]})).await);
    assert!(!when(json!({"$lt": ["$prev.orders[0].total", 30]})).await);
    assert!(when(json!({"$lte": ["$prev.orders[0].total", 30]})).await);
    assert!(!when(json!({"$lte": ["$prev.orders[0].total", 29]})).await);
    assert!(
        when(json!({"$and": [{"$exists": "$prev.userId"}, {"$gt": ["$prev.userId", 1]}]})).await
    );
    assert!(
        !when(json!({"$and": [{"$exists": "$prev.userId"}, {"$gt": ["$prev.userId", 9]}]})).await
    );
    assert!(when(json!({"$or": [{"$exists": "$prev.nope"}, {"$eq": ["$prev.userId", 7]}]})).await);
    assert!(!when(json!({"$or": [{"$exists": "$prev.nope"}, {"$eq": ["$prev.userId", 1]}]})).await);
    assert!(when(json!({"$not": {"$exists": "$prev.nope"}})).await);
    assert!(!when(json!({"$not": {"$exists": "$prev.userId"}})).await);
    assert!(
        !when(json!({"$gt": ["$prev.nope", 1]})).await,
        "an unresolved reference makes a comparison false"
    );
}

#[tokio::test]
async fn malformed_pipelines_are_rejected_before_any_step_runs() {
    let d = Dispatcher::builder(Registry::global())
        .limits(Limits::default().with_max_pipeline_steps(2))
        .build()
        .unwrap();
    let cases = [
        (json!({"steps": []}), "The pipeline has no steps"),
        (
            json!({"steps": [{"command": "optional"}, {"command": "optional"}, {"command": "optional"}]}),
            "at most 2",
        ),
        (
            json!({"steps": [{"command": "optional", "when": {"$near": ["$prev", 1]}}]}),
            "unknown operator '$near'",
        ),
        (
            json!({"steps": [{"command": "optional", "when": {"$gt": "$prev"}}]}),
            "$gt takes [reference, value]",
        ),
        (
            json!({"steps": [{"command": "optional", "as": "a"}, {"command": "optional", "as": "a"}]}),
            "both named 'a'",
        ),
    ];
    for (request, expected) in cases {
        let result = d.pipe(pipe(request.clone()), ctx()).await;
        let error = result
            .error
            .unwrap_or_else(|| panic!("{request} should be rejected"));
        assert_eq!(error.code, "INVALID_PIPELINE_REQUEST");
        assert!(
            error.message.contains(expected),
            "{request}: {}",
            error.message
        );
        assert!(result.steps.is_empty());
    }
}

#[tokio::test]
async fn restrictions_hold_inside_a_pipeline() {
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [{"command": "internal-only"}]})),
            ctx(),
        )
        .await;
    assert_eq!(
        result.steps[0].error.as_ref().unwrap().code,
        "COMMAND_NOT_EXPOSED"
    );
}

#[tokio::test]
async fn pipeline_metadata_follows_the_steps() {
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [
                {"command": "echo", "input": {"value": 1, "confidence": 0.9, "warning": "w"}, "as": "one"},
                {"command": "echo", "input": {"value": 2, "confidence": 0.6}}
            ]})),
            ctx(),
        )
        .await;
    let meta = &result.metadata;
    assert_eq!(meta.confidence, 0.6, "the lowest step confidence");
    assert_eq!(meta.confidence_breakdown.len(), 2);
    assert_eq!(meta.reasoning.len(), 2);
    assert_eq!(meta.warnings[0].step_alias.as_deref(), Some("one"));
    let json = serde_json::to_value(&result).unwrap();
    for key in [
        "confidence",
        "confidenceBreakdown",
        "reasoning",
        "warnings",
        "executionTimeMs",
        "completedSteps",
        "totalSteps",
    ] {
        assert!(json["metadata"].get(key).is_some(), "{key}");
    }
    assert_eq!(json["steps"][0]["status"], "success");
}

#[tokio::test(start_paused = true)]
async fn a_pipeline_timeout_cancels_the_running_step() {
    let p = Arc::new(Probe::default());
    let result = mcp()
        .pipe(
            pipe(json!({"steps": [
                {"command": "sleep", "input": {"ms": 10}},
                {"command": "sleep", "input": {"ms": 60000}},
                {"command": "echo", "input": {"value": 1}}
            ], "options": {"timeoutMs": 100}})),
            ctx().with_state(p.clone()),
        )
        .await;
    assert_eq!(result.steps[0].status, StepStatus::Success);
    assert_eq!(result.steps[1].error.as_ref().unwrap().code, "TIMEOUT");
    assert_eq!(result.steps[2].status, StepStatus::Skipped);
    assert_eq!(p.running.load(Ordering::SeqCst), 0);
    assert!(
        result.steps[1].execution_time_ms < 1000,
        "ended at the deadline, not after the step"
    );
}

// ---- middleware -----------------------------------------------------------------------------

#[tokio::test]
async fn trace_timing_and_telemetry_layers() {
    let events: Arc<Mutex<Vec<TelemetryEvent>>> = Arc::default();
    let slow_calls = Arc::new(AtomicUsize::new(0));
    let sink = events.clone();
    let slow = slow_calls.clone();
    let d = Dispatcher::builder(Registry::global())
        .layer(TelemetryLayer::new(move |event| {
            sink.lock().unwrap().push(event)
        }))
        .layer(TimingLayer::new(Duration::ZERO).on_slow(move |_| {
            slow.fetch_add(1, Ordering::SeqCst);
        }))
        .layer(TraceLayer::new())
        .build()
        .unwrap();
    let ok = d.call("echo", json!({"value": 1}), ctx()).await;
    let trace_id = ok.metadata.unwrap().trace_id.unwrap();
    assert_eq!(trace_id.len(), 16);
    let kept = d
        .call("fail", json!({}), ctx().with_trace_id("caller-id"))
        .await;
    assert_eq!(
        kept.metadata.unwrap().trace_id.as_deref(),
        Some("caller-id")
    );
    let invalid = d.call("user-create", json!({}), ctx()).await;
    assert_eq!(invalid.error.unwrap().code, "VALIDATION_ERROR");

    let events = events.lock().unwrap();
    assert_eq!(events.len(), 2, "validation happens before the stack");
    assert_eq!(events[0].command, "echo");
    assert!(events[0].success && events[0].error_code.is_none());
    assert_eq!(events[0].trace_id.as_deref(), Some(trace_id.as_str()));
    assert_eq!(events[1].error_code.as_deref(), Some("BOOM"));
    assert_eq!(events[1].trace_id.as_deref(), Some("caller-id"));
    assert_eq!(slow_calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn rate_limits_answer_with_retry_after() {
    let d = Dispatcher::builder(Registry::global())
        .layer(RateLimitLayer::new(2, Duration::from_secs(10)).per_command())
        .build()
        .unwrap();
    assert!(d.call("echo", json!({"value": 1}), ctx()).await.success);
    assert!(d.call("echo", json!({"value": 1}), ctx()).await.success);
    let limited = d
        .call("echo", json!({"value": 1}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(limited.code, "RATE_LIMITED");
    assert_eq!(
        limited.suggestion.as_deref(),
        Some("Wait 5.0 seconds (retryAfterMs: 5000) and try again.")
    );
    assert_eq!(limited.retryable, Some(true));
    assert!(
        d.call("optional", json!({}), ctx()).await.success,
        "buckets are per command"
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    assert!(
        d.call("echo", json!({"value": 1}), ctx()).await.success,
        "a token came back"
    );
}

#[tokio::test(start_paused = true)]
async fn timeouts_follow_the_execution_time_class() {
    let p = Arc::new(Probe::default());
    let d = Dispatcher::builder(Registry::global())
        .layer(
            TimeoutLayer::from_execution_time()
                .with_class(ExecutionTime::Instant, Some(Duration::from_millis(50))),
        )
        .build()
        .unwrap();
    let error = d
        .call("sleep", json!({"ms": 60_000}), ctx().with_state(p.clone()))
        .await
        .error
        .unwrap();
    assert_eq!(error.code, "TIMEOUT");
    assert_eq!(error.message, "Command 'sleep' timed out after 50 ms");
    assert_eq!(error.details.unwrap()["executionTime"], "instant");
    assert!(
        d.call("sleep", json!({"ms": 10}), ctx().with_state(p.clone()))
            .await
            .success
    );
    let caller = ctx().with_state(p.clone());
    d.call("sleep", json!({"ms": 60_000}), caller.clone()).await;
    assert!(
        !caller.is_cancelled(),
        "a timeout cancels the call, not the caller's context"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrency_limits_queue_calls() {
    let p = Arc::new(Probe::default());
    let d = Dispatcher::builder(Registry::global())
        .layer(ConcurrencyLimitLayer::new(2))
        .build()
        .unwrap();
    let calls = (0..5).map(|_| {
        let d = d.clone();
        let c = ctx().with_state(p.clone());
        async move { d.call("sleep", json!({"ms": 20}), c).await }
    });
    let results = futures_util::future::join_all(calls).await;
    assert!(results.iter().all(|r| r.success));
    assert_eq!(p.peak.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn author_layers_wrap_every_path() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = seen.clone();
    let d = Dispatcher::builder(Registry::global())
        .layer(tower::layer::layer_fn(
            move |inner: afd_runtime::CommandService| {
                let counter = counter.clone();
                tower::ServiceExt::map_request(
                    inner,
                    move |request: afd_runtime::CommandRequest| {
                        counter.fetch_add(1, Ordering::SeqCst);
                        request
                    },
                )
            },
        ))
        .build()
        .unwrap();
    d.call("echo", json!({"value": 1}), ctx()).await;
    d.batch(
        batch(json!({"commands": [{"command": "optional"}, {"command": "optional"}]})),
        ctx(),
    )
    .await;
    d.pipe(pipe(json!({"steps": [{"command": "optional"}]})), ctx())
        .await;
    assert_eq!(seen.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn from_fn_layers_run_around_a_call_or_answer_for_it() {
    let reached = Arc::new(AtomicUsize::new(0));
    let counter = reached.clone();
    let d = Dispatcher::builder(Registry::global())
        // Innermost: counts the calls that get this far, and changes their input.
        .layer(from_fn(move |mut request: CommandRequest, next: Next| {
            counter.fetch_add(1, Ordering::SeqCst);
            if request.def.name() == "echo" {
                request.input["value"] = json!("changed");
            }
            next.run(request)
        }))
        // Adds a warning to every result that comes back through it.
        .layer(from_fn(|request: CommandRequest, next: Next| async move {
            let command = request.def.name();
            next.run(request)
                .await
                .with_warning("SEEN", format!("'{command}' went through the stack"))
        }))
        // Outermost: answers for `fail` itself, without running the rest of the stack.
        .layer(from_fn(|request: CommandRequest, next: Next| async move {
            if request.def.name() == "fail" {
                return CommandResult::failure(CommandError::new("BLOCKED", "not today"));
            }
            next.run(request).await
        }))
        .build()
        .unwrap();

    let echoed = d
        .call("echo", json!({"value": 1, "warning": "from echo"}), ctx())
        .await;
    assert!(echoed.success);
    assert_eq!(echoed.data, Some(json!("changed")));
    let warnings: Vec<(&str, &str)> = echoed
        .warnings
        .iter()
        .map(|w| (w.code.as_str(), w.message.as_str()))
        .collect();
    assert_eq!(
        warnings,
        [
            ("ECHO_WARNING", "from echo"),
            ("SEEN", "'echo' went through the stack")
        ]
    );

    let blocked = d.call("fail", json!({}), ctx()).await;
    assert_eq!(blocked.error.unwrap().code, "BLOCKED");
    assert!(blocked.warnings.is_empty(), "the inner layers did not run");
    assert_eq!(reached.load(Ordering::SeqCst), 1);

    let invalid = d.call("user-create", json!({}), ctx()).await;
    assert_eq!(invalid.error.unwrap().code, "VALIDATION_ERROR");
    assert_eq!(reached.load(Ordering::SeqCst), 1, "validation comes first");
}

#[tokio::test(start_paused = true)]
async fn from_fn_layers_keep_the_readiness_of_the_layers_below() {
    let p = Arc::new(Probe::default());
    let d = Dispatcher::builder(Registry::global())
        .layer(ConcurrencyLimitLayer::new(2))
        .layer(from_fn(|request: CommandRequest, next: Next| {
            next.run(request)
        }))
        .build()
        .unwrap();
    let calls = (0..5).map(|_| {
        let d = d.clone();
        let c = ctx().with_state(p.clone());
        async move { d.call("sleep", json!({"ms": 20}), c).await }
    });
    let results = futures_util::future::join_all(calls).await;
    assert!(results.iter().all(|r| r.success));
    assert_eq!(p.peak.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn cancelling_the_caller_cancels_a_running_batch() {
    let p = Arc::new(Probe::default());
    let caller = ctx().with_state(p.clone());
    let token = caller.cancellation_token().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(15)).await;
        token.cancel();
    });
    let result = mcp()
        .batch(
            batch(json!({"commands": [
                {"command": "sleep", "input": {"ms": 10}},
                {"command": "sleep", "input": {"ms": 60000}},
                {"command": "user-create", "input": {"name": "a", "email": "b"}}
            ]})),
            caller,
        )
        .await;
    assert!(
        result.results[0].result.success,
        "finished before the cancel"
    );
    assert_eq!(
        result.results[1].result.error.as_ref().unwrap().code,
        "CANCELLED"
    );
    let not_started = result.results[2].result.error.as_ref().unwrap();
    assert_eq!(not_started.code, "CANCELLED");
    assert_eq!(
        not_started.message,
        "Command 'user-create' was cancelled before it started"
    );
    assert_eq!(p.running.load(Ordering::SeqCst), 0);
}
