//! Resources, prompts and completions declared with `#[resource]` and `#[prompt]`: in
//! process through `Resources` and `Prompts` (reads, template matching, completions, every
//! structured error), over MCP with an in-process rmcp client (subscriptions per
//! connection, forgotten when it ends), and through the official Python client
//! (`tests/interop/declared.py` against the `afd-decl-fixture` binary, over stdio and
//! streamable HTTP).
//!
//! The Python half needs the client: `.ci/run` installs it and sets `AFD_INTEROP_PYTHON`.
//! Without it the test says so and passes, except under `CI`, where it fails. By hand:
//!
//! ```sh
//! AFD_INTEROP_PYTHON=.venv/bin/python cargo test -p afd-tests --test declared
//! ```

use std::sync::{Arc, Mutex};

use afd_runtime::mcp::McpServer;
use afd_runtime::prelude::*;
use afd_runtime::prompt::{PromptMessage, Prompts, Role};
use afd_runtime::resource::Resources;
use afd_runtime::{Content, ResourceContents};

/// A greeting.
#[resource(uri = "demo://greeting", title = "Greeting")]
fn greeting() -> String {
    "hello".to_owned()
}

/// Raw bytes.
#[resource(uri = "demo://bytes", mime_type = "application/x-demo")]
async fn bytes() -> Vec<u8> {
    vec![1, 2, 3]
}

/// One order, by number and line.
#[resource(
    uri_template = "demo://orders/{number}/lines/{line}",
    mime_type = "application/json",
    complete(number = order_numbers, line = order_lines)
)]
fn order_line(number: u32, line: String, ctx: &CommandContext) -> Result<String, CommandError> {
    let prefix = ctx.state::<String>().map(|s| s.as_str()).unwrap_or("order");
    if number == 0 {
        return Err(CommandError::not_found("Order", number));
    }
    Ok(format!("{prefix} {number} line {line}"))
}

fn order_numbers(_typed: &str) -> Vec<String> {
    ["100", "101", "200"].map(str::to_owned).to_vec()
}

/// The lines of the order already chosen: order 100 has three, the others one.
fn order_lines(_typed: &str, args: &CompletionArgs) -> Vec<String> {
    let lines = if args.get("number") == Some("100") {
        3
    } else {
        1
    };
    (1..=lines).map(|line| line.to_string()).collect()
}

/// Contents built by hand, two of them.
#[resource(uri = "demo://pair", description = "Two contents at once.")]
fn pair() -> Vec<ResourceContents> {
    vec![
        ResourceContents::text("demo://pair#1", "one"),
        ResourceContents::blob("demo://pair#2", [9u8]),
    ]
}

/// Fails inside the server.
#[resource(uri = "demo://broken")]
fn broken() -> String {
    panic!("broken on purpose")
}

/// The arguments of `summarise`.
#[derive(Deserialize, JsonSchema)]
struct Summarise {
    /// What to summarise.
    topic: String,
    /// How long, in words.
    length: Option<String>,
}

/// Summarise a topic.
#[prompt(title = "Summary", complete(topic = topics))]
async fn summarise(args: Summarise, ctx: CommandContext) -> Vec<PromptMessage> {
    let _ = ctx;
    vec![
        PromptMessage::user(format!(
            "Summarise {} in {} words.",
            args.topic,
            args.length.as_deref().unwrap_or("100")
        )),
        PromptMessage::assistant(Content::image([1u8, 2], "image/png")),
    ]
}

fn topics(_typed: &str) -> Vec<String> {
    ["rust", "ruby", "go"].map(str::to_owned).to_vec()
}

/// Fails with the app's own error.
#[prompt(name = "refuses")]
fn refuses() -> Result<String, CommandError> {
    Err(CommandError::new("FORBIDDEN", "not today"))
}

fn uris(
    resources: impl Iterator<Item = &'static afd_runtime::resource::ResourceDef>,
) -> Vec<&'static str> {
    resources.map(|def| def.uri()).collect()
}

#[test]
fn declarations_are_collected_sorted() {
    let resources = Resources::global();
    assert_eq!(
        uris(resources.resources()),
        [
            "demo://broken",
            "demo://bytes",
            "demo://greeting",
            "demo://pair"
        ]
    );
    assert_eq!(
        uris(resources.templates()),
        ["demo://orders/{number}/lines/{line}"]
    );
    let greeting = resources
        .resources()
        .find(|d| d.uri() == "demo://greeting")
        .unwrap();
    assert_eq!(
        (greeting.name(), greeting.title(), greeting.description()),
        ("greeting", Some("Greeting"), "A greeting.")
    );
    let pair = resources
        .resources()
        .find(|d| d.uri() == "demo://pair")
        .unwrap();
    assert_eq!(pair.description(), "Two contents at once.");

    let names: Vec<&str> = Prompts::global().list().iter().map(|p| p.name()).collect();
    assert_eq!(names, ["refuses", "summarise"]);
    let summarise = Prompts::global().get("summarise").unwrap();
    assert_eq!(summarise.title(), Some("Summary"));
    let arguments: Vec<(&str, bool, Option<&str>)> = summarise
        .arguments()
        .iter()
        .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
        .collect();
    assert_eq!(
        arguments,
        [
            ("topic", true, Some("What to summarise.")),
            ("length", false, Some("How long, in words."))
        ]
    );
}

#[tokio::test]
async fn reads_text_bytes_templates_and_contents() {
    let resources = Resources::global();
    let ctx = CommandContext::new().with_state("line of order".to_owned());
    let read = |uri: &'static str| resources.read(uri, ctx.clone());

    assert_eq!(
        read("demo://greeting").await.unwrap(),
        [ResourceContents::text("demo://greeting", "hello").with_mime_type("text/plain")]
    );
    assert_eq!(
        read("demo://bytes").await.unwrap(),
        [
            ResourceContents::blob("demo://bytes", [1u8, 2, 3])
                .with_mime_type("application/x-demo")
        ]
    );
    assert_eq!(
        read("demo://orders/7/lines/a%20b").await.unwrap(),
        [
            ResourceContents::text("demo://orders/7/lines/a%20b", "line of order 7 line a b")
                .with_mime_type("application/json")
        ]
    );
    assert_eq!(read("demo://pair").await.unwrap().len(), 2);
}

#[tokio::test]
async fn read_failures_are_structured() {
    let resources = Resources::global();
    let read = |uri: &'static str| resources.read(uri, CommandContext::new());

    let unknown = read("demo://nothing").await.unwrap_err();
    assert_eq!(unknown.code, codes::NOT_FOUND);
    assert_eq!(unknown.message, "no resource at 'demo://nothing'");
    assert!(unknown.suggestion.unwrap().contains("demo://greeting"));

    let not_a_number = read("demo://orders/seven/lines/1").await.unwrap_err();
    assert_eq!(not_a_number.code, codes::VALIDATION_ERROR);
    assert!(
        not_a_number
            .message
            .starts_with("'seven' is not a valid number"),
        "{}",
        not_a_number.message
    );

    let own = read("demo://orders/0/lines/1").await.unwrap_err();
    assert_eq!(own.code, codes::NOT_FOUND);

    let panicked = read("demo://broken").await.unwrap_err();
    assert_eq!(panicked.code, codes::INTERNAL_ERROR);
    assert_eq!(
        panicked.message,
        "reading 'demo://broken' failed inside the server"
    );
}

#[tokio::test]
async fn prompts_render_and_check_their_arguments() {
    let prompts = Prompts::global();
    let args = |value: Value| value.as_object().unwrap().clone();

    let messages = prompts
        .render(
            "summarise",
            args(json!({"topic": "rust"})),
            CommandContext::new(),
        )
        .await
        .unwrap();
    assert_eq!(messages[0].role, Role::User);
    assert_eq!(
        messages[0].content.as_text(),
        Some("Summarise rust in 100 words.")
    );
    assert_eq!(messages[1].role, Role::Assistant);
    assert_eq!(messages[1].content, Content::image([1u8, 2], "image/png"));

    let render =
        |name: &'static str, value: Value| prompts.render(name, args(value), CommandContext::new());
    let missing = render("summarise", json!({"length": "5"}))
        .await
        .unwrap_err();
    assert_eq!(
        (missing.code.as_ref(), missing.message.as_str()),
        (
            codes::VALIDATION_ERROR,
            "missing required argument 'topic' for prompt 'summarise'"
        )
    );
    assert_eq!(
        missing.suggestion.as_deref(),
        Some("Its arguments: topic, length.")
    );

    let unknown_arg = render("summarise", json!({"topic": "x", "colour": "red"}))
        .await
        .unwrap_err();
    assert_eq!(
        unknown_arg.message,
        "the prompt 'summarise' has no argument 'colour'"
    );

    let wrong_type = render("summarise", json!({"topic": 5})).await.unwrap_err();
    assert_eq!(wrong_type.code, codes::VALIDATION_ERROR);

    let unknown = render("sumarise", json!({})).await.unwrap_err();
    assert_eq!(unknown.code, codes::NOT_FOUND);
    assert_eq!(
        unknown.suggestion.as_deref(),
        Some("Did you mean 'summarise'? List the prompts with prompts/list.")
    );

    let own = render("refuses", json!({})).await.unwrap_err();
    assert_eq!(
        (own.code.as_ref(), own.message.as_str()),
        ("FORBIDDEN", "not today")
    );
}

#[test]
fn completions_filter_by_what_was_typed() {
    let completed = Prompts::global()
        .complete("summarise", "topic", "R")
        .unwrap();
    assert_eq!(completed.values, ["rust", "ruby"]);
    assert!(
        Prompts::global()
            .complete("summarise", "length", "1")
            .unwrap()
            .values
            .is_empty()
    );
    let unknown = Prompts::global()
        .complete("summarise", "colour", "")
        .unwrap_err();
    assert_eq!(unknown.code, codes::NOT_FOUND);

    let template = "demo://orders/{number}/lines/{line}";
    let resources = Resources::global();
    assert_eq!(
        resources.complete(template, "number", "1").unwrap().values,
        ["100", "101"]
    );
    // A completion that reads the variables already chosen.
    assert_eq!(
        resources.complete(template, "line", "").unwrap().values,
        ["1"]
    );
    let chosen = afd_runtime::completion::CompletionArgs::from_iter([("number", "100")]);
    assert_eq!(
        resources
            .complete_with(template, "line", "", &chosen)
            .unwrap()
            .values,
        ["1", "2", "3"]
    );
    assert_eq!(
        resources
            .complete(template, "colour", "")
            .unwrap_err()
            .message,
        "the template 'demo://orders/{number}/lines/{line}' has no variable 'colour'"
    );
    assert_eq!(
        resources
            .complete("demo://nope/{x}", "x", "")
            .unwrap_err()
            .code,
        codes::NOT_FOUND
    );
}

#[test]
fn conflicting_declarations_are_refused_with_both_locations() {
    let twice = Resources::from_defs([greeting::RESOURCE, greeting::RESOURCE]).unwrap_err();
    assert!(
        twice
            .to_string()
            .starts_with("two resources are declared at `demo://greeting`: at tests/declared.rs:"),
        "{twice}"
    );
    let twice = Prompts::from_defs([refuses::PROMPT, refuses::PROMPT]).unwrap_err();
    assert!(
        twice
            .to_string()
            .starts_with("two prompts are named `refuses`"),
        "{twice}"
    );
    assert!(Resources::empty().is_empty());
}

/// A client that records the `notifications/resources/updated` it receives.
#[derive(Clone, Default)]
struct Watcher {
    updated: Arc<Mutex<Vec<String>>>,
    arrived: Arc<tokio::sync::Notify>,
}

impl rmcp::ClientHandler for Watcher {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
        self.arrived.notify_waiters();
    }
}

impl Watcher {
    async fn connect(
        server: &McpServer,
    ) -> (
        rmcp::service::RunningService<rmcp::RoleClient, Watcher>,
        Watcher,
    ) {
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let connection = server.clone();
        tokio::spawn(async move {
            let (read, write) = tokio::io::split(server_io);
            let _ = connection.serve_stream(read, write).await;
        });
        let watcher = Watcher::default();
        let service = rmcp::ServiceExt::serve(watcher.clone(), client_io)
            .await
            .expect("the client connects");
        (service, watcher)
    }

    /// Until `count` updates have arrived (the test's timeout bounds it).
    async fn wait_for(&self, count: usize) -> Vec<String> {
        loop {
            let arrived = self.arrived.notified();
            let updated = self.updated.lock().unwrap().clone();
            if updated.len() >= count {
                return updated;
            }
            arrived.await;
        }
    }
}

/// Waits until `uri` has no subscriber left; fails with `why` after 20 seconds.
async fn until_unsubscribed(
    updates: &afd_runtime::resource::ResourceUpdates,
    uri: &str,
    why: &str,
) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while updates.subscribers(uri) > 0 {
        assert!(tokio::time::Instant::now() < deadline, "{why}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the 2025 protocol generation's, spoken here on purpose
async fn updates_reach_subscribed_connections_only_and_end_with_them() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};

    let server = McpServer::builder(Registry::global()).build().unwrap();
    let resources = server.resources().clone();
    let (a, a_updates) = Watcher::connect(&server).await;
    let (b, b_updates) = Watcher::connect(&server).await;

    let info = a.peer().peer_info().unwrap();
    let capabilities = serde_json::to_value(&info.capabilities).unwrap();
    assert_eq!(capabilities["resources"]["subscribe"], true);
    assert!(capabilities["prompts"].is_object() && capabilities["completions"].is_object());

    a.peer()
        .subscribe(SubscribeRequestParams::new("demo://greeting"))
        .await
        .unwrap();
    b.peer()
        .subscribe(SubscribeRequestParams::new("demo://orders/1/lines/2"))
        .await
        .unwrap();
    let refused = b
        .peer()
        .subscribe(SubscribeRequestParams::new("demo://nothing"))
        .await
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("no resource at 'demo://nothing'"),
        "{refused}"
    );

    let wait = std::time::Duration::from_secs(20);
    assert_eq!(resources.updated("demo://greeting").await, 1);
    assert_eq!(resources.updated("demo://orders/1/lines/2").await, 1);
    let b_got = tokio::time::timeout(wait, b_updates.wait_for(1))
        .await
        .unwrap();
    let a_got = tokio::time::timeout(wait, a_updates.wait_for(1))
        .await
        .unwrap();
    assert_eq!(a_got, ["demo://greeting"]);
    assert_eq!(b_got, ["demo://orders/1/lines/2"]);

    a.peer()
        .unsubscribe(UnsubscribeRequestParams::new("demo://greeting"))
        .await
        .unwrap();
    assert_eq!(resources.updated("demo://greeting").await, 0);

    // A connection that ends takes its subscriptions with it.
    assert_eq!(
        resources.updates().subscribers("demo://orders/1/lines/2"),
        1
    );
    b.cancel().await.unwrap();
    until_unsubscribed(
        resources.updates(),
        "demo://orders/1/lines/2",
        "the ended connection's subscription stayed",
    )
    .await;
    a.cancel().await.unwrap();
}

/// On the 2026-07-28 protocol a client subscribes with `subscriptions/listen`: it is granted
/// the declared resources among those it names, gets their updates on that request (no
/// others) and, when it asked, the tool list's changes the server announces; its
/// subscriptions end when it cancels the request or its connection ends.
#[tokio::test]
async fn a_2026_client_listens_for_updates_until_it_cancels() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};

    // URIs no other test subscribes to: the declared resources' updates are shared by
    // every server of this process.
    let server = McpServer::builder(Registry::global()).build().unwrap();
    let resources = server.resources().clone();
    let changes = server.list_changes().clone();
    let client = afd_tests::mcp::Client::connect_stateless(server).await;
    assert_eq!(client.protocol_version().as_deref(), Some("2026-07-28"));
    let wait = std::time::Duration::from_secs(20);

    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(["demo://pair", "demo://nothing"])
        .tools_list_changed()
        .build();
    let mut subscription = tokio::time::timeout(wait, client.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    let granted = subscription.acknowledged().clone();
    assert_eq!(
        granted.resource_subscriptions.as_deref(),
        Some(&["demo://pair".to_owned()][..]),
        "only the declared resource is granted"
    );
    assert_eq!(
        granted.tools_list_changed,
        Some(true),
        "tool list changes are announced"
    );

    assert_eq!(resources.updated("demo://orders/3/lines/4").await, 0);
    assert_eq!(resources.updated("demo://pair").await, 1);
    let notification = tokio::time::timeout(wait, subscription.next())
        .await
        .unwrap()
        .unwrap()
        .expect("an update");
    let ServerNotification::ResourceUpdatedNotification(updated) = notification else {
        panic!("expected a resource update, got {notification:?}");
    };
    assert_eq!(updated.params.uri, "demo://pair");

    // A change of the tool list the server announces reaches the stream that asked for it.
    changes.tools_changed();
    let notification = tokio::time::timeout(wait, subscription.next())
        .await
        .unwrap()
        .unwrap()
        .expect("a change");
    assert!(
        matches!(
            notification,
            ServerNotification::ToolListChangedNotification(_)
        ),
        "expected the tool list's change, got {notification:?}"
    );
    // One that did not ask is not told.
    let quiet = SubscriptionFilter::builder()
        .resource_subscriptions(["demo://pair"])
        .build();
    let mut quiet = client.peer().listen(quiet).await.unwrap();
    assert_eq!(quiet.acknowledged().tools_list_changed, None);
    changes.tools_changed();
    assert!(
        tokio::time::timeout(std::time::Duration::from_millis(300), quiet.next())
            .await
            .is_err(),
        "a stream that did not ask for tool list changes heard one"
    );
    quiet.cancel().await.unwrap();
    let _ = tokio::time::timeout(wait, subscription.next()).await;

    // The legacy methods are not part of this protocol: rmcp refuses them.
    #[allow(deprecated)]
    let legacy = client
        .peer()
        .subscribe(rmcp::model::SubscribeRequestParams::new("demo://pair"))
        .await;
    assert!(legacy.is_err());

    subscription.cancel().await.unwrap();
    until_unsubscribed(
        resources.updates(),
        "demo://pair",
        "the cancelled stream's subscription stayed",
    )
    .await;

    // A stream whose connection ends takes its subscriptions with it too.
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions(["demo://pair"])
        .build();
    let _open = client.peer().listen(filter).await.unwrap();
    assert_eq!(resources.updates().subscribers("demo://pair"), 1);
    client.close().await;
    until_unsubscribed(
        resources.updates(),
        "demo://pair",
        "the closed connection's subscription stayed",
    )
    .await;
}

/// Over MCP, a completion request's `context.arguments` (the values already chosen) reach
/// the completion function.
#[tokio::test]
async fn completions_over_mcp_see_the_arguments_already_chosen() {
    use rmcp::model::{ArgumentInfo, CompleteRequestParams, CompletionContext, Reference};
    let server = McpServer::builder(Registry::global()).build().unwrap();
    let client = afd_tests::mcp::Client::connect(server).await;
    let request = |context: Option<CompletionContext>| {
        let mut params = CompleteRequestParams::new(
            Reference::for_resource("demo://orders/{number}/lines/{line}"),
            ArgumentInfo::new("line", ""),
        );
        params.context = context;
        params
    };
    let alone = client.peer().complete(request(None)).await.unwrap();
    assert_eq!(alone.completion.values, ["1"]);
    let chosen = CompletionContext::with_arguments(
        [("number".to_owned(), "100".to_owned())]
            .into_iter()
            .collect(),
    );
    let after = client.peer().complete(request(Some(chosen))).await.unwrap();
    assert_eq!(after.completion.values, ["1", "2", "3"]);
    assert_eq!(after.completion.total, Some(3));
}

#[test]
fn the_official_python_client_reads_gets_completes_and_subscribes() {
    let Some(python) = afd_tests::python::client() else {
        return;
    };
    afd_tests::python::run_checks(
        &python,
        "declared.py",
        [env!("CARGO_BIN_EXE_afd-decl-fixture")],
    );
}

/// `prompts/list` and `resources/templates/list` page like `tools/list` and
/// `resources/list`: `page_size` items a page, an opaque cursor to the next, a made-up
/// cursor refused.
#[tokio::test]
async fn prompts_and_resource_templates_are_paginated() {
    use rmcp::model::PaginatedRequestParams;
    let server = McpServer::builder(Registry::global())
        .page_size(1)
        .build()
        .unwrap();
    let client = afd_tests::mcp::Client::connect(server).await;
    let peer = client.peer();
    let with = |cursor: Option<String>| {
        cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)))
    };

    let (mut prompts, mut cursor, mut pages) = (Vec::new(), None, 0);
    loop {
        let page = peer.list_prompts(with(cursor)).await.unwrap();
        assert_eq!(page.prompts.len(), 1);
        pages += 1;
        prompts.extend(page.prompts.into_iter().map(|p| p.name));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let declared: Vec<&str> = Prompts::global().list().iter().map(|p| p.name()).collect();
    assert!(declared.len() >= 2, "{declared:?}");
    assert_eq!(prompts, declared);
    assert_eq!(pages, declared.len());

    let (mut templates, mut cursor) = (Vec::new(), None);
    loop {
        let page = peer.list_resource_templates(with(cursor)).await.unwrap();
        assert_eq!(page.resource_templates.len(), 1);
        templates.extend(page.resource_templates.into_iter().map(|t| t.uri_template));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    // The declared templates, then the catalog's two.
    assert_eq!(
        templates.len(),
        Resources::global().templates().count() + 2,
        "{templates:?}"
    );
    assert!(templates.contains(&"afd://commands/{name}".to_owned()));
    assert!(templates.contains(&"afd://categories/{name}".to_owned()));

    for bad in [
        peer.list_prompts(with(Some("afd1:ff".into()))).await.err(),
        peer.list_resource_templates(with(Some("nonsense".into())))
            .await
            .err(),
    ] {
        assert!(bad.is_some(), "a made-up cursor is refused");
    }
}
