//! The `#[command]` DSL end to end: every handler shape, the generated definitions and
//! schemas, the registry's indexes, and the in-process call path.

use std::sync::atomic::{AtomicU32, Ordering};

use afd_runtime::prelude::*;
use afd_runtime::{CommandDef, Expose, NameKind, Problem, SourceLocation};

// ---- handler shapes -------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    #[schemars(length(min = 1, max = 20))]
    name: String,
    /// How many times.
    #[schemars(range(min = 1, max = 3))]
    times: Option<u8>,
}

#[derive(Serialize, JsonSchema)]
struct Greeted {
    text: String,
}

/// Greet someone. Says hello, as many times as asked.
#[command(category = "demo", tags("greeting", "read"))]
async fn shape_async_input_ctx(
    input: Greeting,
    ctx: &CommandContext,
) -> Result<Greeted, CommandError> {
    let prefix = ctx.try_state::<String>().map_or("Hello", String::as_str);
    let times = usize::from(input.times.unwrap_or(1));
    Ok(Greeted {
        text: vec![format!("{prefix}, {}", input.name); times].join(" "),
    })
}

/// Context first, input second, by value.
#[command(category = "demo")]
fn shape_ctx_first(ctx: CommandContext, input: Greeting) -> String {
    format!("{}:{}", ctx.trace_id().unwrap_or("-"), input.name)
}

/// No input and no context.
#[command(category = "demo", tags("read"))]
fn shape_no_args() -> u32 {
    7
}

/// Returns nothing.
#[command(category = "demo", mutation, idempotent)]
fn shape_unit(ctx: &CommandContext) {
    if let Some(counter) = ctx.try_state::<AtomicU32>() {
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

/// Returns a full CommandResult with reasoning and confidence.
#[command(category = "demo")]
async fn shape_command_result() -> CommandResult<Vec<u8>> {
    CommandResult::success(vec![1, 2, 3])
        .with_reasoning("three numbers")
        .with_confidence(0.5)
}

#[derive(Debug)]
enum AppError {
    Missing(String),
}

impl From<AppError> for CommandError {
    fn from(error: AppError) -> Self {
        match error {
            AppError::Missing(what) => CommandError::not_found("Thing", what),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct Lookup {
    /// An id of the form `T-<digits>`.
    #[schemars(regex(pattern = r"^T-[0-9]+$"))]
    id: String,
    kind: Kind,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Small,
    Large,
}

/// Fails with the app's own error type.
#[command(category = "demo", errors("NOT_FOUND"))]
fn shape_custom_error(input: Lookup) -> Result<String, AppError> {
    match input.kind {
        Kind::Small => Err(AppError::Missing(input.id)),
        Kind::Large => Ok(input.id),
    }
}

/// Data with no JSON Schema of its own.
#[command(category = "demo")]
fn shape_no_output_schema() -> serde_json::Value {
    json!({"free": "form"})
}

/// Panics, to show the server keeps serving.
#[command(category = "demo")]
fn shape_panics() -> u32 {
    panic!("boom")
}

// ---- metadata ---------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct OrderRef {
    #[serde(rename = "orderId")]
    order_id: String,
}

/// Cancel a pending order. The order's items go back to stock.
#[command(
    mutation,
    destructive,
    confirm_prompt = "This will cancel order {orderId}. Continue?",
    tags("billing", "crud"),
    execution_time = "fast",
    errors("NOT_FOUND", "CONFLICT"),
    version = "2.0.0",
    aliases("order-void"),
    deprecated_aliases("cancel-order"),
    expose(cli = false)
)]
fn order_cancel(input: OrderRef) -> String {
    input.order_id
}

/// Stream order events.
#[command(
    name = "order-events",
    handoff,
    handoff_protocol = "websocket",
    execution_time = "long-running",
    eager,
    expose(mcp = false)
)]
fn order_stream() -> &'static str {
    "ws://localhost/orders"
}

/// A camelCase name converts too.
#[allow(non_snake_case)]
#[afd_runtime::command(tags("billing"))]
fn reportBuild() -> bool {
    true
}

fn registry() -> &'static Registry {
    Registry::global()
}

fn ctx() -> CommandContext {
    CommandContext::new()
}

#[test]
fn every_command_in_the_binary_is_registered() {
    let names: Vec<&str> = registry().commands().iter().map(|c| c.name()).collect();
    for expected in [
        "shape-async-input-ctx",
        "shape-ctx-first",
        "shape-no-args",
        "shape-unit",
        "shape-command-result",
        "shape-custom-error",
        "shape-no-output-schema",
        "shape-panics",
        "order-cancel",
        "order-events",
        "report-build",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "commands are listed in name order");
}

#[test]
fn definitions_carry_every_attribute() {
    let cancel = registry().get("order-cancel").unwrap().def();
    assert_eq!(
        cancel.description(),
        "Cancel a pending order. The order's items go back to stock."
    );
    assert_eq!(cancel.category(), "order");
    assert_eq!(cancel.declared_category(), None);
    assert_eq!(cancel.tags(), ["billing", "crud"]);
    assert!(cancel.is_mutation() && cancel.is_destructive() && !cancel.is_idempotent());
    assert_eq!(
        cancel.confirm_prompt(),
        Some("This will cancel order {orderId}. Continue?")
    );
    assert_eq!(cancel.execution_time(), Some(ExecutionTime::Fast));
    assert_eq!(cancel.errors(), ["NOT_FOUND", "CONFLICT"]);
    assert_eq!(cancel.version(), Some("2.0.0"));
    assert_eq!(cancel.aliases(), ["order-void"]);
    assert_eq!(cancel.deprecated_aliases(), ["cancel-order"]);
    assert_eq!(cancel.expose(), Expose::ALL.cli(false));
    assert!(cancel.expose().allows_mcp() && !cancel.expose().allows_cli());
    assert!(!cancel.is_handoff() && !cancel.is_eager());
    let source = cancel.source();
    assert!(source.file.ends_with("command_dsl.rs"), "{source}");
    let line = include_str!("command_dsl.rs")
        .lines()
        .position(|l| l.starts_with("fn order_cancel("))
        .unwrap() as u32
        + 1;
    assert_eq!(source.line, line);
    assert_eq!(source.module_path, "command_dsl");

    let events = registry().get("order-events").unwrap().def();
    assert_eq!(events.name(), "order-events");
    assert!(events.is_handoff());
    assert_eq!(events.handoff_protocol(), Some("websocket"));
    assert_eq!(events.execution_time(), Some(ExecutionTime::LongRunning));
    assert!(events.is_eager() && !events.expose().allows_mcp());

    let unit = registry().get("shape-unit").unwrap().def();
    assert!(unit.is_mutation() && unit.is_idempotent() && !unit.is_destructive());
    assert_eq!(registry().get("report-build").unwrap().category(), "report");
    assert_eq!(
        order_cancel::COMMAND.name(),
        "order-cancel",
        "the definition is reachable by the function's name"
    );
}

#[test]
fn input_schemas_come_from_schemars() {
    let schema = registry()
        .get("shape-async-input-ctx")
        .unwrap()
        .input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["name"]));
    assert_eq!(schema["properties"]["name"]["minLength"], 1);
    assert_eq!(schema["properties"]["name"]["description"], "Who to greet.");
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
    let no_input = registry().get("shape-no-args").unwrap().input_schema();
    assert_eq!(no_input, &json!({"type": "object", "properties": {}}));
    let order = registry().get("order-cancel").unwrap().input_schema();
    assert_eq!(order["required"], json!(["orderId"]));
}

#[test]
fn output_schemas_exist_where_the_data_type_has_one() {
    let greeted = registry()
        .get("shape-async-input-ctx")
        .unwrap()
        .output_schema()
        .unwrap();
    assert_eq!(greeted["properties"]["text"]["type"], "string");
    let numbers = registry()
        .get("shape-command-result")
        .unwrap()
        .output_schema()
        .unwrap();
    assert_eq!(numbers["type"], "array");
    assert_eq!(
        registry()
            .get("shape-custom-error")
            .unwrap()
            .output_schema()
            .unwrap()["type"],
        "string"
    );
    assert!(
        registry()
            .get("shape-unit")
            .unwrap()
            .output_schema()
            .is_none()
    );
    let value = registry()
        .get("shape-no-output-schema")
        .unwrap()
        .output_schema();
    assert!(
        value.is_some(),
        "serde_json::Value implements JsonSchema (any value)"
    );
}

#[tokio::test]
async fn every_handler_shape_runs() {
    let r = registry();
    let greeted = r
        .call(
            "shape-async-input-ctx",
            json!({"name": "Ada", "times": 2}),
            ctx().with_state("Hi".to_owned()),
        )
        .await;
    assert_eq!(greeted.data, Some(json!({"text": "Hi, Ada Hi, Ada"})));

    let first = r
        .call(
            "shape-ctx-first",
            json!({"name": "Bo"}),
            ctx().with_trace_id("t-1"),
        )
        .await;
    assert_eq!(first.data, Some(json!("t-1:Bo")));

    let seven = r.call("shape-no-args", json!(null), ctx()).await;
    assert_eq!(seven.data, Some(json!(7)));

    let counter = std::sync::Arc::new(AtomicU32::new(0));
    let unit = r
        .call(
            "shape-unit",
            json!({}),
            ctx().with_shared_state(counter.clone()),
        )
        .await;
    assert!(unit.success);
    assert_eq!(unit.data, Some(Value::Null));
    assert_eq!(counter.load(Ordering::SeqCst), 1);

    let full = r.call("shape-command-result", json!({}), ctx()).await;
    assert_eq!(full.data, Some(json!([1, 2, 3])));
    assert_eq!(full.reasoning.as_deref(), Some("three numbers"));
    assert_eq!(full.confidence, Some(0.5));
    assert!(full.metadata.unwrap().execution_time_ms.is_some());

    let ok = r
        .call(
            "shape-custom-error",
            json!({"id": "T-1", "kind": "large"}),
            ctx(),
        )
        .await;
    assert_eq!(ok.data, Some(json!("T-1")));
    let failed = r
        .call(
            "shape-custom-error",
            json!({"id": "T-9", "kind": "small"}),
            ctx(),
        )
        .await;
    let error = failed.error.unwrap();
    assert_eq!(error.code, "NOT_FOUND");
    assert_eq!(error.message, "Thing 'T-9' not found");
}

#[tokio::test]
async fn schemars_constraints_are_enforced() {
    let r = registry();
    let cases = [
        (
            "shape-async-input-ctx",
            json!({"name": ""}),
            "Field 'name' must be at least 1 character long",
        ),
        (
            "shape-async-input-ctx",
            json!({"name": "x".repeat(21)}),
            "Field 'name' must be at most 20 characters long",
        ),
        (
            "shape-async-input-ctx",
            json!({"name": "a", "times": 4}),
            "Field 'times' must be <= 3",
        ),
        (
            "shape-custom-error",
            json!({"id": "X-1", "kind": "small"}),
            "Field 'id' must match the pattern `^T-[0-9]+$`",
        ),
        (
            "shape-custom-error",
            json!({"id": "T-1", "kind": "huge"}),
            "Field 'kind' must be one of \"small\", \"large\"",
        ),
        (
            "shape-async-input-ctx",
            json!({"name": 5}),
            "Field 'name' must be a string",
        ),
        (
            "shape-async-input-ctx",
            json!([1]),
            "Input must be an object",
        ),
    ];
    for (command, input, expected) in cases {
        let result = r.call(command, input.clone(), ctx()).await;
        let error = result
            .error
            .unwrap_or_else(|| panic!("{command} {input} should fail"));
        assert_eq!(error.code, "VALIDATION_ERROR");
        assert!(
            error.message.contains(expected),
            "{input}: {}",
            error.message
        );
        assert_eq!(
            error.suggestion.unwrap(),
            format!("Call afd-detail with command '{command}' to see the expected input schema.")
        );
    }
    let many = r
        .call("shape-custom-error", json!({"id": 1}), ctx())
        .await
        .error
        .unwrap();
    let errors = many.details.unwrap()["errors"].as_array().unwrap().clone();
    assert_eq!(errors.len(), 2, "every violation is reported: {errors:?}");
    assert!(errors.iter().any(|e| e["path"] == "/id"));
    assert!(
        errors
            .iter()
            .any(|e| e["message"] == "Required field 'kind' is missing")
    );
}

#[tokio::test]
async fn unknown_names_get_suggestions() {
    let r = registry();
    let unknown = r.call("completely-different", json!({}), ctx()).await;
    let error = unknown.error.unwrap();
    assert_eq!(error.code, "COMMAND_NOT_FOUND");
    assert_eq!(error.message, "No command named 'completely-different'");
    assert_eq!(
        error.suggestion.as_deref(),
        Some("Use afd-discover to list all commands.")
    );

    let typo = r
        .call("order-cancle", json!({}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(typo.code, "COMMAND_NOT_FOUND");
    assert_eq!(
        typo.suggestion.as_deref(),
        Some("Did you mean 'order-cancel'? Use afd-discover to list all commands.")
    );
    assert_eq!(
        typo.details.unwrap()["suggestions"],
        json!(["order-cancel", "order-events"])
    );
}

#[tokio::test]
async fn aliases_resolve_and_deprecated_ones_warn() {
    let r = registry();
    assert_eq!(r.lookup("order-void").unwrap().kind, NameKind::Alias);
    let via_alias = r.call("order-void", json!({"orderId": "o-1"}), ctx()).await;
    assert_eq!(via_alias.data, Some(json!("o-1")));
    assert!(via_alias.warnings.is_empty());
    let via_old = r
        .call("cancel-order", json!({"orderId": "o-2"}), ctx())
        .await;
    assert_eq!(via_old.data, Some(json!("o-2")));
    assert_eq!(via_old.warnings[0].code, "DEPRECATED_ALIAS");
}

#[tokio::test]
async fn a_panicking_handler_is_an_internal_error_and_serving_goes_on() {
    let r = registry();
    let hidden = r
        .call("shape-panics", json!({}), ctx())
        .await
        .error
        .unwrap();
    assert_eq!(hidden.code, "INTERNAL_ERROR");
    assert_eq!(hidden.message, "Command 'shape-panics' failed unexpectedly");
    let shown = r
        .call("shape-panics", json!({}), ctx().with_dev_mode(true))
        .await
        .error
        .unwrap();
    assert_eq!(shown.message, "Command 'shape-panics' panicked: boom");
    assert!(r.call("shape-no-args", json!({}), ctx()).await.success);
}

#[tokio::test]
async fn missing_state_is_a_clear_internal_error() {
    #[derive(Debug)]
    struct Db;
    let error = ctx().state::<Db>().unwrap_err();
    assert_eq!(error.code, "INTERNAL_ERROR");
    assert!(error.message.contains("Db"), "{}", error.message);
}

#[test]
fn category_and_tag_indexes() {
    let r = registry();
    let demo: Vec<&str> = r.by_category("demo").map(|c| c.name()).collect();
    assert!(demo.contains(&"shape-no-args") && demo.contains(&"shape-unit"));
    assert!(!demo.contains(&"order-cancel"));

    let any: Vec<&str> = r
        .by_tags(&["greeting", "billing"], TagMode::Any)
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(
        any,
        ["order-cancel", "report-build", "shape-async-input-ctx"]
    );
    let all: Vec<&str> = r
        .by_tags(&["billing", "crud"], TagMode::All)
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(all, ["order-cancel"]);
    assert!(r.by_tags(&["billing", "nope"], TagMode::All).is_empty());

    let categories: Vec<(&str, usize)> = r.categories().collect();
    assert!(categories.contains(&("order", 2)));
    let tags: Vec<(&str, usize)> = r.tags().collect();
    assert!(tags.contains(&("billing", 2)) && tags.contains(&("read", 2)));
}

fn noop(_: Value, _: CommandContext) -> afd_runtime::HandlerFuture {
    Box::pin(async { CommandResult::success(Value::Null) })
}

fn object() -> Value {
    json!({"type": "object"})
}

const fn at(line: u32) -> SourceLocation {
    SourceLocation {
        file: "src/a.rs",
        line,
        column: 1,
        module_path: "app",
    }
}

static FIRST: CommandDef = CommandDef::new("user-get", "Get a user.", noop, object, at(10));
static SECOND: CommandDef = CommandDef::new("user-get", "Get a user again.", noop, object, at(20));
static THIRD: CommandDef = CommandDef::new("user-fetch", "Fetch a user.", noop, object, at(30))
    .with_aliases(&["user-fetch-all"]);
static FOURTH: CommandDef =
    CommandDef::new("user-fetch-all", "Fetch all users.", noop, object, at(40));

#[test]
fn a_name_claimed_twice_is_a_startup_error_naming_both_places() {
    let error = Registry::builder()
        .register_all([&FIRST, &SECOND, &THIRD, &FOURTH])
        .build()
        .unwrap_err();
    assert_eq!(error.problems().len(), 2);
    assert!(error.problems().contains(&Problem::DuplicateName {
        name: "user-get",
        first: at(10),
        second: at(20)
    }));
    let text = error.to_string();
    assert!(
        text.contains("src/a.rs:10:1") && text.contains("src/a.rs:20:1"),
        "{text}"
    );
    assert!(text.contains("'user-fetch-all'"), "{text}");
}

#[test]
fn explicit_registration_works_without_inventory() {
    let r = Registry::builder()
        .register(order_cancel::COMMAND)
        .register(order_cancel::COMMAND)
        .register(shape_no_args::COMMAND)
        .build()
        .unwrap();
    assert_eq!(r.len(), 2, "the same definition twice is kept once");
    assert!(r.get("order-void").is_some());
}
