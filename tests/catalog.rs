//! afd-discover and afd-detail, replaying the design's examples 1, 2, 3 and 6 on a catalog
//! of the design's own commands.

use afd_runtime::prelude::*;
use afd_runtime::{Dispatcher, Surface};

#[derive(Deserialize, JsonSchema)]
struct NewUser {
    name: String,
    email: String,
}
#[derive(Deserialize, JsonSchema)]
struct Id {
    id: u64,
}
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderRef {
    order_id: String,
}
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct SubscriptionRef {
    subscription_id: String,
}

/// Create a new user account.
#[command(tags("crud"), mutation)]
fn user_create(input: NewUser) -> String {
    input.name + &input.email
}
/// Get a user by id.
#[command(tags("crud"))]
fn user_get(input: Id) -> u64 {
    input.id
}
/// Delete a user account. Removes every record of the user.
#[command(
    tags("admin", "crud"),
    mutation,
    destructive,
    confirm_prompt = "Delete user {id}?"
)]
fn user_delete(input: Id) -> u64 {
    input.id
}
/// Create a new order.
#[command(tags("crud", "billing"), mutation)]
fn order_create() -> u8 {
    1
}
/// List orders with filters.
#[command(tags("crud"))]
fn order_list() -> u8 {
    1
}
/// Cancel a pending order. Restores the stock.
#[command(
    tags("billing"),
    mutation,
    destructive,
    confirm_prompt = "This will cancel order {orderId}. Continue?",
    execution_time = "fast",
    errors("NOT_FOUND", "INVALID_STATE"),
    version = "1.2.0"
)]
fn order_cancel(input: OrderRef) -> String {
    input.order_id
}
/// Cancel a subscription.
#[command(tags("billing"), mutation)]
fn subscription_cancel(input: SubscriptionRef) -> String {
    input.subscription_id
}
/// Refund a payment.
#[command(tags("billing", "admin-only"), mutation)]
fn payment_refund() -> u8 {
    1
}
/// Reset server configuration.
#[command(tags("admin"), mutation)]
fn config_reset() -> u8 {
    1
}
/// Rebuild the search index; not for agents.
#[command(expose(mcp = false))]
fn index_rebuild() -> u8 {
    1
}

const NAMES: [&str; 9] = [
    "user-create",
    "user-get",
    "user-delete",
    "order-create",
    "order-list",
    "order-cancel",
    "subscription-cancel",
    "payment-refund",
    "config-reset",
];

fn server() -> Dispatcher {
    Dispatcher::builder(Registry::global())
        .expose_only(NAMES)
        .build()
        .unwrap()
}

fn names(data: &Value) -> Vec<&str> {
    data["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn discover_lists_everything_with_the_taxonomy() {
    let result = server().discover(json!({})).await;
    assert!(result.success);
    assert_eq!(result.confidence, Some(1.0));
    assert_eq!(
        result.reasoning.as_deref(),
        Some("Returned 9 of 9 matching commands (9 total)")
    );
    let data = result.data.unwrap();
    assert_eq!(
        (
            data["total"].as_u64(),
            data["filtered"].as_u64(),
            data["returned"].as_u64()
        ),
        (Some(9), Some(9), Some(9))
    );
    assert_eq!(data["hasMore"], false);
    assert_eq!(
        data["availableCategories"],
        json!(["config", "order", "payment", "subscription", "user"])
    );
    assert_eq!(
        data["availableTags"],
        json!(["admin", "admin-only", "billing", "crud"])
    );
    let first = &data["commands"][0];
    assert_eq!(
        first,
        &json!({"name": "config-reset", "description": "Reset server configuration", "category": "config"})
    );
}

#[tokio::test]
async fn example_1_browsing_by_category() {
    let result = server().discover(json!({"category": "order"})).await;
    let data = result.data.unwrap();
    assert_eq!(names(&data), ["order-cancel", "order-create", "order-list"]);
    assert_eq!(data["total"], 9);
    assert_eq!(data["filtered"], 3);
    assert_eq!(data["commands"][0]["description"], "Cancel a pending order");
    assert_eq!(
        data["availableCategories"].as_array().unwrap().len(),
        5,
        "the whole taxonomy, not just the matches"
    );
    assert_eq!(
        result.reasoning.as_deref(),
        Some("Returned 3 of 3 matching commands (9 total) in category 'order'")
    );
}

#[tokio::test]
async fn example_2_search_then_batch_detail() {
    let found = server()
        .discover(json!({"search": "cancel"}))
        .await
        .data
        .unwrap();
    assert_eq!(names(&found), ["order-cancel", "subscription-cancel"]);
    let details = server()
        .detail(json!({"command": ["order-cancel", "subscription-cancel"]}))
        .await;
    assert_eq!(
        details.reasoning.as_deref(),
        Some("Resolved 2 of 2 requested commands")
    );
    let details = details.data.unwrap();
    let cancel = &details[0];
    assert_eq!(cancel["name"], "order-cancel");
    assert_eq!(
        (
            &cancel["found"],
            &cancel["callable"],
            &cancel["mutation"],
            &cancel["destructive"]
        ),
        (&json!(true), &json!(true), &json!(true), &json!(true))
    );
    assert_eq!(
        cancel["confirmPrompt"],
        "This will cancel order {orderId}. Continue?"
    );
    assert_eq!(cancel["inputSchema"]["type"], "object");
    assert_eq!(
        cancel["inputSchema"]["properties"]["orderId"]["type"],
        "string"
    );
    assert_eq!(cancel["inputSchema"]["required"], json!(["orderId"]));
    assert_eq!(cancel["executionTime"], "fast");
    assert_eq!(cancel["errors"], json!(["NOT_FOUND", "INVALID_STATE"]));
    assert_eq!(cancel["version"], "1.2.0");
    assert_eq!(
        cancel["description"], "Cancel a pending order. Restores the stock.",
        "detail has the full description"
    );
    let subscription = &details[1];
    assert_eq!(subscription["destructive"], false);
    assert_eq!(
        subscription["inputSchema"]["required"],
        json!(["subscriptionId"])
    );
}

#[tokio::test]
async fn example_3_typo_recovery() {
    let result = server().detail(json!({"command": "order-cancle"})).await;
    assert!(result.success);
    assert_eq!(
        result.data.unwrap(),
        json!([{
            "name": "order-cancle",
            "found": false,
            "error": {
                "code": "COMMAND_NOT_FOUND",
                "message": "No command named 'order-cancle'",
                "suggestion": "Did you mean 'order-cancel'? Use afd-discover to list all commands."
            }
        }])
    );
}

#[tokio::test]
async fn example_6_tag_filtering() {
    let admin = server()
        .discover(json!({"tag": "admin", "includeMutation": true}))
        .await
        .data
        .unwrap();
    assert_eq!(names(&admin), ["config-reset", "user-delete"]);
    assert_eq!(
        admin["commands"][1],
        json!({"name": "user-delete", "description": "Delete a user account", "category": "user", "mutation": true, "risk": "destructive"})
    );
    let all = server()
        .discover(json!({"tag": ["admin", "crud"], "tagMode": "all"}))
        .await
        .data
        .unwrap();
    assert_eq!(names(&all), ["user-delete"]);
    let any = server()
        .discover(json!({"tag": ["admin", "billing"]}))
        .await
        .data
        .unwrap();
    assert_eq!(
        names(&any),
        [
            "config-reset",
            "order-cancel",
            "order-create",
            "payment-refund",
            "subscription-cancel",
            "user-delete"
        ]
    );
}

#[tokio::test]
async fn search_ranks_by_relevance_with_a_score_per_command() {
    let data = server()
        .discover(json!({"search": "create USER"}))
        .await
        .data
        .unwrap();
    let found = names(&data);
    assert_eq!(
        found[0], "user-create",
        "both words, in the name: {found:?}"
    );
    let scores: Vec<f64> = data["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["score"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(
        scores[0] > scores[1],
        "a full match beats a partial one: {scores:?}"
    );
    assert_eq!(
        server()
            .discover(json!({"search": "zebra"}))
            .await
            .data
            .unwrap()["filtered"],
        0
    );
    // Filters still apply to the ranked matches; without a search there is no score.
    let combined = server()
        .discover(json!({"search": "cancel", "tag": "billing", "category": "order"}))
        .await
        .data
        .unwrap();
    assert_eq!(names(&combined), ["order-cancel"]);
    let browsing = server().discover(json!({})).await.data.unwrap();
    assert!(browsing["commands"][0].get("score").is_none());
}

#[tokio::test]
async fn pagination() {
    let page = server().discover(json!({"limit": 4, "offset": 2})).await;
    assert_eq!(
        page.reasoning.as_deref(),
        Some("Returned 4 of 9 matching commands (9 total). Use offset: 6 to see more.")
    );
    let data = page.data.unwrap();
    assert_eq!(
        names(&data),
        [
            "order-create",
            "order-list",
            "payment-refund",
            "subscription-cancel"
        ]
    );
    assert_eq!(data["hasMore"], true);
    let last = server()
        .discover(json!({"limit": 4, "offset": 8}))
        .await
        .data
        .unwrap();
    assert_eq!(names(&last), ["user-get"]);
    assert_eq!(last["hasMore"], false);
    let beyond = server().discover(json!({"offset": 50})).await.data.unwrap();
    assert_eq!(beyond["returned"], 0);
}

#[tokio::test]
async fn bad_discover_input_is_a_validation_error() {
    for (input, expected) in [
        (json!({"limit": 0}), "Field 'limit' must be >= 1"),
        (json!({"limit": 201}), "Field 'limit' must be <= 200"),
        (
            json!({"tagMode": "some"}),
            "Field 'tagMode' must be one of \"any\", \"all\"",
        ),
        (
            json!({"serach": "x"}),
            "Unknown field 'serach' is not allowed",
        ),
        (json!({"offset": -1}), "Field 'offset' must be >= 0"),
    ] {
        let error = server().discover(input.clone()).await.error.unwrap();
        assert_eq!(error.code, "VALIDATION_ERROR");
        assert!(
            error
                .message
                .starts_with("Invalid input for 'afd-discover': "),
            "{}",
            error.message
        );
        assert!(
            error.message.contains(expected),
            "{input}: {}",
            error.message
        );
    }
}

#[tokio::test]
async fn detail_keeps_input_order_mixes_found_and_missing_and_caps_at_ten() {
    let data = server()
        .detail(json!({"command": ["user-get", "nope-nope", "index-rebuild", "order-list"]}))
        .await
        .data
        .unwrap();
    let found: Vec<(&str, bool)> = data
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["name"].as_str().unwrap(), e["found"] == true))
        .collect();
    assert_eq!(
        found,
        [
            ("user-get", true),
            ("nope-nope", false),
            ("index-rebuild", true),
            ("order-list", true)
        ]
    );
    assert_eq!(
        data[2]["callable"], false,
        "registered but not exposed: visible, not callable"
    );
    let eleven: Vec<&str> = NAMES.iter().chain(NAMES.iter()).take(11).copied().collect();
    let error = server()
        .detail(json!({"command": eleven}))
        .await
        .error
        .unwrap();
    assert!(
        error.message.contains("must have at most 10 items"),
        "{}",
        error.message
    );
    assert_eq!(
        server().detail(json!({})).await.error.unwrap().message,
        "Invalid input for 'afd-detail': Required field 'command' is missing"
    );
    assert_eq!(
        server()
            .detail(json!({"command": []}))
            .await
            .error
            .unwrap()
            .code,
        "VALIDATION_ERROR"
    );
}

#[test]
fn commands_are_discoverable_without_an_expose_setting() {
    let mcp = Dispatcher::builder(Registry::global())
        .surface(Surface::Mcp)
        .build()
        .unwrap();
    let listed: Vec<String> = mcp.exposed_entries().map(|e| e.name().to_owned()).collect();
    for name in NAMES {
        assert!(
            listed.iter().any(|l| l == name),
            "{name} is listed by default"
        );
    }
    assert!(
        !listed.iter().any(|l| l == "index-rebuild"),
        "expose(mcp = false) keeps it out"
    );
}

#[test]
fn summaries_cut_at_the_first_sentence_or_120_characters() {
    use afd_runtime::summary;
    assert_eq!(
        summary("List orders with filters. Newest first."),
        "List orders with filters"
    );
    assert_eq!(
        summary("Version 1.2 of the thing"),
        "Version 1.2 of the thing"
    );
    let long = "word ".repeat(40);
    let cut = summary(&long);
    assert_eq!(cut.chars().count(), 120);
    assert!(cut.ends_with('…'));
}

afd_runtime::category!("order", "Orders: place, list and cancel them.");
afd_runtime::category!("user", "User accounts.");

#[tokio::test]
async fn browsing_shows_categories_with_counts_and_descriptions() {
    let data = server().discover(json!({})).await.data.unwrap();
    let categories = data["categories"].as_array().unwrap();
    assert_eq!(categories.len(), 5);
    assert_eq!(
        categories[1],
        json!({"name": "order", "count": 3, "description": "Orders: place, list and cancel them."})
    );
    assert_eq!(
        categories[0],
        json!({"name": "config", "count": 1}),
        "undeclared: no description"
    );
    let filtered = server()
        .discover(json!({"search": "cancel"}))
        .await
        .data
        .unwrap();
    assert!(
        filtered.get("categories").is_none(),
        "only when browsing without a filter"
    );
}

#[test]
fn a_category_described_twice_differently_is_a_startup_error() {
    static A: afd_runtime::CategoryDef = afd_runtime::CategoryDef::new("billing", "Money.");
    static B: afd_runtime::CategoryDef = afd_runtime::CategoryDef::new("billing", "Invoices.");
    let error = Registry::builder()
        .category(&A)
        .category(&B)
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the category 'billing' is described twice"),
        "{error}"
    );
    assert!(
        Registry::builder()
            .category(&A)
            .category(&A)
            .build()
            .is_ok()
    );
}

#[tokio::test]
async fn discover_answers_at_three_detail_levels() {
    let d = server();
    let names_only = d
        .discover(json!({"category": "order", "detail": "name"}))
        .await
        .data
        .unwrap();
    assert_eq!(
        names_only["commands"],
        json!([{"name": "order-cancel"}, {"name": "order-create"}, {"name": "order-list"}])
    );
    let summary = d.discover(json!({"category": "order"})).await.data.unwrap();
    let first = &summary["commands"][0];
    assert_eq!(first["category"], "order");
    assert!(first["description"].is_string());
    assert!(first.get("inputSchema").is_none() && first.get("mutation").is_none());
    let full = d
        .discover(json!({"category": "order", "detail": "full"}))
        .await
        .data
        .unwrap();
    let cancel = &full["commands"][0];
    assert_eq!(cancel["name"], "order-cancel");
    assert_eq!(cancel["mutation"], true);
    assert_eq!(cancel["inputSchema"]["type"], "object");
    assert!(cancel["inputSchema"]["properties"].is_object());
    let bad = d.discover(json!({"detail": "everything"})).await;
    assert_eq!(bad.error.unwrap().code, "VALIDATION_ERROR");
}

#[tokio::test]
async fn detail_description_is_the_summary_level() {
    let d = server();
    for input in [
        json!({}),
        json!({"category": "order"}),
        json!({"search": "cancel", "includeMutation": true}),
        json!({"tag": "crud", "limit": 2, "offset": 1}),
    ] {
        let mut summary = input.clone();
        summary["detail"] = json!("summary");
        let mut description = input.clone();
        description["detail"] = json!("description");
        // Everything but the time each call took.
        let answer = |input| {
            let d = &d;
            async move {
                let mut answer = serde_json::to_value(d.discover(input).await).unwrap();
                answer["metadata"]
                    .as_object_mut()
                    .map(|metadata| metadata.remove("executionTimeMs"));
                answer
            }
        };
        let expected = answer(summary).await;
        let actual = answer(description).await;
        assert!(expected["success"] == true, "{input}: {expected}");
        assert_eq!(actual, expected, "{input}");
    }
    let level: afd_runtime::tools::DetailLevel =
        serde_json::from_value(json!("description")).unwrap();
    assert_eq!(level, afd_runtime::tools::DetailLevel::Summary);
}

#[tokio::test]
async fn every_answer_has_the_documented_shape() {
    use afd_runtime::tools::DiscoverResult;
    let d = server();
    for input in [
        json!({}),
        json!({"limit": 3, "offset": 1}),
        json!({"category": "order", "detail": "full"}),
        json!({"tag": ["admin", "billing"], "includeMutation": true}),
        json!({"search": "cancel", "detail": "name"}),
        json!({"search": ["buy ten shares of Apple stock", "stock market order"]}),
    ] {
        let data = d.discover(input.clone()).await.data.unwrap();
        let typed: DiscoverResult =
            serde_json::from_value(data.clone()).unwrap_or_else(|e| panic!("{input}: {e}: {data}"));
        assert_eq!(serde_json::to_value(&typed).unwrap(), data, "{input}");
    }
}

#[tokio::test]
async fn category_and_tag_filters_agree_with_a_plain_scan() {
    let d = server();
    let everything = d.discover(json!({"limit": 200})).await.data.unwrap();
    let all = names(&everything);
    // Each command's category and tags, from afd-detail.
    let mut details = Vec::new();
    for chunk in all.chunks(10) {
        let detail = d.detail(json!({"command": chunk})).await;
        details.extend(detail.data.unwrap().as_array().unwrap().clone());
    }
    let facts: Vec<(String, String, Vec<String>)> = details
        .into_iter()
        .map(|detail| {
            let tags = detail["tags"]
                .as_array()
                .map(|tags| {
                    tags.iter()
                        .map(|t| t.as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            (
                detail["name"].as_str().unwrap().to_owned(),
                detail["category"].as_str().unwrap().to_owned(),
                tags,
            )
        })
        .collect();
    let categories: Vec<Option<&str>> = [None]
        .into_iter()
        .chain(
            everything["availableCategories"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str()),
        )
        .chain([Some("no-such-category")])
        .collect();
    let tags: Vec<&str> = everything["availableTags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let tag_sets: Vec<Vec<&str>> = tags
        .iter()
        .map(|t| vec![*t])
        .chain(tags.windows(2).map(<[&str]>::to_vec))
        .chain([vec!["admin", "crud", "write"], vec!["no-such-tag"]])
        .collect();
    for category in &categories {
        for set in tag_sets.iter().map(Some).chain([None]) {
            for mode in ["any", "all"] {
                let mut input = json!({"limit": 200, "tagMode": mode});
                if let Some(category) = category {
                    input["category"] = json!(category);
                }
                if let Some(set) = set {
                    input["tag"] = json!(set);
                }
                let got = d.discover(input.clone()).await.data.unwrap();
                let expected: Vec<&str> = facts
                    .iter()
                    .filter(|(_, c, t)| {
                        category.is_none_or(|category| c == category)
                            && set.is_none_or(|set| match mode {
                                "any" => set.iter().any(|s| t.iter().any(|t| t == s)),
                                _ => set.iter().all(|s| t.iter().any(|t| t == s)),
                            })
                    })
                    .map(|(name, _, _)| name.as_str())
                    .collect();
                assert_eq!(names(&got), expected, "{input}");
                assert_eq!(got["filtered"], expected.len(), "{input}");
            }
        }
    }
}
