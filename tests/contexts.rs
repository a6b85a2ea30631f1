//! Runtime contexts and sessions (issue 7): declarations, the context operations, the
//! session stack, enforcement on every path (call, discover, batch, pipe, tools/call,
//! grouped tools), read-only scope, hierarchy, context hints, the tool list that follows a
//! 2025-11-25 session, and isolation of sessions over streamable HTTP.
//!
//! The shop example declares six contexts: storefront, fulfilment, returns (nested in
//! fulfilment), billing, back-office and audit (read-only); product-get, product-list and
//! plan-list name none and so are universal.

use std::time::Duration;

use afd_examples::shop::{self, ShopStore};
use afd_runtime::contexts::MemorySessionStore;
use afd_runtime::mcp::{HttpOptions, McpServer, Strategy};
use afd_runtime::{
    CommandContext, CommandDef, CommandResult, ContextDef, Dispatcher, HandlerFuture, MetaTools,
    NoContextPolicy, Problem, Registry, Scope, SessionConfig, SourceLocation, codes,
};
use afd_tests::http::HttpSession;
use afd_tests::mcp::Client;
use serde_json::{Value, json};

fn dispatcher(policy: NoContextPolicy) -> Dispatcher {
    Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .session_config(SessionConfig::default().no_context_policy(policy))
        .build()
        .unwrap()
}

/// A context with a fresh shop store.
fn store() -> CommandContext {
    shop::context(ShopStore::in_memory().unwrap())
}

async fn call(
    d: &Dispatcher,
    ctx: &CommandContext,
    name: &str,
    input: Value,
) -> CommandResult<Value> {
    d.call(name, input, ctx.clone()).await
}

fn code(result: &CommandResult<Value>) -> &str {
    result.error.as_ref().map_or("OK", |e| e.code.as_ref())
}

async fn enter(d: &Dispatcher, ctx: &CommandContext, context: &str, scope: Option<&str>) -> Value {
    let mut input = json!({"context": context});
    if let Some(scope) = scope {
        input["scope"] = json!(scope);
    }
    let result = call(d, ctx, "afd-context-enter", input).await;
    assert!(result.success, "{result:?}");
    result.data.unwrap()
}

#[tokio::test]
async fn the_context_operations_are_built_in_commands_of_a_registry_that_declares_contexts() {
    let d = dispatcher(NoContextPolicy::Open);
    for op in [
        "afd-context-list",
        "afd-context-enter",
        "afd-context-exit",
        "afd-context-suggest",
    ] {
        let entry = d.registry().get(op).expect(op);
        assert_eq!(entry.category(), "context");
        assert!(
            d.is_exposed(op),
            "{op} is callable although expose_only lists the shop"
        );
    }
    // A registry without contexts has none of them.
    assert!(
        afd_examples::todo::registry()
            .get("afd-context-enter")
            .is_none()
    );

    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    let listed = call(&d, &ctx, "afd-context-list", json!({})).await;
    let data = listed.data.unwrap();
    let contexts = data["contexts"].as_array().unwrap();
    let names: Vec<&str> = contexts
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "audit",
            "back-office",
            "billing",
            "fulfilment",
            "returns",
            "storefront"
        ]
    );
    let returns = &contexts[4];
    assert_eq!(returns["parent"], "fulfilment");
    assert_eq!(returns["priority"], 12);
    assert_eq!(contexts[0]["readOnly"], true);
    assert!(contexts[3]["commands"].as_u64().unwrap() > 5);
    assert_eq!(data["status"]["active"], Value::Null);
}

#[tokio::test]
async fn enter_scopes_calls_and_exit_pops_back_to_the_previous_context() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());

    // Open policy: outside any context, everything is callable.
    assert_eq!(code(&call(&d, &ctx, "user-list", json!({})).await), "OK");

    let entered = enter(&d, &ctx, "fulfilment", None).await;
    assert_eq!(entered["session"], session.as_str());
    assert_eq!(entered["scope"], "full");
    assert!(
        entered["commands"]
            .as_array()
            .unwrap()
            .contains(&json!("order-list"))
    );
    assert_eq!(code(&call(&d, &ctx, "order-list", json!({})).await), "OK");
    // Universal commands work in every context.
    assert_eq!(code(&call(&d, &ctx, "product-list", json!({})).await), "OK");

    let refused = call(&d, &ctx, "user-list", json!({})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, codes::CONTEXT_MISMATCH);
    assert_eq!(
        error.message,
        "Command 'user-list' is not available in context 'fulfilment'"
    );
    let suggestion = error.suggestion.unwrap();
    // Higher priority first: audit (8) before back-office (5).
    assert!(
        suggestion.starts_with(
            "Enter 'audit' (or back-office) with afd-context-enter {context: \"audit\"}"
        ),
        "{suggestion}"
    );
    assert!(
        suggestion.ends_with("afd-context-exit returns to 'fulfilment'."),
        "{suggestion}"
    );
    let details = error.details.unwrap();
    assert_eq!(details["requiredContexts"], json!(["audit", "back-office"]));
    assert_eq!(details["contextHint"]["suggestedContext"], "audit");
    // A mutation is never sent to a read-only context.
    let refused = call(&d, &ctx, "user-create", json!({})).await;
    let details = refused.error.unwrap().details.unwrap();
    assert_eq!(details["requiredContexts"], json!(["back-office"]));

    // A child context holds its own commands and its parent's.
    enter(&d, &ctx, "returns", None).await;
    assert_eq!(code(&call(&d, &ctx, "order-list", json!({})).await), "OK");
    let cancel = call(&d, &ctx, "order-cancel", json!({"orderId": "ord-999"})).await;
    assert_eq!(
        code(&cancel),
        "NOT_FOUND",
        "allowed, then the handler looks the order up"
    );

    // Exit pops back to fulfilment, where order-cancel (a returns command) is refused.
    let exited = call(&d, &ctx, "afd-context-exit", json!({}))
        .await
        .data
        .unwrap();
    assert_eq!(exited["exited"], "returns");
    assert_eq!(exited["status"]["active"], "fulfilment");
    let refused = call(&d, &ctx, "order-cancel", json!({"orderId": "ord-1"})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, codes::CONTEXT_MISMATCH);
    assert_eq!(
        error.details.unwrap()["requiredContexts"],
        json!(["returns"])
    );

    let exited = call(&d, &ctx, "afd-context-exit", json!({}))
        .await
        .data
        .unwrap();
    assert_eq!(exited["status"]["active"], Value::Null);
    assert_eq!(code(&call(&d, &ctx, "user-list", json!({})).await), "OK");
    let again = call(&d, &ctx, "afd-context-exit", json!({})).await;
    assert_eq!(again.data.unwrap()["exited"], Value::Null);
    assert_eq!(
        again.reasoning.unwrap(),
        "No context was entered; nothing to leave"
    );
}

#[tokio::test]
async fn read_only_scope_refuses_mutations_with_forbidden() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());

    let entered = enter(&d, &ctx, "fulfilment", Some("read-only")).await;
    assert_eq!(entered["scope"], "read-only");
    assert_eq!(code(&call(&d, &ctx, "order-list", json!({})).await), "OK");
    let refused = call(&d, &ctx, "order-create", json!({})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, codes::FORBIDDEN);
    assert_eq!(
        error.message,
        "Command 'order-create' changes state, and the session is read-only in context 'fulfilment'"
    );
    assert!(error.suggestion.unwrap().contains("afd-context-exit"));
    assert_eq!(error.retryable, Some(false));

    // A context declared read-only is read-only whatever scope is asked for.
    call(&d, &ctx, "afd-context-exit", json!({})).await;
    let audit = enter(&d, &ctx, "audit", Some("full")).await;
    assert_eq!(audit["scope"], "read-only");
    assert_eq!(
        code(&call(&d, &ctx, "report-sales-summary", json!({})).await),
        "OK"
    );
}

#[tokio::test]
async fn the_lobby_policy_allows_only_universal_commands_outside_a_context() {
    let d = dispatcher(NoContextPolicy::Lobby);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    assert_eq!(code(&call(&d, &ctx, "product-list", json!({})).await), "OK");
    let refused = call(&d, &ctx, "user-list", json!({})).await;
    let error = refused.error.unwrap();
    assert_eq!(error.code, codes::CONTEXT_MISMATCH);
    assert_eq!(
        error.message,
        "Command 'user-list' is only available inside a context, and none is entered"
    );
    // Without a session at all, the lobby holds too.
    let anonymous = call(&d, &store(), "user-list", json!({})).await;
    assert_eq!(code(&anonymous), codes::CONTEXT_MISMATCH);
    enter(&d, &ctx, "back-office", None).await;
    assert_eq!(code(&call(&d, &ctx, "user-list", json!({})).await), "OK");
}

#[tokio::test]
async fn sessions_are_isolated_and_unknown_or_expired_handles_are_session_not_found() {
    let d = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .session_config(SessionConfig::default().idle_timeout(Duration::from_millis(150)))
        .build()
        .unwrap();
    let shop = store();
    let a = d.open_session().await.unwrap();
    let b = d.open_session().await.unwrap();
    assert_ne!(a, b);
    let in_a = shop.clone().with_session(a.as_str());
    let in_b = shop.clone().with_session(b.as_str());
    enter(&d, &in_a, "billing", None).await;
    assert_eq!(
        code(&call(&d, &in_a, "user-list", json!({})).await),
        codes::CONTEXT_MISMATCH
    );
    assert_eq!(code(&call(&d, &in_b, "user-list", json!({})).await), "OK");
    assert_eq!(
        d.session(&a).await.unwrap().unwrap().active_context(),
        Some("billing")
    );
    assert_eq!(d.session(&b).await.unwrap().unwrap().active_context(), None);

    let unknown = shop
        .clone()
        .with_session("afd-s-00000000000000000000000000000000");
    let result = call(&d, &unknown, "user-list", json!({})).await;
    let error = result.error.unwrap();
    assert_eq!(error.code, codes::SESSION_NOT_FOUND);
    assert!(
        error
            .suggestion
            .unwrap()
            .starts_with("Start over: call afd-context-enter without `session`")
    );

    tokio::time::sleep(Duration::from_millis(300)).await;
    let expired = call(&d, &in_a, "order-list", json!({})).await;
    let error = expired.error.unwrap();
    assert_eq!(error.code, codes::SESSION_NOT_FOUND);
    assert!(
        error.message.contains("expired after 150ms without use"),
        "{}",
        error.message
    );

    // Entering without a session starts a new one and hands back its handle.
    let fresh = call(
        &d,
        &shop,
        "afd-context-enter",
        json!({"context": "billing"}),
    )
    .await;
    let data = fresh.data.unwrap();
    let handle = data["session"].as_str().unwrap();
    assert!(handle.starts_with("afd-s-"));
    assert!(
        fresh
            .reasoning
            .unwrap()
            .contains(&format!("Pass session: \"{handle}\""))
    );
    assert_eq!(
        d.session(handle).await.unwrap().unwrap().active_context(),
        Some("billing")
    );
}

#[tokio::test]
async fn a_host_sets_the_default_context_of_a_session() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    // The user opened the storefront in the UI.
    d.set_default_context(&session, Some("storefront"), Scope::Full)
        .await
        .unwrap();
    assert_ne!(
        code(&call(&d, &ctx, "cart-get", json!({"userId": 1})).await),
        codes::CONTEXT_MISMATCH
    );
    assert_eq!(
        code(&call(&d, &ctx, "order-list", json!({})).await),
        codes::CONTEXT_MISMATCH
    );
    // The agent can step into another context and back, never below the default.
    enter(&d, &ctx, "fulfilment", None).await;
    assert_eq!(code(&call(&d, &ctx, "order-list", json!({})).await), "OK");
    let exited = call(&d, &ctx, "afd-context-exit", json!({}))
        .await
        .data
        .unwrap();
    assert_eq!(exited["status"]["active"], "storefront");
    assert_eq!(exited["status"]["defaultContext"], "storefront");
    let again = call(&d, &ctx, "afd-context-exit", json!({})).await;
    assert_eq!(
        again.reasoning.unwrap(),
        "No entered context to leave; 'storefront' is the session's default"
    );
    let error = d
        .set_default_context(&session, Some("store-front"), Scope::Full)
        .await
        .unwrap_err();
    assert_eq!(error.code, codes::CONTEXT_NOT_FOUND);
    assert_eq!(
        error.suggestion.as_deref(),
        Some("Did you mean 'storefront'? afd-context-list shows every context.")
    );
    d.set_default_context(&session, None, Scope::Full)
        .await
        .unwrap();
    assert_eq!(code(&call(&d, &ctx, "order-list", json!({})).await), "OK");
}

#[tokio::test]
async fn batch_and_pipe_enforce_the_context_on_every_entry() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    enter(&d, &ctx, "fulfilment", Some("read-only")).await;

    let batch = afd_runtime::BatchRequest::from_value(json!({"commands": [
        {"command": "order-list", "input": {}},
        {"command": "user-list", "input": {}},
        {"command": "order-create", "input": {}},
    ]}))
    .unwrap();
    let result = d.batch(batch, ctx.clone()).await;
    let codes_seen: Vec<&str> = result
        .results
        .iter()
        .map(|entry| {
            entry
                .result
                .error
                .as_ref()
                .map_or("OK", |e| e.code.as_ref())
        })
        .collect();
    assert_eq!(
        codes_seen,
        ["OK", codes::CONTEXT_MISMATCH, codes::FORBIDDEN]
    );

    let pipe = afd_runtime::PipeRequest::from_value(json!({"steps": [
        {"command": "product-list", "input": {}},
        {"command": "user-list", "input": {}},
    ]}))
    .unwrap();
    let result = d.pipe(pipe, ctx.clone()).await;
    assert!(!result.success);
    let failed = result.steps.iter().find(|s| s.error.is_some()).unwrap();
    assert_eq!(failed.error.as_ref().unwrap().code, codes::CONTEXT_MISMATCH);
}

#[tokio::test]
async fn discover_lists_what_the_session_may_call_and_names_the_contexts() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    let everything = d.discover(json!({"limit": 200, "session": session})).await;
    let data = everything.data.unwrap();
    let all = data["filtered"].as_u64().unwrap();
    assert_eq!(all as usize, shop::COMMANDS.len() + 4);
    assert_eq!(data["context"]["active"], Value::Null);
    assert_eq!(data["context"]["available"].as_array().unwrap().len(), 6);

    enter(&d, &ctx, "fulfilment", Some("read-only")).await;
    let scoped = d
        .discover(json!({"limit": 200, "includeMutation": true, "session": session}))
        .await;
    let data = scoped.data.unwrap();
    assert_eq!(data["context"]["active"], "fulfilment");
    assert_eq!(data["context"]["scope"], "read-only");
    let names: Vec<&str> = data["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"order-list") && names.contains(&"product-list"));
    assert!(names.contains(&"afd-context-exit"));
    assert!(!names.contains(&"user-list"), "another context's command");
    assert!(
        !names.contains(&"order-create"),
        "a mutation in read-only scope"
    );
    assert!(
        data["commands"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["mutation"] == false)
    );
    assert!(
        scoped
            .reasoning
            .unwrap()
            .contains("callable in context 'fulfilment' (read-only)")
    );

    // afd-detail stays introspection: any command, whatever the context.
    let detail = d
        .detail(json!({"command": ["user-create"], "session": session}))
        .await;
    assert_eq!(detail.data.unwrap()[0]["found"], true);

    // The search is recorded in the session's history.
    d.discover(json!({"search": "order", "session": session}))
        .await;
    let state = d.session(&session).await.unwrap().unwrap();
    let search = state.searches().last().unwrap();
    assert_eq!(search.query, "order");
    assert!(search.results.contains(&"order-list".to_owned()));
}

#[tokio::test]
async fn suggest_ranks_contexts_by_triggers_and_their_commands() {
    let d = dispatcher(NoContextPolicy::Open);
    let ctx = store();
    let result = call(
        &d,
        &ctx,
        "afd-context-suggest",
        json!({"intent": "refund the customer's payment"}),
    )
    .await;
    let suggestions = result.data.unwrap()["suggestions"].clone();
    let first = &suggestions[0];
    assert_eq!(first["suggestedContext"], "returns", "{suggestions}");
    let confidence = first["confidence"].as_f64().unwrap();
    assert!(confidence > 0.5 && confidence < 1.0, "{confidence}");
    assert!(first["reason"].as_str().unwrap().contains("\"refund\""));
    assert!(suggestions.as_array().unwrap().len() > 1);
    assert!(suggestions[1]["confidence"].as_f64().unwrap() <= confidence);

    let ship = d.suggest_contexts("ship the package to the warehouse", 1);
    assert_eq!(ship[0].suggested_context, "fulfilment");
    let words = d.suggest_contexts("approve the pending reviews", 1);
    assert_eq!(
        words[0].suggested_context, "storefront",
        "matched through its commands"
    );
    assert!(d.suggest_contexts("zzz qqq", 3).is_empty());
}

#[tokio::test]
async fn unknown_names_get_context_hints() {
    let d = dispatcher(NoContextPolicy::Open);
    let session = d.open_session().await.unwrap();
    let ctx = store().with_session(session.as_str());
    enter(&d, &ctx, "storefront", None).await;
    let typo = call(&d, &ctx, "order-cancle", json!({})).await;
    let error = typo.error.unwrap();
    assert_eq!(error.code, codes::COMMAND_NOT_FOUND);
    let details = error.details.unwrap();
    assert_eq!(details["suggestions"][0], "order-cancel");
    let hint = &details["contextHint"];
    assert_eq!(hint["suggestedContext"], "returns");
    assert_eq!(hint["reason"], "'order-cancel' is in the returns context");
    assert!(hint["confidence"].as_f64().unwrap() > 0.8);

    // A name that matches no command but a context's trigger keyword.
    let trigger = call(&d, &ctx, "warehouse-transfer", json!({})).await;
    let hint = trigger.error.unwrap().details.unwrap()["contextHint"].clone();
    assert_eq!(hint["suggestedContext"], "fulfilment");
    assert!(hint["reason"].as_str().unwrap().contains("trigger"));

    let unknown = call(
        &d,
        &ctx,
        "afd-context-enter",
        json!({"context": "fulfillment"}),
    )
    .await;
    let error = unknown.error.unwrap();
    assert_eq!(error.code, codes::CONTEXT_NOT_FOUND);
    assert_eq!(error.message, "No context named 'fulfillment'");
    assert_eq!(error.details.unwrap()["suggestions"][0], "fulfilment");
}

#[tokio::test]
async fn activation_is_bounded_per_session_and_undoable() {
    let d = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .session_config(SessionConfig::default().max_activated(2))
        .build()
        .unwrap();
    let session = d.open_session().await.unwrap();
    let detail = d.detail(json!({"command": ["order-list", "user-list", "payment-list"], "activate": true, "session": session})).await;
    assert!(
        detail
            .reasoning
            .unwrap()
            .contains("deactivating the oldest: order-list")
    );
    assert_eq!(
        d.session(&session).await.unwrap().unwrap().activated(),
        ["user-list", "payment-list"]
    );
    d.detail(json!({"command": "user-list", "activate": false, "session": session}))
        .await;
    assert_eq!(
        d.session(&session).await.unwrap().unwrap().activated(),
        ["payment-list"]
    );
    d.deactivate(Some(&session), None).await.unwrap();
    assert!(
        d.session(&session)
            .await
            .unwrap()
            .unwrap()
            .activated()
            .is_empty()
    );
    let without = d
        .detail(json!({"command": "user-list", "activate": true}))
        .await;
    assert_eq!(code(&without), codes::SESSION_NOT_FOUND);
}

fn noop(_: Value, _: CommandContext) -> HandlerFuture {
    Box::pin(async { CommandResult::success(Value::Null) })
}

fn object() -> Value {
    json!({"type": "object"})
}

const HERE: SourceLocation = SourceLocation {
    file: file!(),
    line: 1,
    column: 1,
    module_path: module_path!(),
};

static ORPHAN: ContextDef =
    ContextDef::new("orphan", "Nested under nothing.", HERE).with_parent("missing");
static LOOP_A: ContextDef =
    ContextDef::new("loop-a", "One half of a loop.", HERE).with_parent("loop-b");
static LOOP_B: ContextDef =
    ContextDef::new("loop-b", "The other half.", HERE).with_parent("loop-a");
static TWICE: ContextDef = ContextDef::new("twice", "Declared once.", HERE);
static TWICE_AGAIN: ContextDef = ContextDef::new(
    "twice",
    "Declared again.",
    SourceLocation { line: 2, ..HERE },
);
static STRAY: CommandDef =
    CommandDef::new("stray", "Names an undeclared context.", noop, object, HERE)
        .with_contexts(&["nowhere"]);

#[test]
fn malformed_context_declarations_stop_the_registry_with_every_problem() {
    let error = Registry::builder()
        .register(&STRAY)
        .context(&ORPHAN)
        .context(&LOOP_A)
        .context(&LOOP_B)
        .context(&TWICE)
        .context(&TWICE_AGAIN)
        .build()
        .unwrap_err();
    let problems = error.problems();
    assert!(problems.iter().any(|p| matches!(
        p,
        Problem::UndeclaredParent {
            context: "orphan",
            parent: "missing",
            ..
        }
    )));
    assert!(problems.iter().any(|p| matches!(p, Problem::ContextCycle { contexts } if contexts.contains(&"loop-a") && contexts.contains(&"loop-b"))));
    assert!(
        problems
            .iter()
            .any(|p| matches!(p, Problem::DuplicateContext { name: "twice", .. }))
    );
    assert!(problems.iter().any(|p| matches!(
        p,
        Problem::UndeclaredContext {
            command: "stray",
            context: "nowhere",
            ..
        }
    )));
    let message = error.to_string();
    assert!(message.contains("the command 'stray' (defined at tests/contexts.rs:1:1) names the context 'nowhere', which is not declared"), "{message}");
}

#[tokio::test]
async fn a_memory_store_can_be_shared_and_replaced() {
    let store = std::sync::Arc::new(MemorySessionStore::new(Duration::from_secs(60)));
    let sessions = afd_runtime::Sessions::with_store(SessionConfig::default(), store.clone());
    let d1 = Dispatcher::builder(Registry::global())
        .sessions(sessions.clone())
        .build()
        .unwrap();
    let d2 = Dispatcher::builder(Registry::global())
        .sessions(sessions)
        .build()
        .unwrap();
    let handle = d1.open_session().await.unwrap();
    d1.set_default_context(&handle, Some("billing"), Scope::ReadOnly)
        .await
        .unwrap();
    assert_eq!(
        d2.session(&handle).await.unwrap().unwrap().scope(),
        Scope::ReadOnly
    );
    assert!(store.get(&handle).is_some());
}

// ---- Through the MCP surface, with a real rmcp client ----

fn server(strategy: Strategy, session_tools: bool) -> McpServer {
    McpServer::builder(Registry::global())
        .name("shop")
        .strategy(strategy)
        .context(store())
        .dispatch(|d| d.expose_only(shop::COMMAND_NAMES))
        .session_tools(session_tools)
        .build()
        .unwrap()
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn lazy_keeps_five_tools_and_contexts_act_through_the_meta_tools() {
    let client = Client::connect(server(Strategy::Lazy, false)).await;
    let before = names(&client.tools().await);
    assert_eq!(before.len(), 5);
    let instructions = client.instructions().unwrap();
    assert!(
        instructions.contains("Contexts scope what may be called: audit (read-only), back-office"),
        "{instructions}"
    );

    // afd-discover names the contexts and lists the built-in operations.
    let found = client
        .call("afd-discover", json!({"category": "context"}))
        .await;
    assert_eq!(found["data"]["filtered"], 4);
    assert_eq!(
        found["data"]["context"]["available"]
            .as_array()
            .unwrap()
            .len(),
        6
    );

    // Over a stream the connection is the session: no handle needed.
    let entered = client
        .call("afd-call", json!({"command": "afd-context-enter", "input": {"context": "fulfilment", "scope": "read-only"}}))
        .await;
    assert_eq!(entered["success"], true, "{entered}");
    let discovered = client.call("afd-discover", json!({})).await;
    assert_eq!(discovered["data"]["context"]["active"], "fulfilment");

    let refused = client
        .call("afd-call", json!({"command": "user-list", "input": {}}))
        .await;
    assert_eq!(refused["error"]["code"], "CONTEXT_MISMATCH");
    // A direct tools/call of a command by name is checked the same way.
    let direct = client.call("order-create", json!({})).await;
    assert_eq!(direct["error"]["code"], "FORBIDDEN");
    let batch = client
        .call(
            "afd-batch",
            json!({"commands": [{"command": "order-list"}, {"command": "user-list"}]}),
        )
        .await;
    assert_eq!(
        batch["results"][1]["result"]["error"]["code"], "CONTEXT_MISMATCH",
        "{batch}"
    );
    let pipe = client
        .call(
            "afd-pipe",
            json!({"steps": [{"command": "afd-context-exit"}, {"command": "user-list"}]}),
        )
        .await;
    assert_eq!(
        pipe["success"], true,
        "exit inside a pipe, then the call is allowed: {pipe}"
    );

    assert_eq!(
        names(&client.tools().await),
        before,
        "the tool list never moved"
    );
    assert_eq!(client.list_changed(), 0);
}

#[tokio::test]
async fn a_stateless_client_carries_the_session_handle_itself() {
    let client = Client::connect_stateless(server(Strategy::Lazy, true)).await;
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    let before = names(&client.tools().await);
    let entered = client
        .call(
            "afd-call",
            json!({"command": "afd-context-enter", "input": {"context": "billing"}}),
        )
        .await;
    let handle = entered["data"]["session"].as_str().unwrap().to_owned();
    // Over stdio-like streams the connection is still the session...
    let refused = client
        .call("afd-call", json!({"command": "user-list"}))
        .await;
    assert_eq!(refused["error"]["code"], "CONTEXT_MISMATCH");
    // ...and an explicit handle (argument or _meta) works on any transport.
    let other = client
        .call("afd-call", json!({"command": "afd-context-enter", "input": {"context": "back-office"}, "session": "afd-s-nope"}))
        .await;
    assert_eq!(other["error"]["code"], "SESSION_NOT_FOUND");
    let via_arg = client
        .call(
            "afd-call",
            json!({"command": "payment-list", "input": {}, "session": handle}),
        )
        .await;
    assert_eq!(via_arg["success"], true, "{via_arg}");
    let via_meta = client
        .call_with_meta("afd-discover", json!({}), json!({"afd/session": handle}))
        .await;
    assert_eq!(via_meta["data"]["context"]["active"], "billing");
    // The 2026-07-28 tool list is one fixed list, whatever the session does.
    assert_eq!(names(&client.tools().await), before);
    assert_eq!(client.list_changed(), 0);
}

#[tokio::test]
async fn individual_tools_follow_a_2025_session_and_changes_are_announced() {
    let client = Client::connect(server(Strategy::Individual, true)).await;
    assert_eq!(client.protocol_version().as_deref(), Some("2025-11-25"));
    let all = names(&client.tools().await);
    assert!(all.contains(&"user-list".to_owned()) && all.contains(&"afd-context-enter".to_owned()));

    let entered = client
        .call("afd-context-enter", json!({"context": "fulfilment"}))
        .await;
    assert_eq!(entered["success"], true, "{entered}");
    assert_eq!(client.wait_list_changed(1).await, 1);
    let scoped = names(&client.tools().await);
    assert!(scoped.contains(&"order-list".to_owned()));
    assert!(scoped.contains(&"product-list".to_owned()), "universal");
    assert!(
        scoped.contains(&"afd-context-exit".to_owned()),
        "the lobby stays"
    );
    assert!(scoped.contains(&"afd-call".to_owned()));
    assert!(!scoped.contains(&"user-list".to_owned()));
    assert!(scoped.len() < all.len());

    client.call("afd-context-exit", json!({})).await;
    assert_eq!(client.wait_list_changed(2).await, 2);
    assert_eq!(names(&client.tools().await), all);
    // A call that changes nothing announces nothing.
    client.call("afd-context-list", json!({})).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(client.list_changed(), 2);
}

#[tokio::test]
async fn lazy_activation_lists_found_tools_for_a_2025_session() {
    let client = Client::connect(server(Strategy::Lazy, true)).await;
    assert_eq!(client.tools().await.len(), 5);
    let detail = client
        .call(
            "afd-detail",
            json!({"command": ["order-list", "user-list"], "activate": true}),
        )
        .await;
    assert_eq!(detail["success"], true, "{detail}");
    assert_eq!(client.wait_list_changed(1).await, 1);
    let tools = client.tools().await;
    assert_eq!(tools.len(), 7);
    let order_list = tools.iter().find(|t| t.name == "order-list").unwrap();
    assert!(
        order_list.input_schema.get("properties").is_some(),
        "the full schema"
    );
    // Undo.
    client
        .call(
            "afd-detail",
            json!({"command": "user-list", "activate": false}),
        )
        .await;
    assert_eq!(client.wait_list_changed(2).await, 2);
    assert_eq!(client.tools().await.len(), 6);
}

#[tokio::test]
async fn grouped_lists_the_context_operations_as_their_own_tools_and_checks_actions() {
    let client = Client::connect(server(Strategy::Grouped, false)).await;
    let tools = names(&client.tools().await);
    for op in [
        "afd-context-list",
        "afd-context-enter",
        "afd-context-exit",
        "afd-context-suggest",
    ] {
        assert!(tools.contains(&op.to_owned()), "{op} in {tools:?}");
    }
    assert!(!tools.contains(&"context".to_owned()));
    client
        .call("afd-context-enter", json!({"context": "storefront"}))
        .await;
    let refused = client.call("user", json!({"action": "user-list"})).await;
    assert_eq!(refused["error"]["code"], "CONTEXT_MISMATCH");
}

#[tokio::test]
async fn two_http_sessions_keep_separate_context_stacks() {
    let handle = server(Strategy::Lazy, false)
        .bind_http(HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .unwrap();
    let addr = handle.local_addr();
    let (mut a, mut b) = tokio::join!(
        HttpSession::open(addr, "/mcp"),
        HttpSession::open(addr, "/mcp")
    );
    assert_ne!(a.id(), b.id());
    let (entered_a, entered_b) = tokio::join!(
        a.call(
            "afd-call",
            json!({"command": "afd-context-enter", "input": {"context": "billing"}})
        ),
        b.call(
            "afd-call",
            json!({"command": "afd-context-enter", "input": {"context": "back-office"}})
        ),
    );
    assert_eq!(entered_a["success"], true, "{entered_a}");
    assert_ne!(entered_a["data"]["session"], entered_b["data"]["session"]);
    let (in_a, in_b) = tokio::join!(
        a.call("afd-call", json!({"command": "user-list", "input": {}})),
        b.call("afd-call", json!({"command": "user-list", "input": {}})),
    );
    assert_eq!(in_a["error"]["code"], "CONTEXT_MISMATCH", "{in_a}");
    assert_eq!(in_b["success"], true, "{in_b}");
    let discovered = a.call("afd-discover", json!({})).await;
    assert_eq!(discovered["data"]["context"]["active"], "billing");
    b.call("afd-call", json!({"command": "afd-context-exit"}))
        .await;
    let still = a.call("afd-discover", json!({})).await;
    assert_eq!(still["data"]["context"]["active"], "billing");
    handle.shutdown().await;
}

#[tokio::test]
async fn the_review_agent_reads_in_read_only_contexts_and_is_refused_a_restock() {
    let d = dispatcher(NoContextPolicy::Open);
    let run = afd_examples::review::run(&d, &store()).await.unwrap();
    let outcomes: Vec<(&str, &str)> = run.steps.iter().map(|s| (s.command, s.outcome())).collect();
    assert_eq!(
        outcomes,
        [
            ("afd-context-suggest", "OK"),
            ("afd-context-enter", "OK"),
            ("report-order-status", "OK"),
            ("report-refund-rate", "OK"),
            ("afd-context-exit", "OK"),
            ("afd-context-enter", "OK"),
            ("inventory-list", "OK"),
            ("inventory-restock", "FORBIDDEN"),
            ("afd-context-exit", "OK"),
        ]
    );
    let suggested = run
        .step("afd-context-suggest")
        .unwrap()
        .result
        .data
        .clone()
        .unwrap();
    assert_eq!(suggested["suggestions"][0]["suggestedContext"], "audit");
    let entered = run
        .step("afd-context-enter")
        .unwrap()
        .result
        .data
        .clone()
        .unwrap();
    assert_eq!(entered["scope"], "read-only", "audit is declared read-only");
    assert_eq!(
        d.session(&run.session)
            .await
            .unwrap()
            .unwrap()
            .active_context(),
        None
    );
}

#[tokio::test]
async fn an_option_lists_the_context_operations_as_tools_in_lazy() {
    let server = McpServer::builder(Registry::global())
        .strategy(Strategy::Lazy)
        .dispatch(|d| d.expose_only(shop::COMMAND_NAMES))
        .context_tools(true)
        .build()
        .unwrap();
    let listed: Vec<String> = server.tools().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        listed,
        [
            "afd-discover",
            "afd-detail",
            "afd-call",
            "afd-batch",
            "afd-pipe",
            "afd-context-enter",
            "afd-context-exit",
            "afd-context-list",
            "afd-context-suggest"
        ]
    );
    let client = Client::connect(server).await;
    let entered = client
        .call("afd-context-enter", json!({"context": "audit"}))
        .await;
    assert_eq!(entered["data"]["scope"], "read-only");
}

#[tokio::test]
async fn grouped_tools_offer_only_the_sessions_actions() {
    let client = Client::connect(server(Strategy::Grouped, true)).await;
    let before = client.tools().await;
    let actions = |tools: &[rmcp::model::Tool], group: &str| -> Vec<String> {
        let tool = tools.iter().find(|t| t.name == group).expect(group);
        tool.input_schema["properties"]["action"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        actions(&before, "order"),
        ["order-cancel", "order-create", "order-list"]
    );
    client
        .call(
            "afd-context-enter",
            json!({"context": "fulfilment", "scope": "read-only"}),
        )
        .await;
    assert_eq!(client.wait_list_changed(1).await, 1);
    let after = client.tools().await;
    assert_eq!(actions(&after, "order"), ["order-list"]);
    assert!(
        after.iter().all(|t| t.name != "user"),
        "no callable user command"
    );
}

#[tokio::test]
async fn context_operations_reach_observers_as_meta_calls() {
    use afd_runtime::CallKind;
    use afd_runtime::middleware::{TelemetryEvent, TelemetryLayer};
    use std::sync::{Arc, Mutex};

    let events: Arc<Mutex<Vec<TelemetryEvent>>> = Arc::default();
    let sink = events.clone();
    let d = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .layer(TelemetryLayer::new(move |event| {
            sink.lock().unwrap().push(event)
        }))
        .build()
        .unwrap();
    let ctx = store().with_session(d.open_session().await.unwrap());
    enter(&d, &ctx, "billing", None).await;
    let listed = call(&d, &ctx, "product-list", json!({})).await;
    let events = events.lock().unwrap();
    assert_eq!(events[0].command, "afd-context-enter");
    assert_eq!(events[0].kind, CallKind::Meta);
    assert_eq!(events[1].command, "product-list");
    assert_eq!(events[1].kind, CallKind::Command);
    assert_eq!(events[1].success, listed.success);
}
