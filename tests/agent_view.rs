//! What an agent sees through a real MCP client (rmcp, over an in-process duplex): search
//! that loads what it finds, each command's risk, title, `destructiveHint` and
//! `openWorldHint`, the detail level
//! `description`, telemetry that names what the caller used and sees the built-in tools,
//! and usage statistics turned into suggestions (`suggestedNext`, `relatedCommands`,
//! `popular`) and access counts.

use std::sync::{Arc, Mutex};

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::middleware::{TelemetryEvent, TelemetryLayer};
use afd_runtime::prelude::*;
use afd_runtime::usage::{AccessCounts, UsageStats};
use afd_runtime::{CallKind, Risk};
use afd_tests::mcp::Client;

// ---- fixtures ---------------------------------------------------------------------------

#[derive(Deserialize, JsonSchema)]
struct OrderId {
    /// The order.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// List the orders of the shop.
#[command(category = "order")]
fn order_list(_input: Nothing) -> CommandResult<Value> {
    CommandResult::success(json!([{"id": "o-1"}]))
}

/// Cancel an order: it cannot be reopened.
#[command(
    title = "Cancel order",
    category = "order",
    mutation,
    destructive,
    aliases("cancel-order"),
    deprecated_aliases("order-void")
)]
fn order_cancel(input: OrderId) -> CommandResult<Value> {
    CommandResult::success(json!({"cancelled": input.id}))
}

/// Refund the payment of an order.
#[command(category = "order", mutation, idempotent)]
fn order_refund(input: OrderId) -> CommandResult<Value> {
    CommandResult::success(json!({"refunded": input.id}))
}

#[derive(Deserialize, JsonSchema)]
struct Url {
    /// The page.
    url: String,
}

/// Fetch a web page and return its title.
#[command(category = "web", open_world)]
fn web_fetch(input: Url) -> CommandResult<Value> {
    CommandResult::success(json!({"url": input.url, "title": "Example"}))
}

/// Search the web for pages about words.
#[command(category = "web", open_world)]
fn web_search(_input: Nothing) -> CommandResult<Value> {
    CommandResult::success(json!([]))
}

/// Say which session this call runs in.
#[command(category = "debug")]
fn session_whoami(_input: Nothing, ctx: &CommandContext) -> CommandResult<Value> {
    CommandResult::success(json!(ctx.session()))
}

/// Get one order by its id.
#[command(category = "order")]
fn order_get(input: OrderId) -> CommandResult<Value> {
    CommandResult::success(json!({"id": input.id}))
}

/// Track the delivery of an order.
#[command(category = "order")]
fn order_track(input: OrderId) -> CommandResult<Value> {
    CommandResult::success(json!({"id": input.id, "status": "shipped"}))
}

fn server_with(strategy: Strategy, usage: UsageStats, events: Events) -> McpServer {
    McpServer::builder(Registry::global())
        .name("agent-view")
        .strategy(strategy)
        .session_tools(true)
        .dispatch(move |d| {
            d.usage(usage).layer(TelemetryLayer::new(move |event| {
                events.lock().unwrap().push(event)
            }))
        })
        .build()
        .unwrap()
}

type Events = Arc<Mutex<Vec<TelemetryEvent>>>;

fn server(strategy: Strategy) -> McpServer {
    server_with(strategy, UsageStats::in_memory(), Events::default())
}

fn names(listed: &Value) -> Vec<&str> {
    listed["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

// ---- search that loads ------------------------------------------------------------------

#[tokio::test]
async fn a_search_with_activate_loads_its_matches_for_the_session() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let before: Vec<String> = client
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(!before.contains(&"order-cancel".to_owned()));

    let found = client
        .call(
            "afd-discover",
            json!({"search": "cancel an order", "activate": true, "limit": 1}),
        )
        .await;
    assert_eq!(found["success"], true, "{found}");
    assert_eq!(names(&found), ["order-cancel"]);
    let data = &found["data"];
    assert_eq!(data["loadedBefore"], json!([]));
    assert_eq!(data["loadedAfter"], json!(["order-cancel"]));
    let instruction = data["nextInstruction"].as_str().unwrap();
    assert!(
        instruction.contains("order-cancel") && instruction.contains("afd-call"),
        "{instruction}"
    );

    // The session's listing changed: announced, and the next tools/list carries it with its
    // schema.
    assert_eq!(client.wait_list_changed(1).await, 1);
    let tools = client.tools().await;
    let loaded = tools
        .iter()
        .find(|t| t.name == "order-cancel")
        .expect("order-cancel is listed once loaded");
    assert!(loaded.input_schema["properties"]["id"].is_object());
    let cancelled = client.call("order-cancel", json!({"id": "o-1"})).await;
    assert_eq!(cancelled["data"]["cancelled"], "o-1");

    // A later search leaves the loaded command out, and says so; includeLoaded lists it.
    let again = client
        .call("afd-discover", json!({"search": "cancel an order"}))
        .await;
    assert!(!names(&again).contains(&"order-cancel"), "{again}");
    assert!(
        again["reasoning"]
            .as_str()
            .unwrap()
            .contains("already loaded"),
        "{again}"
    );
    let included = client
        .call(
            "afd-discover",
            json!({"search": "cancel an order", "includeLoaded": true}),
        )
        .await;
    assert_eq!(names(&included)[0], "order-cancel");
    // Without activate, nothing is loaded and no loading fields appear.
    assert!(included["data"].get("loadedAfter").is_none());

    // Loading more keeps what was loaded before.
    let more = client
        .call(
            "afd-discover",
            json!({"search": "refund", "activate": true, "limit": 1}),
        )
        .await;
    assert_eq!(more["data"]["loadedBefore"], json!(["order-cancel"]));
    assert_eq!(
        more["data"]["loadedAfter"],
        json!(["order-cancel", "order-refund"])
    );
    assert_eq!(client.wait_list_changed(2).await, 2);
}

#[tokio::test]
async fn a_search_that_nothing_fits_loads_nothing_and_names_the_nearest_apart() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let found = client
        .call(
            "afd-discover",
            json!({"search": ["book a flight to Lisbon for Friday", "flight booking"], "activate": true}),
        )
        .await;
    assert_eq!(found["success"], true, "{found}");
    let data = &found["data"];
    assert_eq!(data["match"], "none", "{found}");
    assert_eq!(data["commands"], json!([]));
    assert_eq!(data["loadedAfter"], json!([]));
    assert!(data["nextStep"].as_str().unwrap().contains("ask the user"));
    assert!(
        data["nextInstruction"]
            .as_str()
            .unwrap()
            .starts_with("Nothing was loaded"),
        "{found}"
    );
    let answered = client
        .call(
            "afd-discover",
            json!({"search": ["cancel an order", "order cancel"]}),
        )
        .await;
    assert_ne!(answered["data"]["match"], "none", "{answered}");
    let first = &answered["data"]["commands"][0];
    assert_eq!(first["name"], "order-cancel");
    let confidence = first["confidence"].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&confidence), "{answered}");
}

#[tokio::test]
async fn loading_needs_a_session() {
    // In-process, with no session handle: activate is refused with a way out (over MCP the
    // connection or the `afd/session` handle is the session).
    let dispatcher = afd_runtime::Dispatcher::builder(Registry::global())
        .build()
        .unwrap();
    let refused = dispatcher
        .discover(json!({"search": "cancel", "activate": true}))
        .await;
    let error = refused.error.expect("refused");
    assert_eq!(error.code, "SESSION_NOT_FOUND");
    assert!(error.suggestion.is_some());
    // A session handle it does not know is refused too.
    let unknown = dispatcher
        .discover(json!({"search": "cancel", "activate": true, "session": "nope"}))
        .await;
    assert_eq!(unknown.error.unwrap().code, "SESSION_NOT_FOUND");
}

// ---- risk and openWorldHint -------------------------------------------------------------

#[tokio::test]
async fn risk_follows_the_flags_and_open_world_is_announced() {
    assert_eq!(
        Registry::global().get("web-fetch").unwrap().def().risk(),
        Risk::External
    );
    let client = Client::connect(server(Strategy::Lazy)).await;
    let listed = client
        .call(
            "afd-discover",
            json!({"category": "order", "includeMutation": true}),
        )
        .await;
    let risk = |name: &str| {
        listed["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .map(|c| c["risk"].clone())
            .unwrap()
    };
    assert_eq!(risk("order-list"), "read");
    assert_eq!(risk("order-refund"), "write");
    assert_eq!(risk("order-cancel"), "destructive");
    let web = client
        .call("afd-discover", json!({"category": "web", "detail": "full"}))
        .await;
    assert_eq!(web["data"]["commands"][0]["risk"], "external");
    // Without includeMutation (and below full), no risk: it costs tokens.
    let plain = client
        .call("afd-discover", json!({"category": "web"}))
        .await;
    assert!(plain["data"]["commands"][0].get("risk").is_none());

    let detail = client
        .call(
            "afd-detail",
            json!({"command": ["web-fetch", "order-cancel"]}),
        )
        .await;
    assert_eq!(detail["data"][0]["risk"], "external");
    assert_eq!(detail["data"][0]["openWorld"], true);
    assert_eq!(detail["data"][1]["risk"], "destructive");
    assert!(detail["data"][1].get("openWorld").is_none());

    let tools = Client::connect(server(Strategy::Individual))
        .await
        .tools()
        .await;
    let hint = |name: &str| {
        tools
            .iter()
            .find(|t| t.name == name)
            .and_then(|t| t.annotations.as_ref())
            .and_then(|a| a.open_world_hint)
    };
    // MCP's default is open world: a closed-world command says `false`, an open-world one
    // leaves it to the default (listings state only what differs from the defaults).
    assert_eq!(hint("order-list"), Some(false), "a closed-world command");
    assert_eq!(hint("order-cancel"), Some(false));
    assert_eq!(hint("web-fetch"), None, "open world: MCP's default");
}

// ---- the design documents' names ----------------------------------------------------------

#[tokio::test]
async fn the_description_detail_level_is_the_summary_level() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let described = client
        .call(
            "afd-discover",
            json!({"category": "order", "detail": "description"}),
        )
        .await;
    let summary = client
        .call(
            "afd-discover",
            json!({"category": "order", "detail": "summary"}),
        )
        .await;
    assert_eq!(described["success"], true, "{described}");
    assert_eq!(described["data"]["commands"], summary["data"]["commands"]);
    assert!(described["data"]["commands"][0]["description"].is_string());
}

// ---- telemetry --------------------------------------------------------------------------

#[tokio::test]
async fn telemetry_names_the_alias_used_and_sees_the_built_in_tools() {
    let events = Events::default();
    let client = Client::connect(server_with(
        Strategy::Lazy,
        UsageStats::in_memory(),
        events.clone(),
    ))
    .await;
    let through_alias = client
        .call(
            "afd-call",
            json!({"command": "cancel-order", "input": {"id": "o-1"}}),
        )
        .await;
    assert_eq!(through_alias["success"], true);
    let deprecated = client
        .call(
            "afd-call",
            json!({"command": "order-void", "input": {"id": "o-2"}}),
        )
        .await;
    assert_eq!(deprecated["warnings"][0]["code"], "DEPRECATED_ALIAS");
    client
        .call("afd-discover", json!({"search": "refund"}))
        .await;
    client
        .call("afd-detail", json!({"command": "order-refund"}))
        .await;
    client
        .call(
            "afd-batch",
            json!({"commands": [{"command": "order-list"}, {"command": "order-list"}]}),
        )
        .await;
    client
        .call("afd-pipe", json!({"steps": [{"command": "order-list"}]}))
        .await;
    let bad_batch = client.call("afd-batch", json!({"commands": 5})).await;
    assert_eq!(bad_batch["success"], false);

    let events = events.lock().unwrap();
    let seen: Vec<(&str, &str, CallKind, bool)> = events
        .iter()
        .map(|e| (e.command, e.requested.as_str(), e.kind, e.success))
        .collect();
    assert_eq!(
        seen,
        [
            ("order-cancel", "cancel-order", CallKind::Command, true),
            ("order-cancel", "order-void", CallKind::Command, true),
            ("afd-discover", "afd-discover", CallKind::Meta, true),
            ("afd-detail", "afd-detail", CallKind::Meta, true),
            ("order-list", "order-list", CallKind::Command, true),
            ("order-list", "order-list", CallKind::Command, true),
            ("afd-batch", "afd-batch", CallKind::Meta, true),
            ("order-list", "order-list", CallKind::Command, true),
            ("afd-pipe", "afd-pipe", CallKind::Meta, true),
            ("afd-batch", "afd-batch", CallKind::Meta, false),
        ]
    );
    let failed = events.last().unwrap();
    assert_eq!(failed.error_code.as_deref(), Some("INVALID_BATCH_REQUEST"));
}

// ---- usage an agent can use -------------------------------------------------------------

#[tokio::test]
async fn usage_statistics_become_suggestions_and_access_counts() {
    let usage = UsageStats::in_memory();
    // Three earlier sessions: list, then cancel, then refund.
    for session in ["s1", "s2", "s3"] {
        for command in ["order-list", "order-cancel", "order-refund"] {
            usage.record_now(session, command, true);
        }
    }
    let client = Client::connect(server_with(
        Strategy::Lazy,
        usage.clone(),
        Events::default(),
    ))
    .await;

    // Browsing with no filter names the most called commands.
    let browsed = client.call("afd-discover", json!({})).await;
    let popular: Vec<&str> = browsed["data"]["popular"]
        .as_array()
        .expect("popular")
        .iter()
        .map(|p| p["command"].as_str().unwrap())
        .collect();
    assert_eq!(popular.len(), 3, "{browsed}");
    assert!(popular.contains(&"order-cancel"));
    assert_eq!(browsed["data"]["popular"][0]["calls"], 3);

    // afd-detail of a command: what is used with it, and what follows it.
    let detail = client
        .call("afd-detail", json!({"command": "order-cancel"}))
        .await;
    let entry = &detail["data"][0];
    let next: Vec<&str> = entry["suggestedNext"]
        .as_array()
        .expect("suggestedNext")
        .iter()
        .map(|s| s["command"].as_str().unwrap())
        .collect();
    assert_eq!(next, ["order-refund"]);
    let related: Vec<&str> = entry["relatedCommands"]
        .as_array()
        .expect("relatedCommands")
        .iter()
        .map(|s| s["command"].as_str().unwrap())
        .collect();
    assert_eq!(related.len(), 2, "{entry}");
    assert!(related.contains(&"order-list") && related.contains(&"order-refund"));
    assert_eq!(entry["relatedCommands"][0]["probability"], 1.0);

    // A command nothing followed has no suggestions (and no empty fields).
    let quiet = client
        .call("afd-detail", json!({"command": "web-fetch"}))
        .await;
    assert!(quiet["data"][0].get("suggestedNext").is_none());
    assert!(quiet["data"][0].get("relatedCommands").is_none());

    // Accesses are counted by level: the browse listed every command with its summary,
    // afd-detail read two in full.
    assert_eq!(
        usage.accesses("order-cancel"),
        AccessCounts {
            name: 0,
            summary: 1,
            full: 1
        }
    );
    client
        .call("afd-discover", json!({"search": "fetch", "detail": "name"}))
        .await;
    assert_eq!(usage.accesses("web-fetch").name, 1);
    assert_eq!(usage.accesses("web-fetch").full, 1);
    // Views are not calls.
    assert!(usage.stats("web-fetch").is_none());
}

#[tokio::test]
async fn suggested_next_names_up_to_five_commands() {
    let usage = UsageStats::in_memory();
    // After order-list came six other commands, in sessions of their own.
    let followers = [
        "order-cancel",
        "order-refund",
        "web-fetch",
        "order-get",
        "order-track",
        "web-search",
    ];
    for (i, next) in followers.iter().enumerate() {
        for round in 0..=i {
            let session = format!("s{i}-{round}");
            usage.record_now(&session, "order-list", true);
            usage.record_now(&session, next, true);
        }
    }
    let client = Client::connect(server_with(
        Strategy::Lazy,
        usage.clone(),
        Events::default(),
    ))
    .await;
    // This session's last call was order-list.
    client
        .call("afd-call", json!({"command": "order-list"}))
        .await;
    let found = client
        .call("afd-discover", json!({"search": "order"}))
        .await;
    let next: Vec<&str> = found["data"]["suggestedNext"]
        .as_array()
        .expect("suggestedNext")
        .iter()
        .map(|s| s["command"].as_str().unwrap())
        .collect();
    // The five most frequent followers, most frequent first.
    assert_eq!(
        next,
        [
            "web-search",
            "order-track",
            "order-get",
            "web-fetch",
            "order-refund"
        ]
    );
    let detail = client
        .call("afd-detail", json!({"command": "order-list"}))
        .await;
    assert_eq!(
        detail["data"][0]["suggestedNext"].as_array().unwrap().len(),
        5
    );
}

// ---- the limits let the built-in tools through ------------------------------------------

#[tokio::test]
async fn a_batch_under_a_concurrency_limit_of_one_runs_its_commands() {
    use afd_runtime::middleware::{ConcurrencyLimitLayer, RateLimitLayer};
    use std::time::Duration;

    // Were the batch counted, it would hold the only slot while its commands wait for it.
    let client = Client::connect(
        McpServer::builder(Registry::global())
            .strategy(Strategy::Lazy)
            .dispatch(|d| {
                d.layer(ConcurrencyLimitLayer::new(1))
                    .layer(RateLimitLayer::new(2, Duration::from_secs(3600)))
            })
            .build()
            .unwrap(),
    )
    .await;
    let batch = tokio::time::timeout(
        Duration::from_secs(30),
        client.call(
            "afd-batch",
            json!({"commands": [{"command": "order-list"}, {"command": "order-list"}]}),
        ),
    )
    .await
    .expect("the batch finishes");
    assert_eq!(batch["summary"]["successCount"], 2, "{batch}");
    // The rate limit counted the two commands, not the batch: the next command is refused,
    // a discover is not.
    let third = client
        .call("afd-call", json!({"command": "order-list"}))
        .await;
    assert_eq!(third["error"]["code"], "RATE_LIMITED");
    let discover = client
        .call("afd-discover", json!({"search": "order"}))
        .await;
    assert_eq!(discover["success"], true);
}

// ---- a connection's session ends with it ------------------------------------------------

#[tokio::test]
async fn a_closed_connection_ends_its_session_and_its_live_usage_history() {
    use std::time::Duration;

    let usage = UsageStats::in_memory();
    let server = server_with(Strategy::Lazy, usage.clone(), Events::default());
    let dispatcher = server.dispatcher().clone();
    let client = Client::connect(server).await;
    let who = client.call("session-whoami", json!({})).await;
    let handle = who["data"]
        .as_str()
        .expect("the transport's session")
        .to_owned();
    assert!(dispatcher.session(&handle).await.unwrap().is_some());
    assert_eq!(usage.session_count(), 1);

    drop(client);
    // The server's side of the connection ends once the client's is gone.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while dispatcher.session(&handle).await.unwrap().is_some() || usage.session_count() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session outlived its connection"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // What the session taught the statistics stays.
    assert_eq!(usage.stats("session-whoami").unwrap().calls, 1);
}

// ---- titles and hints in the listings --------------------------------------------------

#[tokio::test]
async fn a_command_tool_carries_its_title_and_states_a_destructive_hint() {
    for strategy in [Strategy::Individual, Strategy::Hybrid] {
        let server = McpServer::builder(Registry::global())
            .strategy(strategy)
            .eager(["order-cancel", "order-refund"])
            .build()
            .unwrap();
        let tools = Client::connect(server).await.tools().await;
        let tool = |name: &str| tools.iter().find(|t| t.name == name).unwrap().clone();
        let cancel = tool("order-cancel");
        assert_eq!(
            cancel.title.as_deref(),
            Some("Cancel order"),
            "{strategy:?}"
        );
        let hints = cancel.annotations.unwrap();
        // MCP's default, stated: clients that do not apply the default still warn.
        assert_eq!(hints.destructive_hint, Some(true), "{strategy:?}");
        assert_eq!(hints.title, None, "{strategy:?}");
        let refund = tool("order-refund");
        // No title declared: the name in words, so that every listed tool has one.
        assert_eq!(
            refund.title.as_deref(),
            Some("Order refund"),
            "{strategy:?}"
        );
        assert_eq!(refund.annotations.unwrap().destructive_hint, Some(false));
    }
    // A category's tool says destructive when one of its actions is.
    let server = McpServer::builder(Registry::global())
        .strategy(Strategy::Grouped)
        .build()
        .unwrap();
    let tools = Client::connect(server).await.tools().await;
    let order = tools.iter().find(|t| t.name == "order").unwrap();
    assert_eq!(
        order.annotations.as_ref().unwrap().destructive_hint,
        Some(true)
    );
    let web = tools.iter().find(|t| t.name == "web").unwrap();
    assert_eq!(web.annotations.as_ref().unwrap().read_only_hint, Some(true));
}
