//! The MCP server through a real rmcp client over an in-process duplex transport: every
//! strategy's listing, the meta-tools, results as structuredContent + text + isError,
//! pagination, and the todo contract replayed through the MCP surface.

use afd_examples::todo::{self, TodoStore};
use afd_runtime::mcp::{McpServer, Strategy};
use afd_tests::conformance::{load_cases, run_case};
use afd_tests::mcp::Client;
use serde_json::{Value, json};

const META: [&str; 5] = [
    "afd-discover",
    "afd-detail",
    "afd-call",
    "afd-batch",
    "afd-pipe",
];

fn server(strategy: Strategy) -> McpServer {
    McpServer::builder(afd_examples::todo::registry())
        .name("todo")
        .version("1.0.0")
        .strategy(strategy)
        .context(todo::context(TodoStore::in_memory().unwrap()))
        .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
        .build()
        .unwrap()
}

fn names(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|t| t.name.to_string()).collect()
}

#[tokio::test]
async fn lazy_lists_exactly_the_five_meta_tools() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let tools = client.tools().await;
    assert_eq!(names(&tools), META);
    for tool in &tools {
        assert_eq!(
            tool.input_schema.get("type"),
            Some(&json!("object")),
            "{}",
            tool.name
        );
        // The three an agent cannot work without always load; batch and pipe may be
        // deferred until searched for.
        let always = tool
            .meta
            .as_ref()
            .and_then(|meta| meta.get("anthropic/alwaysLoad").cloned());
        let essential = ["afd-discover", "afd-detail", "afd-call"].contains(&&*tool.name);
        assert_eq!(always, essential.then(|| json!(true)), "{}", tool.name);
        let read_only = tool.name == "afd-discover" || tool.name == "afd-detail";
        if read_only {
            let annotations = tool.annotations.as_ref().expect("annotations");
            assert_eq!(annotations.read_only_hint, Some(true), "{}", tool.name);
            assert_eq!(annotations.open_world_hint, Some(false), "{}", tool.name);
        } else {
            // A dispatcher may run anything: MCP's defaults (may write and destroy, open
            // world) hold, so nothing is stated.
            assert_eq!(
                tool.annotations, None,
                "{}: possibly destructive",
                tool.name
            );
        }
        // Arguments a result hands the agent when it needs them are not advertised.
        assert!(tool.input_schema["properties"].get("session").is_none());
    }
    // Paging is stated: an agent reading afd-discover's schema sees how to ask for more.
    assert_eq!(
        tools[0].input_schema["properties"]["offset"]["type"],
        "integer"
    );
    let discover = tools[0].description.as_deref().unwrap();
    assert!(discover.contains("11 commands"), "{discover}");
    let instructions = client.instructions().unwrap();
    assert!(
        instructions.contains("afd-discover") && instructions.contains("todo (11)"),
        "{instructions}"
    );
}

#[tokio::test]
async fn discover_searches_with_several_phrasings_and_refuses_bad_ones() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let names = |answer: &Value| -> Vec<String> {
        answer["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // The listing says search takes phrasings, at most three.
    let tools = client.tools().await;
    let discover = &tools[0].input_schema["properties"]["search"];
    assert_eq!(discover["type"], "array", "{discover}");
    assert!(
        discover["description"]
            .as_str()
            .unwrap()
            .starts_with("1-3 phrasings")
    );

    // One phrasing as a string or as a list of one: the same answer.
    let one = client
        .call("afd-discover", json!({"search": "toggle"}))
        .await;
    let listed = client
        .call("afd-discover", json!({"search": ["toggle"]}))
        .await;
    assert_eq!(one["data"], listed["data"]);

    // Phrasings of one request that each find something: one page, each command once, the
    // union ranked. (Phrasings that ask for different things are not one request: the
    // answer's match then says no command does all of it.)
    let fused = client
        .call(
            "afd-discover",
            json!({"search": ["mark a task as finished", "toggle todo", "complete a todo"]}),
        )
        .await;
    assert_eq!(fused["success"], true, "{fused}");
    assert_ne!(fused["data"]["match"], "none", "{fused}");
    let found = names(&fused);
    let mut unique = found.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), found.len(), "{found:?}");
    assert_eq!(
        found.first().map(String::as_str),
        Some("todo-toggle"),
        "{found:?}"
    );
    assert!(found.len() > 1, "{found:?}");
    assert_eq!(fused["data"]["total"], 11);
    assert_eq!(fused["data"]["filtered"], found.len());
    let scores: Vec<f64> = fused["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    // Four phrasings, none, or not strings: the validation error, with a way out.
    for (search, wanted) in [
        (
            json!(["a", "b", "c", "d"]),
            "Field 'search' must have at most 3 items",
        ),
        (json!([]), "Field 'search' must have at least 1 item"),
        (json!(["todo", 5]), "Field 'search[1]' must be a string"),
        (
            json!({"words": "todo"}),
            "Field 'search' must be a string or array",
        ),
    ] {
        let refused = client.call("afd-discover", json!({"search": search})).await;
        assert_eq!(refused["success"], false, "{refused}");
        assert_eq!(refused["error"]["code"], "VALIDATION_ERROR", "{refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(wanted), "{message}");
        assert!(refused["error"]["suggestion"].is_string(), "{refused}");
    }
}

#[tokio::test]
async fn discover_detail_call_workflow() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let found = client
        .call("afd-discover", json!({"search": "toggle"}))
        .await;
    let names: Vec<&str> = found["data"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["todo-toggle", "todo-toggle-batch"]);
    assert_eq!(
        found["reasoning"],
        "Returned 2 of 2 matching commands (11 total)"
    );

    let detail = client
        .call(
            "afd-detail",
            json!({"command": ["todo-create", "todo-craete"]}),
        )
        .await;
    assert_eq!(
        detail["data"][0]["inputSchema"]["required"],
        json!(["title"])
    );
    assert_eq!(detail["data"][0]["callable"], true);
    assert_eq!(
        detail["data"][1]["error"]["suggestion"],
        "Did you mean 'todo-create'? Use afd-discover to list all commands."
    );

    let created = client
        .call(
            "afd-call",
            json!({"command": "todo-create", "input": {"title": "Via MCP"}}),
        )
        .await;
    assert_eq!(created["success"], true);
    assert_eq!(created["data"]["title"], "Via MCP");
    assert_eq!(
        created["reasoning"],
        "Created todo 'Via MCP' with medium priority"
    );
}

#[tokio::test]
async fn failures_are_tool_results_with_is_error() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let unknown = client
        .call("afd-call", json!({"command": "todo-craete"}))
        .await;
    assert_eq!(unknown["error"]["code"], "COMMAND_NOT_FOUND");
    let invalid = client
        .call("afd-call", json!({"command": "todo-create", "input": {}}))
        .await;
    assert_eq!(
        invalid["error"]["message"],
        "Invalid input for 'todo-create': Required field 'title' is missing"
    );
    let no_command = client.call("afd-call", json!({"input": {}})).await;
    assert_eq!(
        no_command["error"]["message"],
        "Invalid input for 'afd-call': Required field 'command' is missing"
    );
    let bad_discover = client.call("afd-discover", json!({"limit": 0})).await;
    assert_eq!(bad_discover["error"]["code"], "VALIDATION_ERROR");
    let no_tool = client.call("nope", json!({})).await;
    assert_eq!(no_tool["error"]["code"], "COMMAND_NOT_FOUND");
}

#[tokio::test]
async fn batch_and_pipe_over_mcp() {
    let client = Client::connect(server(Strategy::Lazy)).await;
    let batch = client
        .call(
            "afd-batch",
            json!({"commands": [
                {"command": "todo-create", "input": {"title": "One"}},
                {"command": "todo-get", "input": {"id": "missing"}}
            ]}),
        )
        .await;
    assert_eq!(batch["success"], true);
    assert_eq!(
        batch["summary"],
        json!({"total": 2, "successCount": 1, "failureCount": 1, "skippedCount": 0})
    );
    let pipe = client
        .call(
            "afd-pipe",
            json!({"steps": [
                {"command": "todo-create", "input": {"title": "Piped"}},
                {"command": "todo-toggle", "input": {"id": "$prev.id"}}
            ]}),
        )
        .await;
    assert_eq!(pipe["success"], true);
    assert_eq!(pipe["data"]["completed"], true);
    let invalid = client.call("afd-batch", json!({"commands": []})).await;
    assert_eq!(invalid["error"]["code"], "INVALID_BATCH_REQUEST");
}

#[tokio::test]
async fn individual_lists_each_command_with_annotations() {
    let client = Client::connect(server(Strategy::Individual)).await;
    let tools = client.tools().await;
    assert_eq!(tools.len(), 11 + 3);
    assert_eq!(names(&tools)[11..], ["afd-call", "afd-batch", "afd-pipe"]);
    let delete = tools.iter().find(|t| t.name == "todo-delete").unwrap();
    let hints = delete.annotations.as_ref().unwrap();
    // What differs from MCP's defaults (not read-only, destructive, not idempotent, open
    // world), and `destructiveHint: true` stated: a destructive mutation whose effects stay
    // in the app.
    assert_eq!(
        (
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint
        ),
        (None, Some(true), None, Some(false))
    );
    // The title the command declares, on the tool, not in its annotations.
    assert_eq!(hints.title, None);
    assert_eq!(delete.title.as_deref(), Some("Delete todo"));
    let list = tools.iter().find(|t| t.name == "todo-list").unwrap();
    assert_eq!(
        list.annotations.as_ref().unwrap().read_only_hint,
        Some(true)
    );
    let output = list
        .output_schema
        .as_ref()
        .expect("todo-list has an output schema");
    // The data's shape, once: not the result envelope.
    assert_eq!(output.get("type"), Some(&json!("object")));
    assert!(output["properties"].get("success").is_none(), "{output:?}");
    assert!(output["properties"]["data"].is_object(), "{output:?}");
    let update = tools.iter().find(|t| t.name == "todo-update").unwrap();
    assert_eq!(
        update.annotations.as_ref().unwrap().idempotent_hint,
        Some(true)
    );
    let created = client.call("todo-create", json!({"title": "Direct"})).await;
    assert_eq!(created["data"]["title"], "Direct");
}

#[tokio::test]
async fn grouped_lists_a_tool_per_category_with_an_action() {
    let client = Client::connect(server(Strategy::Grouped)).await;
    let tools = client.tools().await;
    assert_eq!(names(&tools), ["todo", "afd-call", "afd-batch", "afd-pipe"]);
    let schema = &tools[0].input_schema;
    assert_eq!(
        schema["properties"]["action"]["enum"]
            .as_array()
            .unwrap()
            .len(),
        11
    );
    assert!(
        schema["properties"].get("title").is_some(),
        "the merged input shape"
    );
    let created = client
        .call("todo", json!({"action": "todo-create", "title": "Grouped"}))
        .await;
    assert_eq!(created["data"]["title"], "Grouped");
    let wrong = client.call("todo", json!({"action": "user-get"})).await;
    assert!(
        wrong["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`action` must be one of todo-clear"),
        "{wrong}"
    );
}

#[tokio::test]
async fn afd_call_behaves_the_same_in_every_strategy() {
    let mut answers = Vec::new();
    for strategy in [
        Strategy::Individual,
        Strategy::Grouped,
        Strategy::Lazy,
        Strategy::Hybrid,
    ] {
        let client = Client::connect(server(strategy)).await;
        let mut answer = Vec::new();
        for input in [
            json!({"command": "todo-create", "input": {"title": "Same", "priority": "low"}}),
            json!({"command": "todo-stats"}),
            json!({"command": "todo-get", "input": {}}),
        ] {
            let mut result = client.call("afd-call", input).await;
            for volatile in ["id", "createdAt", "updatedAt"] {
                if let Some(data) = result["data"].as_object_mut() {
                    data.remove(volatile);
                }
            }
            result.as_object_mut().unwrap().remove("metadata");
            answer.push(result);
        }
        // A command named directly works in every strategy too.
        let direct = client.call("todo-stats", json!({})).await;
        assert_eq!(direct["data"]["total"], 1, "{strategy}");
        answers.push(answer);
    }
    assert!(
        answers.windows(2).all(|pair| pair[0] == pair[1]),
        "{answers:#?}"
    );
}

#[tokio::test]
async fn tools_list_paginates_with_opaque_cursors() {
    let paged = McpServer::builder(afd_examples::todo::registry())
        .strategy(Strategy::Individual)
        .page_size(5)
        .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
        .build()
        .unwrap();
    let client = Client::connect(paged).await;
    let first = client.page(None).await.unwrap();
    assert_eq!(first.tools.len(), 5);
    let cursor = first.next_cursor.clone().unwrap();
    let second = client.page(Some(cursor)).await.unwrap();
    assert_eq!(
        second.tools[0].name,
        client.tools().await[5].name,
        "pages continue in order"
    );
    assert_eq!(
        client.tools().await.len(),
        14,
        "list_all follows every cursor"
    );
    let error = client.page(Some("not-a-cursor".into())).await.unwrap_err();
    assert!(
        format!("{error:?}").contains("-32602") || format!("{error}").contains("invalid cursor"),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_todo_contract_passes_through_mcp() {
    for strategy in [Strategy::Lazy, Strategy::Individual] {
        for case in &load_cases() {
            let client = Client::connect(server(strategy)).await;
            let outcome = run_case(case, |command, input| {
                let client = &client;
                async move {
                    match strategy {
                        Strategy::Individual => client.call(&command, input).await,
                        _ => {
                            client
                                .call("afd-call", json!({"command": command, "input": input}))
                                .await
                        }
                    }
                }
            })
            .await;
            if let Err(reason) = outcome {
                panic!("{strategy}: case {} failed: {reason}", case.name);
            }
        }
    }
}

#[test]
fn strategies_parse_from_text() {
    assert_eq!("LAZY".parse::<Strategy>().unwrap(), Strategy::Lazy);
    assert_eq!(" grouped ".parse::<Strategy>().unwrap(), Strategy::Grouped);
    let error = "eager".parse::<Strategy>().unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown tool strategy 'eager': expected individual, grouped, lazy or hybrid"
    );
    let _: Value = json!(null);
}

#[tokio::test]
async fn hybrid_adds_eager_commands_and_lazy_can_list_names() {
    let hybrid = McpServer::builder(afd_examples::todo::registry())
        .strategy(Strategy::Hybrid)
        .eager(["todo-list"])
        .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
        .build()
        .unwrap();
    let client = Client::connect(hybrid).await;
    let tools = client.tools().await;
    assert_eq!(
        names(&tools),
        [
            "afd-discover",
            "afd-detail",
            "afd-call",
            "afd-batch",
            "afd-pipe",
            "todo-list"
        ]
    );
    assert_eq!(
        tools[5].input_schema["properties"]["limit"]["maximum"], 100,
        "an eager tool has its full schema"
    );

    let named = McpServer::builder(afd_examples::todo::registry())
        .strategy(Strategy::Lazy)
        .list_names(true)
        .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
        .build()
        .unwrap();
    let client = Client::connect(named).await;
    let tools = client.tools().await;
    assert_eq!(tools.len(), 5 + 11);
    let create = tools.iter().find(|t| t.name == "todo-create").unwrap();
    assert_eq!(
        create.description.as_deref(),
        Some("Create a new todo item")
    );
    assert_eq!(
        *create.input_schema,
        serde_json::Map::from_iter([("type".to_owned(), json!("object"))])
    );
    let invalid = client.call("todo-create", json!({})).await;
    assert_eq!(
        invalid["error"]["code"], "VALIDATION_ERROR",
        "the real schema still validates"
    );

    let unknown = McpServer::builder(afd_examples::todo::registry())
        .eager(["todo-lst"])
        .build()
        .unwrap_err();
    assert_eq!(
        unknown.to_string(),
        "eager command 'todo-lst' is not exposed on this server"
    );
}

#[tokio::test]
async fn bootstrap_tools_work_beside_any_strategy() {
    for strategy in [Strategy::Lazy, Strategy::Individual] {
        let server = McpServer::builder(afd_examples::todo::registry())
            .strategy(strategy)
            .bootstrap_tools(true)
            .dispatch(|d| d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name())))
            .build()
            .unwrap();
        let client = Client::connect(server).await;
        let tools = names(&client.tools().await);
        assert!(
            tools.ends_with(&["afd-help".into(), "afd-docs".into(), "afd-schema".into()]),
            "{strategy}: {tools:?}"
        );

        let help = client.call("afd-help", json!({})).await;
        let text = help["data"].as_str().unwrap();
        assert!(text.starts_with("## todo"), "{text}");
        assert!(
            text.contains("- todo-delete: Delete a todo permanently (destructive)"),
            "{text}"
        );
        let json_help = client.call("afd-help", json!({"format": "json"})).await;
        assert_eq!(
            json_help["data"]["categories"][0]["commands"]
                .as_array()
                .unwrap()
                .len(),
            11
        );
        let missing = client.call("afd-help", json!({"category": "nope"})).await;
        assert_eq!(missing["error"]["code"], "NOT_FOUND");

        let docs = client
            .call("afd-docs", json!({"command": "todo-create"}))
            .await;
        let docs = docs["data"].as_str().unwrap();
        assert!(
            docs.starts_with("## todo-create\n\nCreate a new todo item."),
            "{docs}"
        );
        assert!(
            docs.contains("| `title` | `string` | yes | What to do. |"),
            "{docs}"
        );
        assert!(docs.contains("| `priority` | `Priority` | no |"), "{docs}");

        let schema = client
            .call("afd-schema", json!({"command": "todo-get"}))
            .await;
        assert_eq!(
            schema["data"]["todo-get"]["input"]["required"],
            json!(["id"])
        );
        assert!(schema["data"]["todo-get"]["output"].is_object());

        let ts = client
            .call(
                "afd-schema",
                json!({"command": ["todo-create", "todo-get"], "format": "typescript"}),
            )
            .await;
        let ts = ts["data"].as_str().unwrap();
        assert!(
            ts.contains("export type Priority = \"low\" | \"medium\" | \"high\";"),
            "{ts}"
        );
        assert!(ts.contains("export type TodoCreateInput = {"), "{ts}");
        assert!(ts.contains("  title: string;"), "{ts}");
        assert!(ts.contains("  priority?: Priority;"), "{ts}");
        assert!(ts.contains("export type TodoGetOutput = {"), "{ts}");
        assert_eq!(
            ts.matches("export type Priority =").count(),
            1,
            "each definition once: {ts}"
        );
    }
}

#[tokio::test]
async fn the_catalog_is_browsable_as_resources() {
    use rmcp::model::{PaginatedRequestParams, ReadResourceRequestParams, ResourceContents};
    let server = McpServer::builder(afd_examples::todo::registry())
        .context(todo::context(TodoStore::in_memory().unwrap()))
        .page_size(5)
        .build()
        .unwrap();
    let client = Client::connect(server).await;
    let peer = client.peer();

    // Paginated: the index, one category, eleven commands, five a page.
    let mut uris = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let page = peer.list_resources(params).await.unwrap();
        pages += 1;
        uris.extend(page.resources.iter().map(|r| r.uri.clone()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(uris.len(), 13);
    assert_eq!(uris[0], "afd://catalog");
    assert_eq!(uris[1], "afd://categories/todo");
    assert!(uris.contains(&"afd://commands/todo-create".to_owned()));
    let bad = peer
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some("afd1:ff".into())),
        ))
        .await;
    assert!(bad.is_err(), "a made-up cursor is refused");

    let templates = peer.list_resource_templates(None).await.unwrap();
    let shapes: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    assert_eq!(shapes, ["afd://commands/{name}", "afd://categories/{name}"]);

    let read = |uri: &str| {
        let params = ReadResourceRequestParams::new(uri);
        async move {
            let result = peer.read_resource(params).await.unwrap();
            match &result.contents[0] {
                ResourceContents::TextResourceContents {
                    text, mime_type, ..
                } => {
                    assert_eq!(mime_type.as_deref(), Some("application/json"));
                    serde_json::from_str::<Value>(text).unwrap()
                }
                other => panic!("{other:?}"),
            }
        }
    };
    let command = read("afd://commands/todo-create").await;
    assert_eq!(command["name"], "todo-create");
    assert_eq!(command["mutation"], true);
    assert!(command["inputSchema"]["properties"]["title"].is_object());
    let category = read("afd://categories/todo").await;
    assert_eq!(category["count"], 11);
    assert_eq!(category["commands"][0]["uri"], "afd://commands/todo-clear");
    let index = read("afd://catalog").await;
    assert_eq!(index["commands"], 11);

    let missing = peer
        .read_resource(ReadResourceRequestParams::new("afd://commands/todo-craete"))
        .await
        .unwrap_err();
    let text = missing.to_string();
    assert!(text.contains("no command named 'todo-craete'"), "{text}");
    assert!(
        text.contains("todo-create"),
        "the suggestion names the close command: {text}"
    );
}

/// A catalog replaced while clients are connected (`McpServer::replace_catalog`), as an
/// operator withdraws a command and brings it back: a 2025-11-25 session and a 2026-07-28
/// client both list and call the catalog served now, each is told (the session's own
/// notification, the listening stream's), and what the server keeps (the app's data, the
/// session) carries over.
#[tokio::test]
async fn a_replaced_catalog_reaches_connected_clients_and_they_are_told() {
    use rmcp::model::{ServerNotification, SubscriptionFilter};

    let context = todo::context(TodoStore::in_memory().unwrap());
    let build = |withdrawn: &'static [&'static str], after: Option<&McpServer>| {
        let stores = after.map(|server| {
            let dispatcher = server.dispatcher();
            (dispatcher.sessions().clone(), dispatcher.usage().clone())
        });
        McpServer::builder(afd_examples::todo::registry())
            .name("todo")
            .strategy(Strategy::Individual)
            .context(context.clone())
            .dispatch(move |mut d| {
                if let Some((sessions, usage)) = stores {
                    d = d.sessions(sessions).usage(usage);
                }
                d.expose_only(afd_examples::todo::COMMANDS.iter().map(|c| c.name()))
                    .hide(withdrawn.iter().copied())
            })
            .build()
            .unwrap()
    };
    let server = build(&[], None);
    let session = Client::connect(server.clone()).await;
    let stateless = Client::connect_stateless(server.clone()).await;
    let wait = std::time::Duration::from_secs(20);
    let filter = SubscriptionFilter::builder().tools_list_changed().build();
    let mut listening = tokio::time::timeout(wait, stateless.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    let created = session
        .call("todo-create", json!({"title": "Kept across catalogs"}))
        .await;
    assert_eq!(created["success"], true, "{created}");
    assert!(names(&session.tools().await).contains(&"todo-delete".to_owned()));

    let withdrawn = build(&["todo-delete", "todo-delete-batch"], Some(&server));
    server.replace_catalog(&withdrawn);
    assert_eq!(
        names(server.current().tools()),
        names(withdrawn.tools()),
        "the server serves the new catalog"
    );
    assert_eq!(session.wait_list_changed(1).await, 1, "the session is told");
    let heard = tokio::time::timeout(wait, listening.next())
        .await
        .unwrap()
        .unwrap()
        .expect("a change");
    assert!(
        matches!(heard, ServerNotification::ToolListChangedNotification(_)),
        "the listening stream is told, got {heard:?}"
    );
    for client in [&session, &stateless] {
        let listed = names(&client.tools().await);
        assert!(!listed.contains(&"todo-delete".to_owned()), "{listed:?}");
        assert!(listed.contains(&"todo-create".to_owned()), "{listed:?}");
        let refused = client.call("todo-delete", json!({"id": "1"})).await;
        assert_eq!(refused["error"]["code"], "COMMAND_NOT_FOUND", "{refused}");
        // What cannot be called is not suggested either.
        assert!(
            !refused["error"]["details"]["suggestions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|name| name.as_str().unwrap().starts_with("todo-delete")),
            "{refused}"
        );
        let listed = client.call("todo-list", json!({})).await;
        assert!(
            listed.to_string().contains("Kept across catalogs"),
            "the app's data carries over: {listed}"
        );
    }

    // Brought back: listed and called again, and told again.
    server.replace_catalog(&build(&[], Some(&server)));
    assert_eq!(session.wait_list_changed(2).await, 2);
    let heard = tokio::time::timeout(wait, listening.next())
        .await
        .unwrap()
        .unwrap()
        .expect("a change");
    assert!(matches!(
        heard,
        ServerNotification::ToolListChangedNotification(_)
    ));
    assert!(names(&stateless.tools().await).contains(&"todo-delete".to_owned()));
    let cleared = session.call("todo-clear", json!({})).await;
    assert_eq!(cleared["success"], true, "{cleared}");
    listening.cancel().await.unwrap();
    session.close().await;
    stateless.close().await;
}
