//! The example shop: its catalog (size, categories, tags), the spec's own example commands
//! with their exact shapes, and every shop command called in-process against a fresh
//! in-memory store, with the effect of each mutation checked.

use std::collections::{BTreeMap, BTreeSet};

use afd_examples::shop::{self, COMMAND_NAMES, COMMANDS, ShopStore};
use afd_runtime::CommandEntry;
use afd_runtime::prelude::*;

fn fresh() -> CommandContext {
    shop::context(ShopStore::in_memory().expect("in-memory SQLite"))
}

fn entry(name: &str) -> &'static CommandEntry {
    Registry::global()
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not in the global registry"))
}

fn shop_entries() -> Vec<&'static CommandEntry> {
    Registry::global()
        .commands()
        .iter()
        .filter(|entry| COMMAND_NAMES.contains(&entry.name()))
        .collect()
}

/// Calls commands against one store and records which ones succeeded.
struct Session {
    ctx: CommandContext,
    called: BTreeSet<String>,
}

impl Session {
    fn new() -> Self {
        Session {
            ctx: fresh(),
            called: BTreeSet::new(),
        }
    }

    /// Starts over on a fresh store (the record of calls is kept).
    fn fresh(&mut self) {
        self.ctx = fresh();
    }

    /// Calls `command`, asserts success and returns the data.
    async fn ok(&mut self, command: &str, input: Value) -> Value {
        let result = Registry::global()
            .call(command, input.clone(), self.ctx.clone())
            .await;
        assert!(
            result.success,
            "{command} {input} failed: {:?}",
            result.error
        );
        self.called.insert(command.to_owned());
        result.data.unwrap_or(Value::Null)
    }

    /// Calls `command`, asserts failure with `code` and returns the error.
    async fn fails(&self, command: &str, input: Value, code: &str) -> CommandError {
        let result = Registry::global()
            .call(command, input.clone(), self.ctx.clone())
            .await;
        assert!(
            !result.success,
            "{command} {input} should fail with {code}: {:?}",
            result.data
        );
        let error = result.error.expect("a failure carries an error");
        assert_eq!(error.code, code, "{command} {input}: {error:?}");
        assert!(
            error.suggestion.is_some(),
            "{command}: error {code} has no suggestion"
        );
        assert!(
            entry(command).def().errors().contains(&code),
            "{command} returned {code} without declaring it in errors(...)"
        );
        error
    }
}

fn ids(items: &Value, field: &str) -> Vec<Value> {
    items
        .as_array()
        .expect("an array")
        .iter()
        .map(|item| item[field].clone())
        .collect()
}

// ---------------------------------------------------------------------------------------
// The catalog
// ---------------------------------------------------------------------------------------

#[test]
fn the_global_registry_holds_at_least_80_shop_commands_in_at_least_8_categories() {
    assert_eq!(COMMAND_NAMES.len(), COMMANDS.len());
    let unique: BTreeSet<&str> = COMMAND_NAMES.iter().copied().collect();
    assert_eq!(unique.len(), COMMAND_NAMES.len(), "duplicate names");
    // Every command defined in the shop module is listed in COMMANDS.
    let defined: BTreeSet<&str> = Registry::global()
        .commands()
        .iter()
        .filter(|entry| {
            entry
                .def()
                .source()
                .module_path
                .starts_with("afd_examples::shop")
        })
        .map(|entry| entry.name())
        .collect();
    assert_eq!(defined, unique, "COMMANDS and the shop module differ");
    let entries = shop_entries();
    assert!(entries.len() >= 80, "only {} shop commands", entries.len());
    assert_eq!(entries.len(), COMMAND_NAMES.len());
    let categories: BTreeSet<&str> = entries.iter().map(|entry| entry.category()).collect();
    assert!(categories.len() >= 8, "only {categories:?}");
    for expected in ["user", "order", "payment", "config", "subscription"] {
        assert!(categories.contains(expected), "no {expected} category");
    }
    let tags: BTreeSet<&str> = entries
        .iter()
        .flat_map(|entry| entry.tags().iter().copied())
        .collect();
    for expected in [
        "crud",
        "admin",
        "billing",
        "mutation",
        "destructive",
        "read",
    ] {
        assert!(tags.contains(expected), "no {expected} tag");
    }
}

#[test]
fn every_shop_command_is_the_registered_one_and_well_described() {
    for def in COMMANDS {
        let entry = entry(def.name());
        assert_eq!(
            entry.def().source(),
            def.source(),
            "{}: another definition is registered under this name",
            def.name()
        );
        let description = entry.description();
        assert!(!description.is_empty(), "{}: no description", def.name());
        let sentences = description.matches(". ").count() + 1;
        assert!(
            sentences <= 2 && !description.contains('\n'),
            "{}: keep the doc comment to one or two sentences: {description}",
            def.name()
        );
        let summary = description.split(". ").next().unwrap();
        assert!(
            summary.len() <= 80,
            "{}: summary too long: {summary}",
            def.name()
        );
        if def.is_destructive() {
            assert!(def.is_mutation(), "{}", def.name());
            assert!(
                def.confirm_prompt().is_some(),
                "{}: destructive without a confirm prompt",
                def.name()
            );
        }
        for code in def.errors() {
            assert!(
                code.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "{}: error code {code}",
                def.name()
            );
        }
        // The category is set explicitly wherever the name does not start with it.
        let first = def.name().split('-').next().unwrap();
        if def.category() != first {
            assert_eq!(
                def.declared_category(),
                Some(def.category()),
                "{}",
                def.name()
            );
        }
        // Mutations and reads are tagged as such.
        let tags = def.tags();
        if def.is_mutation() {
            assert!(tags.contains(&"mutation"), "{}: tag mutation", def.name());
        } else {
            assert!(tags.contains(&"read"), "{}: tag read", def.name());
        }
    }
}

#[test]
fn the_shop_registers_explicitly_too() {
    // Without its contexts, the commands that name them are a startup error that says
    // where each such command is defined.
    let error = Registry::builder()
        .register_all(COMMANDS)
        .build()
        .expect_err("the contexts are not declared");
    let message = error.to_string();
    assert!(
        message.contains("the command 'order-cancel' (defined at examples/src/shop/order.rs:")
            && message.contains("names the context 'returns', which is not declared"),
        "{message}"
    );
    let registry = Registry::builder()
        .register_all(COMMANDS)
        .with_inventory_contexts()
        .build()
        .expect("no clashes");
    // The shop's commands and the four context operations.
    assert_eq!(registry.len(), COMMANDS.len() + 4);
    assert_eq!(registry.contexts().len(), 6);
    assert!(registry.get("order-cancel").is_some());
    assert!(registry.get("afd-context-enter").is_some());
}

#[test]
fn the_categories_are_the_shop_domains() {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in shop_entries() {
        *counts.entry(entry.category()).or_default() += 1;
    }
    let expected: BTreeSet<&str> = [
        "cart",
        "config",
        "coupon",
        "inventory",
        "invoice",
        "order",
        "payment",
        "product",
        "report",
        "review",
        "shipping",
        "subscription",
        "user",
    ]
    .into_iter()
    .collect();
    assert_eq!(counts.keys().copied().collect::<BTreeSet<_>>(), expected);
    assert_eq!(counts["order"], 3);
}

// ---------------------------------------------------------------------------------------
// The spec's examples: the shapes and constraints they rely on
// ---------------------------------------------------------------------------------------

#[test]
fn only_the_two_cancel_commands_mention_cancel() {
    let matching: Vec<&str> = shop_entries()
        .into_iter()
        .filter(|entry| {
            format!("{} {}", entry.name(), entry.description())
                .to_lowercase()
                .contains("cancel")
        })
        .map(|entry| entry.name())
        .collect();
    assert_eq!(matching, ["order-cancel", "subscription-cancel"]);
}

#[test]
fn only_user_delete_and_config_reset_are_admin() {
    let admin: Vec<&str> = Registry::global()
        .by_tags(&["admin"], TagMode::Any)
        .into_iter()
        .map(|entry| entry.name())
        .filter(|name| COMMAND_NAMES.contains(name))
        .collect();
    assert_eq!(admin, ["config-reset", "user-delete"]);
    let admin_categories: BTreeSet<&str> = ["config-reset", "user-delete"]
        .into_iter()
        .map(|name| entry(name).category())
        .collect();
    assert_eq!(admin_categories, BTreeSet::from(["config", "user"]));
}

#[test]
fn the_order_category_has_create_list_and_cancel() {
    let order: Vec<&str> = Registry::global()
        .by_category("order")
        .map(|entry| entry.name())
        .collect();
    assert_eq!(order, ["order-cancel", "order-create", "order-list"]);
    assert!(
        entry("order-create")
            .description()
            .starts_with("Create a new order.")
    );
    assert!(
        entry("order-list")
            .description()
            .starts_with("List orders with filters.")
    );
    assert!(
        entry("order-cancel")
            .description()
            .starts_with("Cancel a pending order.")
    );
}

fn properties(schema: &Value) -> BTreeSet<String> {
    schema["properties"]
        .as_object()
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

fn required(schema: &Value) -> BTreeSet<String> {
    schema["required"]
        .as_array()
        .map(|list| {
            list.iter()
                .map(|v| v.as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

#[test]
fn order_cancel_and_subscription_cancel_have_the_spec_definitions() {
    let order_cancel = entry("order-cancel");
    let def = order_cancel.def();
    assert!(def.is_mutation());
    assert!(def.is_destructive());
    assert_eq!(
        def.confirm_prompt(),
        Some("This will cancel order {orderId}. Continue?")
    );
    let schema = order_cancel.input_schema();
    assert_eq!(properties(schema), set(&["orderId"]));
    assert_eq!(required(schema), set(&["orderId"]));
    assert_eq!(schema["properties"]["orderId"]["type"], "string");

    let subscription_cancel = entry("subscription-cancel");
    let def = subscription_cancel.def();
    assert!(def.is_mutation());
    assert!(!def.is_destructive());
    assert!(
        subscription_cancel
            .description()
            .starts_with("Cancel a subscription.")
    );
    let schema = subscription_cancel.input_schema();
    assert_eq!(properties(schema), set(&["subscriptionId"]));
    assert_eq!(required(schema), set(&["subscriptionId"]));
    assert_eq!(schema["properties"]["subscriptionId"]["type"], "string");
}

#[test]
fn the_user_commands_have_the_spec_shapes() {
    let create = entry("user-create");
    assert_eq!(create.description(), "Create a new user account.");
    assert!(create.is_mutation());
    let schema = create.input_schema();
    assert_eq!(properties(schema), set(&["email", "name"]));
    assert_eq!(required(schema), set(&["email", "name"]));
    assert_eq!(schema["properties"]["name"]["type"], "string");
    assert_eq!(schema["properties"]["email"]["type"], "string");

    let get = entry("user-get").input_schema();
    assert_eq!(required(get), set(&["id"]));
    assert_eq!(get["properties"]["id"]["type"], "integer");

    let delete = entry("user-delete");
    assert!(delete.description().starts_with("Delete a user account."));
    for tag in ["admin", "mutation", "destructive"] {
        assert!(delete.tags().contains(&tag), "user-delete: tag {tag}");
    }
    assert!(delete.def().is_mutation() && delete.def().is_destructive());
    assert!(delete.def().confirm_prompt().is_some());

    let reset = entry("config-reset");
    assert!(
        reset
            .description()
            .starts_with("Reset server configuration.")
    );
    assert!(reset.tags().contains(&"admin"));
    assert!(reset.is_mutation());
}

#[tokio::test]
async fn spec_example_4_user_42_is_alice() {
    let result = Registry::global()
        .call("user-get", json!({"id": 42}), fresh())
        .await;
    assert!(result.success, "{:?}", result.error);
    let data = result.data.unwrap();
    assert_eq!(data["id"], 42);
    assert_eq!(data["name"], "Alice");
    assert!(data["email"].is_string());
}

#[tokio::test]
async fn spec_example_5_a_missing_email_is_a_validation_error() {
    let result = Registry::global()
        .call("user-create", json!({"name": "Alice"}), fresh())
        .await;
    assert!(!result.success);
    let error = result.error.unwrap();
    assert_eq!(error.code, "VALIDATION_ERROR");
    assert_eq!(
        error.message,
        "Invalid input for 'user-create': Required field 'email' is missing"
    );
    assert_eq!(
        error.suggestion.as_deref(),
        Some("Call afd-detail with command 'user-create' to see the expected input schema.")
    );
}

#[tokio::test]
async fn order_cancel_refuses_orders_that_are_not_pending() {
    let s = Session::new();
    for (order, status) in [
        ("ord-1003", "paid"),
        ("ord-1004", "shipped"),
        ("ord-1005", "cancelled"),
    ] {
        let error = s
            .fails(
                "order-cancel",
                json!({"orderId": order}),
                "ORDER_NOT_PENDING",
            )
            .await;
        assert!(error.message.contains(status), "{}", error.message);
        assert!(error.message.contains("only pending orders"));
        assert_eq!(error.details.unwrap()["status"], status);
    }
    s.fails("order-cancel", json!({"orderId": "ord-9999"}), "NOT_FOUND")
        .await;
}

#[test]
fn a_database_file_is_seeded_once() {
    let path = std::env::temp_dir().join(format!("afd-shop-{}.db", std::process::id()));
    let _ = std::fs::remove_file(&path);
    drop(ShopStore::open(&path).expect("a new file"));
    drop(ShopStore::open(&path).expect("the same file again"));
    let users = count_users(&path);
    let _ = std::fs::remove_file(&path);
    assert_eq!(users, 5);
}

/// Counts users with user-list, on a store opened from `path`.
fn count_users(path: &std::path::Path) -> u64 {
    let ctx = shop::context(ShopStore::open(path).unwrap());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let result = runtime.block_on(Registry::global().call("user-list", json!({}), ctx));
    result.data.unwrap()["total"].as_u64().unwrap()
}

// ---------------------------------------------------------------------------------------
// Every command, called in-process with its effect checked
// ---------------------------------------------------------------------------------------

#[tokio::test]
async fn every_shop_command_succeeds_and_does_its_work() {
    let mut s = Session::new();
    users(&mut s).await;
    s.fresh();
    orders(&mut s).await;
    s.fresh();
    payments(&mut s).await;
    s.fresh();
    products(&mut s).await;
    s.fresh();
    inventory(&mut s).await;
    s.fresh();
    subscriptions(&mut s).await;
    s.fresh();
    shipping(&mut s).await;
    s.fresh();
    reviews(&mut s).await;
    s.fresh();
    coupons(&mut s).await;
    s.fresh();
    carts(&mut s).await;
    s.fresh();
    config(&mut s).await;
    s.fresh();
    reports(&mut s).await;
    s.fresh();
    invoices(&mut s).await;

    let missing: Vec<&str> = COMMAND_NAMES
        .iter()
        .copied()
        .filter(|name| !s.called.contains(*name))
        .collect();
    assert!(missing.is_empty(), "never called successfully: {missing:?}");
}

async fn users(s: &mut Session) {
    let alice = s.ok("user-get", json!({"id": 42})).await;
    assert_eq!(alice["name"], "Alice");

    let eve = s
        .ok(
            "user-create",
            json!({"name": "Eve", "email": "eve@example.com"}),
        )
        .await;
    let id = eve["id"].as_i64().expect("an integer id");
    assert_eq!(eve["name"], "Eve");
    assert_eq!(eve["status"], "active");
    assert_eq!(
        s.ok("user-get", json!({"id": id})).await["email"],
        "eve@example.com"
    );
    s.fails(
        "user-create",
        json!({"name": "Eve 2", "email": "EVE@example.com"}),
        "CONFLICT",
    )
    .await;
    s.fails(
        "user-create",
        json!({"name": "Nobody", "email": "not-an-address"}),
        "INVALID_EMAIL",
    )
    .await;

    let found = s.ok("user-list", json!({"search": "EVE"})).await;
    assert_eq!(found["total"], 1);
    assert_eq!(found["items"][0]["id"], id);
    let page = s.ok("user-list", json!({"limit": 2})).await;
    assert_eq!(page["total"], 6);
    assert_eq!(page["hasMore"], true);
    assert_eq!(page["nextOffset"], 2);

    let updated = s
        .ok("user-update", json!({"id": id, "name": "Eve Adams"}))
        .await;
    assert_eq!(updated["name"], "Eve Adams");
    assert_eq!(
        s.ok("user-get", json!({"id": id})).await["name"],
        "Eve Adams"
    );
    s.fails("user-update", json!({"id": id}), "NO_CHANGES")
        .await;

    assert_eq!(
        s.ok("user-suspend", json!({"id": id})).await["status"],
        "suspended"
    );
    let suspended = s.ok("user-list", json!({"status": "suspended"})).await;
    assert_eq!(ids(&suspended["items"], "id"), [json!(44), json!(id)]);
    s.fails(
        "order-create",
        json!({"userId": id, "items": [{"productId": 1, "quantity": 1}]}),
        "INVALID_STATE",
    )
    .await;
    s.fails("user-suspend", json!({"id": id}), "INVALID_STATE")
        .await;
    assert_eq!(
        s.ok("user-reactivate", json!({"id": id})).await["status"],
        "active"
    );

    let home = s
        .ok(
            "user-address-add",
            json!({"userId": id, "label": "home", "line1": "1 Main St", "city": "Boston",
                   "postalCode": "02108", "country": "US"}),
        )
        .await;
    assert_eq!(home["isDefault"], true, "a first address is the default");
    let work = s
        .ok(
            "user-address-add",
            json!({"userId": id, "label": "work", "line1": "2 Dock Rd", "city": "Boston",
                   "postalCode": "02110", "country": "US"}),
        )
        .await;
    assert_eq!(work["isDefault"], false);
    let listed = s.ok("user-address-list", json!({"userId": id})).await;
    assert_eq!(
        ids(&listed["addresses"], "id"),
        [home["id"].clone(), work["id"].clone()]
    );
    let removed = s
        .ok(
            "user-address-remove",
            json!({"userId": id, "addressId": home["id"]}),
        )
        .await;
    assert_eq!(removed["newDefaultAddressId"], work["id"]);
    let listed = s.ok("user-address-list", json!({"userId": id})).await;
    assert_eq!(listed["addresses"].as_array().unwrap().len(), 1);
    assert_eq!(listed["addresses"][0]["isDefault"], true);

    let error = s.fails("user-delete", json!({"id": 42}), "CONFLICT").await;
    assert!(error.message.contains("ord-1001"), "{}", error.message);
    let deleted = s.ok("user-delete", json!({"id": id})).await;
    assert_eq!(deleted["deleted"], true);
    s.fails("user-get", json!({"id": id}), "NOT_FOUND").await;
    assert_eq!(s.ok("user-list", json!({})).await["total"], 5);
}

async fn orders(s: &mut Session) {
    let all = s.ok("order-list", json!({})).await;
    assert_eq!(all["total"], 5);
    assert_eq!(all["items"][0]["id"], "ord-1003", "newest first");
    let pending = s.ok("order-list", json!({"status": "pending"})).await;
    assert_eq!(ids(&pending["items"], "id"), [json!("ord-1001")]);
    let january = s
        .ok(
            "order-list",
            json!({"from": "2026-01-01", "to": "2026-01-09", "sortOrder": "asc"}),
        )
        .await;
    assert_eq!(
        ids(&january["items"], "id"),
        [json!("ord-1002"), json!("ord-1004")]
    );

    let order = s
        .ok(
            "order-create",
            json!({"userId": 42, "items": [{"productId": 4, "quantity": 1}],
                   "couponCode": "SAVE5", "note": "Leave at the door"}),
        )
        .await;
    assert_eq!(order["id"], "ord-1006");
    assert_eq!(order["status"], "pending");
    // 3200 - 500 coupon = 2700: below the free-shipping threshold, 8% tax.
    assert_eq!(order["subtotalCents"], 3200);
    assert_eq!(order["discountCents"], 500);
    assert_eq!(order["shippingCents"], 599);
    assert_eq!(order["taxCents"], 216);
    assert_eq!(order["totalCents"], 3515);
    assert_eq!(order["items"][0]["sku"], "BTL-004");
    let mine = s.ok("order-list", json!({"userId": 42})).await;
    assert_eq!(mine["items"][0]["id"], "ord-1006");
    assert_eq!(mine["total"], 3);
    let stock = s.ok("inventory-get", json!({"productId": 4})).await;
    assert_eq!(stock["reserved"], 2, "the order reserved a unit");
    let coupon = s.ok("coupon-get", json!({"code": "SAVE5"})).await;
    assert_eq!(coupon["timesRedeemed"], 1);

    s.fails(
        "order-create",
        json!({"userId": 42, "items": [{"productId": 4, "quantity": 5}]}),
        "INSUFFICIENT_STOCK",
    )
    .await;
    s.fails(
        "order-create",
        json!({"userId": 42, "items": [{"productId": 6, "quantity": 1}]}),
        "INVALID_STATE",
    )
    .await;
    s.fails(
        "order-create",
        json!({"userId": 42, "items": [{"productId": 1, "quantity": 1}], "couponCode": "SUMMER25"}),
        "COUPON_INVALID",
    )
    .await;

    let cancelled = s.ok("order-cancel", json!({"orderId": "ord-1006"})).await;
    assert_eq!(cancelled["order"]["status"], "cancelled");
    assert_eq!(cancelled["releasedUnits"], 1);
    let stock = s.ok("inventory-get", json!({"productId": 4})).await;
    assert_eq!(stock["reserved"], 1, "the reservation was released");
    let coupon = s.ok("coupon-get", json!({"code": "SAVE5"})).await;
    assert_eq!(coupon["timesRedeemed"], 0);
    s.fails(
        "order-cancel",
        json!({"orderId": "ord-1006"}),
        "ORDER_NOT_PENDING",
    )
    .await;
}

async fn payments(s: &mut Session) {
    let held = s
        .ok(
            "payment-authorize",
            json!({"orderId": "ord-1001", "method": "card"}),
        )
        .await;
    assert_eq!(held["id"], "pay-3004");
    assert_eq!(held["amountCents"], 7128, "defaults to the balance");
    assert_eq!(held["status"], "authorized");
    s.fails(
        "payment-authorize",
        json!({"orderId": "ord-1001", "method": "card"}),
        "INVALID_STATE",
    )
    .await;

    let captured = s
        .ok("payment-capture", json!({"paymentId": "pay-3004"}))
        .await;
    assert_eq!(captured["payment"]["status"], "captured");
    assert_eq!(captured["orderStatus"], "paid");
    let listed = s.ok("payment-list", json!({"orderId": "ord-1001"})).await;
    assert_eq!(listed["total"], 1);
    assert_eq!(
        s.ok("payment-list", json!({"method": "paypal"})).await["items"][0]["id"],
        "pay-3002"
    );

    let partial = s
        .ok(
            "payment-refund",
            json!({"paymentId": "pay-3004", "amountCents": 1000, "reason": "Chipped mug"}),
        )
        .await;
    assert_eq!(partial["payment"]["status"], "partially_refunded");
    assert_eq!(partial["orderStatus"], "paid");
    s.fails(
        "payment-refund",
        json!({"paymentId": "pay-3004", "amountCents": 999999, "reason": "Too much"}),
        "AMOUNT_EXCEEDS_BALANCE",
    )
    .await;
    let rest = s
        .ok(
            "payment-refund",
            json!({"paymentId": "pay-3004", "reason": "Order returned unopened"}),
        )
        .await;
    assert_eq!(rest["refund"]["amountCents"], 6128);
    assert_eq!(rest["payment"]["status"], "refunded");
    assert_eq!(rest["orderStatus"], "refunded");
    let shirt = s.ok("inventory-get", json!({"productId": 1})).await;
    assert_eq!(
        shirt["reserved"], 0,
        "the refunded order's stock was released"
    );

    let detail = s.ok("payment-get", json!({"paymentId": "pay-3004"})).await;
    assert_eq!(detail["refundedCents"], 7128);
    assert_eq!(detail["refunds"].as_array().unwrap().len(), 2);
    let refunds = s
        .ok("payment-refund-list", json!({"orderId": "ord-1001"}))
        .await;
    assert_eq!(refunds["total"], 2);
    assert_eq!(refunds["items"][0]["reason"], "Order returned unopened");

    // A hold that is released: voided, then the order is called off with another hold.
    let order = s
        .ok(
            "order-create",
            json!({"userId": 43, "items": [{"productId": 5, "quantity": 2}]}),
        )
        .await;
    let order_id = order["id"].as_str().unwrap().to_owned();
    let hold = s
        .ok(
            "payment-authorize",
            json!({"orderId": order_id, "method": "paypal", "amountCents": 1000}),
        )
        .await;
    let voided = s.ok("payment-void", json!({"paymentId": hold["id"]})).await;
    assert_eq!(voided["status"], "voided");
    s.fails(
        "payment-capture",
        json!({"paymentId": hold["id"]}),
        "INVALID_STATE",
    )
    .await;
    let second = s
        .ok(
            "payment-authorize",
            json!({"orderId": order_id, "method": "card"}),
        )
        .await;
    assert_eq!(second["amountCents"], order["totalCents"]);
    let cancelled = s.ok("order-cancel", json!({"orderId": order_id})).await;
    assert_eq!(cancelled["voidedPayments"], json!([second["id"]]));
}

async fn products(s: &mut Session) {
    let apparel = s.ok("product-list", json!({"category": "apparel"})).await;
    assert_eq!(apparel["total"], 2);
    let archived = s.ok("product-list", json!({"active": false})).await;
    assert_eq!(ids(&archived["items"], "sku"), [json!("CAP-006")]);
    let priciest = s
        .ok(
            "product-list",
            json!({"sortBy": "price", "sortOrder": "desc", "limit": 1}),
        )
        .await;
    assert_eq!(priciest["items"][0]["name"], "Merino Hoodie");
    let cheap = s
        .ok(
            "product-list",
            json!({"maxPriceCents": 1500, "active": true, "search": "o"}),
        )
        .await;
    assert_eq!(
        ids(&cheap["items"], "sku"),
        [json!("BAG-005"), json!("NTB-007")]
    );

    let socks = s
        .ok(
            "product-create",
            json!({"sku": "SCK-008", "name": "Wool Socks", "category": "apparel",
                   "priceCents": 1400, "weightGrams": 80, "initialStock": 50}),
        )
        .await;
    let id = socks["id"].as_i64().unwrap();
    assert_eq!(socks["active"], true);
    let stock = s.ok("inventory-get", json!({"productId": id})).await;
    assert_eq!(stock["onHand"], 50);
    assert_eq!(
        stock["reorderLevel"], 5,
        "from inventory.default_reorder_level"
    );
    s.fails(
        "product-create",
        json!({"sku": "SCK-008", "name": "Again", "category": "apparel", "priceCents": 1}),
        "CONFLICT",
    )
    .await;

    let detail = s.ok("product-get", json!({"id": id})).await;
    assert_eq!(detail["available"], 50);
    assert_eq!(detail["reviewCount"], 0);
    let hoodie = s.ok("product-get", json!({"id": 2})).await;
    assert_eq!(hoodie["averageRating"], 5.0);
    assert_eq!(hoodie["sku"], "HOD-002");

    let updated = s
        .ok(
            "product-update",
            json!({"id": id, "description": "Merino blend, pair of two."}),
        )
        .await;
    assert_eq!(updated["description"], "Merino blend, pair of two.");
    let repriced = s
        .ok("product-set-price", json!({"id": id, "priceCents": 1500}))
        .await;
    assert_eq!(repriced["previousPriceCents"], 1400);
    assert_eq!(repriced["product"]["priceCents"], 1500);
    assert_eq!(
        s.ok("product-get", json!({"id": id})).await["priceCents"],
        1500
    );

    // The hoodie is in Bob's cart: archiving takes it out.
    let archived = s.ok("product-archive", json!({"id": 2})).await;
    assert_eq!(archived["product"]["active"], false);
    assert_eq!(archived["removedFromCarts"], 1);
    let bob = s.ok("cart-get", json!({"userId": 40})).await;
    assert_eq!(bob["items"].as_array().unwrap().len(), 1);
    s.fails("product-archive", json!({"id": 2}), "INVALID_STATE")
        .await;
    let restored = s.ok("product-restore", json!({"id": 2})).await;
    assert_eq!(restored["active"], true);

    s.fails("product-delete", json!({"id": 1}), "CONFLICT")
        .await;
    let deleted = s.ok("product-delete", json!({"id": id})).await;
    assert_eq!(deleted["sku"], "SCK-008");
    s.fails("product-get", json!({"id": id}), "NOT_FOUND").await;
    s.fails("inventory-get", json!({"productId": id}), "NOT_FOUND")
        .await;
}

async fn inventory(s: &mut Session) {
    let shirt = s.ok("inventory-get", json!({"productId": 1})).await;
    assert_eq!(
        (&shirt["onHand"], &shirt["reserved"], &shirt["available"]),
        (&json!(120), &json!(2), &json!(118))
    );
    let low = s.ok("inventory-list", json!({"lowStockOnly": true})).await;
    let low_ids = ids(&low["items"], "productId");
    assert!(
        low_ids.contains(&json!(2)) && low_ids.contains(&json!(4)),
        "{low_ids:?}"
    );
    assert!(!low_ids.contains(&json!(1)));
    let apparel = s.ok("inventory-list", json!({"category": "apparel"})).await;
    assert_eq!(apparel["total"], 2);

    let restocked = s
        .ok(
            "inventory-restock",
            json!({"productId": 4, "quantity": 20, "reference": "PO-8001"}),
        )
        .await;
    assert_eq!(restocked["onHand"], 23);
    assert_eq!(restocked["lowStock"], false);
    let adjusted = s
        .ok(
            "inventory-adjust",
            json!({"productId": 4, "delta": -2, "reason": "damaged"}),
        )
        .await;
    assert_eq!(adjusted["onHand"], 21);
    s.fails(
        "inventory-adjust",
        json!({"productId": 4, "delta": -21, "reason": "lost"}),
        "INSUFFICIENT_STOCK",
    )
    .await;
    let level = s
        .ok(
            "inventory-set-reorder-level",
            json!({"productId": 4, "reorderLevel": 25}),
        )
        .await;
    assert_eq!(level["reorderLevel"], 25);
    assert_eq!(level["lowStock"], true);

    let moves = s
        .ok("inventory-movement-list", json!({"productId": 4}))
        .await;
    assert_eq!(moves["items"][0]["reason"], "damaged");
    assert_eq!(moves["items"][0]["delta"], -2);
    assert_eq!(moves["items"][1]["reason"], "restock");
    assert_eq!(moves["items"][1]["reference"], "PO-8001");
    let restocks = s
        .ok("inventory-movement-list", json!({"reason": "restock"}))
        .await;
    assert_eq!(restocks["total"], 7);
}

async fn subscriptions(s: &mut Session) {
    let plans = s.ok("plan-list", json!({})).await;
    assert_eq!(
        ids(&plans["plans"], "id"),
        [json!("basic"), json!("plus"), json!("annual-plus")]
    );
    assert_eq!(plans["plans"][1]["activeSubscribers"], 1);

    let alices = s
        .ok("subscription-get", json!({"subscriptionId": "sub-2001"}))
        .await;
    assert_eq!(alices["userId"], 42);
    assert_eq!(alices["status"], "active");
    let paused = s.ok("subscription-list", json!({"status": "paused"})).await;
    assert_eq!(ids(&paused["items"], "id"), [json!("sub-2002")]);

    let created = s
        .ok(
            "subscription-create",
            json!({"userId": 43, "planId": "basic"}),
        )
        .await;
    assert_eq!(created["id"], "sub-2004");
    assert_eq!(created["status"], "active");
    assert_eq!(created["priceCents"], 1500);
    s.fails(
        "subscription-create",
        json!({"userId": 42, "planId": "basic"}),
        "CONFLICT",
    )
    .await;
    s.fails(
        "subscription-create",
        json!({"userId": 41, "planId": "gold"}),
        "NOT_FOUND",
    )
    .await;

    let changed = s
        .ok(
            "subscription-change-plan",
            json!({"subscriptionId": "sub-2004", "planId": "plus"}),
        )
        .await;
    assert_eq!(changed["previousPlanId"], "basic");
    assert_eq!(changed["monthlyDifferenceCents"], 1400);
    assert_eq!(changed["subscription"]["planName"], "Plus Box");

    let paused = s
        .ok("subscription-pause", json!({"subscriptionId": "sub-2004"}))
        .await;
    assert_eq!(paused["status"], "paused");
    s.fails(
        "subscription-pause",
        json!({"subscriptionId": "sub-2004"}),
        "INVALID_STATE",
    )
    .await;
    let resumed = s
        .ok("subscription-resume", json!({"subscriptionId": "sub-2004"}))
        .await;
    assert_eq!(resumed["status"], "active");
    // Bob's paused subscription lapsed meanwhile: resuming starts a new period.
    let bob = s
        .ok("subscription-resume", json!({"subscriptionId": "sub-2002"}))
        .await;
    assert!(bob["currentPeriodEnd"].as_str().unwrap() > "2026-01-15");

    let ended = s
        .ok("subscription-cancel", json!({"subscriptionId": "sub-2004"}))
        .await;
    assert_eq!(ended["status"], "cancelled");
    assert!(ended["endedAt"].is_string());
    s.fails(
        "subscription-cancel",
        json!({"subscriptionId": "sub-2004"}),
        "INVALID_STATE",
    )
    .await;
    let listed = s.ok("subscription-list", json!({"userId": 43})).await;
    assert_eq!(listed["total"], 2);
}

async fn shipping(s: &mut Session) {
    let quote = s.ok("shipping-quote", json!({"orderId": "ord-1003"})).await;
    assert_eq!(quote["weightGrams"], 550);
    assert_eq!(quote["options"][0]["carrier"], "usps");
    assert_eq!(quote["options"][0]["costCents"], 599);
    assert_eq!(quote["options"].as_array().unwrap().len(), 5);
    s.fails(
        "shipping-quote",
        json!({"orderId": "ord-1005"}),
        "INVALID_STATE",
    )
    .await;

    s.fails(
        "shipment-create",
        json!({"orderId": "ord-1001", "carrier": "ups"}),
        "INVALID_STATE",
    )
    .await;
    s.fails(
        "shipment-create",
        json!({"orderId": "ord-1003", "carrier": "usps", "service": "express"}),
        "UNSUPPORTED_SERVICE",
    )
    .await;
    let label = s
        .ok(
            "shipment-create",
            json!({"orderId": "ord-1003", "carrier": "ups"}),
        )
        .await;
    assert_eq!(label["id"], "shp-4003");
    assert_eq!(label["status"], "label_created");
    assert_eq!(label["costCents"], 699);
    let shipped = s.ok("order-list", json!({"status": "shipped"})).await;
    assert!(ids(&shipped["items"], "id").contains(&json!("ord-1003")));
    let bottle = s.ok("inventory-get", json!({"productId": 4})).await;
    assert_eq!(
        (&bottle["onHand"], &bottle["reserved"]),
        (&json!(2), &json!(0))
    );

    let voided = s
        .ok("shipment-void", json!({"shipmentId": "shp-4003"}))
        .await;
    assert_eq!(voided["status"], "voided");
    let bottle = s.ok("inventory-get", json!({"productId": 4})).await;
    assert_eq!(
        (&bottle["onHand"], &bottle["reserved"]),
        (&json!(3), &json!(1))
    );
    let paid = s.ok("order-list", json!({"status": "paid"})).await;
    assert_eq!(ids(&paid["items"], "id"), [json!("ord-1003")]);

    let express = s
        .ok(
            "shipment-create",
            json!({"orderId": "ord-1003", "carrier": "fedex", "service": "express"}),
        )
        .await;
    assert_eq!(express["costCents"], 1949);
    let id = express["id"].clone();
    s.fails(
        "shipment-create",
        json!({"orderId": "ord-1003", "carrier": "ups"}),
        "INVALID_STATE",
    )
    .await;
    let moving = s
        .ok(
            "shipment-update-status",
            json!({"shipmentId": id, "status": "in_transit"}),
        )
        .await;
    assert_eq!(moving["status"], "in_transit");
    s.fails("shipment-void", json!({"shipmentId": id}), "INVALID_STATE")
        .await;
    let delivered = s
        .ok(
            "shipment-update-status",
            json!({"shipmentId": id, "status": "delivered"}),
        )
        .await;
    assert!(delivered["deliveredAt"].is_string());
    let got = s.ok("shipment-get", json!({"shipmentId": id})).await;
    assert_eq!(got["status"], "delivered");
    let delivered_orders = s.ok("order-list", json!({"status": "delivered"})).await;
    assert!(ids(&delivered_orders["items"], "id").contains(&json!("ord-1003")));
    let for_order = s.ok("shipment-list", json!({"orderId": "ord-1003"})).await;
    assert_eq!(for_order["total"], 2);
    let in_transit = s.ok("shipment-list", json!({"status": "in_transit"})).await;
    assert_eq!(ids(&in_transit["items"], "id"), [json!("shp-4002")]);
}

async fn reviews(s: &mut Session) {
    let notebook = s.ok("review-list", json!({"productId": 7})).await;
    assert_eq!(notebook["items"][0]["status"], "pending");

    let review = s
        .ok(
            "review-create",
            json!({"productId": 3, "userId": 42, "rating": 4, "title": "Nice mug"}),
        )
        .await;
    assert_eq!(review["status"], "pending");
    assert_eq!(review["verifiedPurchase"], false);
    let id = review["id"].clone();
    s.fails(
        "review-create",
        json!({"productId": 2, "userId": 42, "rating": 1, "title": "Again"}),
        "CONFLICT",
    )
    .await;

    let approved = s.ok("review-approve", json!({"id": id})).await;
    assert_eq!(approved["status"], "approved");
    let summary = s.ok("review-summary", json!({"productId": 3})).await;
    assert_eq!(summary["count"], 1);
    assert_eq!(summary["averageRating"], 4.0);
    assert_eq!(summary["histogram"], json!([0, 0, 0, 1, 0]));

    let rejected = s
        .ok(
            "review-reject",
            json!({"id": 3, "note": "Please contact support instead."}),
        )
        .await;
    assert_eq!(rejected["status"], "rejected");
    assert_eq!(
        rejected["moderationNote"],
        "Please contact support instead."
    );
    let mine = s
        .ok("review-list", json!({"userId": 42, "minRating": 4}))
        .await;
    assert_eq!(mine["total"], 2);

    let deleted = s.ok("review-delete", json!({"id": id})).await;
    assert_eq!(deleted["productId"], 3);
    let summary = s.ok("review-summary", json!({"productId": 3})).await;
    assert_eq!(summary["count"], 0);
    assert_eq!(summary["averageRating"], Value::Null);

    // Alice received the hoodie (ord-1002 was delivered): Bob has not.
    s.ok(
        "config-set",
        json!({"key": "reviews.auto_approve", "value": true}),
    )
    .await;
    let auto = s
        .ok(
            "review-create",
            json!({"productId": 1, "userId": 43, "rating": 5, "title": "Soft"}),
        )
        .await;
    assert_eq!(auto["status"], "approved");
}

async fn coupons(s: &mut Session) {
    let usable = s.ok("coupon-list", json!({"usable": true})).await;
    let mut codes = ids(&usable["items"], "code");
    codes.sort_by_key(|code| code.to_string());
    assert_eq!(codes, [json!("SAVE5"), json!("WELCOME10")]);
    let welcome = s.ok("coupon-get", json!({"code": "welcome10"})).await;
    assert_eq!(welcome["code"], "WELCOME10");

    let created = s
        .ok(
            "coupon-create",
            json!({"code": "SPRING15", "kind": "percent", "value": 15, "maxRedemptions": 50}),
        )
        .await;
    assert_eq!(created["usable"], true);
    s.fails(
        "coupon-create",
        json!({"code": "HALF", "kind": "percent", "value": 150}),
        "VALIDATION_ERROR",
    )
    .await;
    s.fails(
        "coupon-create",
        json!({"code": "SPRING15", "kind": "fixed", "value": 100}),
        "CONFLICT",
    )
    .await;
    let updated = s
        .ok(
            "coupon-update",
            json!({"code": "SPRING15", "minSubtotalCents": 2000}),
        )
        .await;
    assert_eq!(updated["minSubtotalCents"], 2000);

    let check = s
        .ok(
            "coupon-validate",
            json!({"code": "SPRING15", "subtotalCents": 4000}),
        )
        .await;
    assert_eq!(
        (&check["valid"], &check["discountCents"]),
        (&json!(true), &json!(600))
    );
    let small = s
        .ok(
            "coupon-validate",
            json!({"code": "SPRING15", "subtotalCents": 1000}),
        )
        .await;
    assert_eq!(small["valid"], false);
    assert!(small["reason"].as_str().unwrap().contains("2000"));

    let off = s.ok("coupon-deactivate", json!({"code": "SPRING15"})).await;
    assert_eq!(
        (&off["active"], &off["usable"]),
        (&json!(false), &json!(false))
    );
    let deleted = s.ok("coupon-delete", json!({"code": "SPRING15"})).await;
    assert_eq!(deleted["code"], "SPRING15");
    s.fails("coupon-get", json!({"code": "SPRING15"}), "NOT_FOUND")
        .await;
    s.fails("coupon-delete", json!({"code": "WELCOME10"}), "CONFLICT")
        .await;
}

async fn carts(s: &mut Session) {
    let bob = s.ok("cart-get", json!({"userId": 40})).await;
    assert_eq!(bob["itemCount"], 3);
    assert_eq!(bob["subtotalCents"], 8900 + 2 * 1200);

    let cart = s
        .ok(
            "cart-add-item",
            json!({"userId": 42, "productId": 5, "quantity": 2}),
        )
        .await;
    assert_eq!(cart["items"][0]["quantity"], 2);
    let cart = s
        .ok("cart-add-item", json!({"userId": 42, "productId": 5}))
        .await;
    assert_eq!(cart["items"][0]["quantity"], 3, "adds to the line");
    s.fails(
        "cart-add-item",
        json!({"userId": 42, "productId": 5, "quantity": 10}),
        "QUANTITY_LIMIT",
    )
    .await;
    let cart = s
        .ok(
            "cart-update-item",
            json!({"userId": 42, "productId": 5, "quantity": 1}),
        )
        .await;
    assert_eq!(cart["subtotalCents"], 1500);
    s.ok("cart-add-item", json!({"userId": 42, "productId": 7}))
        .await;
    let cart = s
        .ok("cart-remove-item", json!({"userId": 42, "productId": 7}))
        .await;
    assert_eq!(ids(&cart["items"], "productId"), [json!(5)]);
    s.fails(
        "cart-remove-item",
        json!({"userId": 42, "productId": 7}),
        "NOT_FOUND",
    )
    .await;

    let order = s
        .ok(
            "cart-checkout",
            json!({"userId": 42, "couponCode": "WELCOME10"}),
        )
        .await;
    assert_eq!(order["status"], "pending");
    assert_eq!(order["subtotalCents"], 1500);
    assert_eq!(order["discountCents"], 150);
    assert_eq!(order["items"][0]["productId"], 5);
    let cart = s.ok("cart-get", json!({"userId": 42})).await;
    assert_eq!(cart["items"], json!([]), "checkout empties the cart");
    let orders = s.ok("order-list", json!({"userId": 42})).await;
    assert_eq!(orders["items"][0]["id"], order["id"]);

    let cleared = s.ok("cart-clear", json!({"userId": 40})).await;
    assert_eq!(cleared["removedLines"], 2);
    assert_eq!(
        s.ok("cart-get", json!({"userId": 40})).await["itemCount"],
        0
    );
    s.fails("cart-checkout", json!({"userId": 40}), "EMPTY_CART")
        .await;
}

async fn config(s: &mut Session) {
    let tax = s.ok("config-get", json!({"key": "tax.rate_percent"})).await;
    assert_eq!(tax["value"], 8.0);
    let shipping = s.ok("config-list", json!({"prefix": "shipping."})).await;
    assert_eq!(shipping["entries"].as_array().unwrap().len(), 3);
    let changed = s.ok("config-list", json!({"changedOnly": true})).await;
    assert_eq!(
        ids(&changed["entries"], "key"),
        [json!("orders.max_quantity_per_item"), json!("store.name")]
    );

    let set = s
        .ok(
            "config-set",
            json!({"key": "shipping.flat_rate_cents", "value": 799}),
        )
        .await;
    assert_eq!(
        (&set["value"], &set["isDefault"]),
        (&json!(799), &json!(false))
    );
    let order = s
        .ok(
            "order-create",
            json!({"userId": 43, "items": [{"productId": 7, "quantity": 1}]}),
        )
        .await;
    assert_eq!(order["shippingCents"], 799, "orders use the new rate");
    s.fails(
        "config-set",
        json!({"key": "shipping.flat_rate_cents", "value": "cheap"}),
        "TYPE_MISMATCH",
    )
    .await;
    s.fails(
        "config-set",
        json!({"key": "shipping.flat_rate_cents", "value": 1.5}),
        "TYPE_MISMATCH",
    )
    .await;
    s.fails("config-get", json!({"key": "no.such.key"}), "NOT_FOUND")
        .await;

    let restored = s
        .ok("config-restore", json!({"key": "shipping.flat_rate_cents"}))
        .await;
    assert_eq!(
        (&restored["value"], &restored["isDefault"]),
        (&json!(599), &json!(true))
    );

    let reset = s.ok("config-reset", json!({})).await;
    assert_eq!(
        reset["changedKeys"],
        json!(["orders.max_quantity_per_item", "store.name"])
    );
    assert_eq!(
        s.ok("config-get", json!({"key": "store.name"})).await["value"],
        "My Shop"
    );
    let changed = s.ok("config-list", json!({"changedOnly": true})).await;
    assert_eq!(changed["entries"], json!([]));
}

async fn reports(s: &mut Session) {
    let export = s.ok("report-orders-export", json!({})).await;
    assert_eq!(export["orders"], 4, "the cancelled order is left out");
    assert_eq!(export["months"], json!(["2026-01"]));
    assert_eq!(export["uri"], "shop://exports/orders-start-now.csv");
    let summary = s.ok("report-sales-summary", json!({})).await;
    assert_eq!(summary["orders"], 4, "the cancelled order is left out");
    assert_eq!(summary["units"], 9);
    assert_eq!(summary["grossCents"], 23800);
    assert_eq!(summary["discountCents"], 890);
    assert_eq!(summary["totalCents"], 25941);
    assert_eq!(summary["netCents"], 25941);
    let recent = s
        .ok("report-sales-summary", json!({"from": "2026-01-08"}))
        .await;
    assert_eq!(recent["orders"], 2);
    assert_eq!(recent["totalCents"], 7128 + 5675);

    let days = s.ok("report-revenue-by-day", json!({})).await;
    assert_eq!(days["days"].as_array().unwrap().len(), 4);
    assert_eq!(days["days"][0]["date"], "2026-01-02");
    assert_eq!(days["days"][0]["totalCents"], 8651);

    let by_units = s
        .ok(
            "report-top-products",
            json!({"rankBy": "units", "limit": 1}),
        )
        .await;
    assert_eq!(by_units["products"][0]["name"], "Dotted Notebook");
    assert_eq!(by_units["products"][0]["units"], 3);
    let by_revenue = s.ok("report-top-products", json!({})).await;
    assert_eq!(by_revenue["products"][0]["name"], "Merino Hoodie");

    let customers = s.ok("report-top-customers", json!({})).await;
    assert_eq!(customers["customers"][0]["name"], "Alice");
    assert_eq!(customers["customers"][0]["lifetimeValueCents"], 7128 + 8651);

    let statuses = s.ok("report-order-status", json!({})).await;
    assert_eq!(statuses["total"], 5);
    assert_eq!(
        statuses["statuses"][0],
        json!({"status": "pending", "orders": 1, "totalCents": 7128})
    );

    let subscriptions = s.ok("report-subscription-metrics", json!({})).await;
    assert_eq!(
        (
            &subscriptions["active"],
            &subscriptions["paused"],
            &subscriptions["ended"]
        ),
        (&json!(1), &json!(1), &json!(1))
    );
    assert_eq!(subscriptions["mrrCents"], 2900);

    let stock = s.ok("report-inventory-value", json!({})).await;
    assert_eq!(stock["units"], 433);
    assert_eq!(stock["valueCents"], 776200);
    assert_eq!(stock["categories"][0]["category"], "apparel");

    let carts = s.ok("report-abandoned-carts", json!({"idleDays": 0})).await;
    assert_eq!(ids(&carts["carts"], "userId"), [json!(40), json!(43)]);
    assert_eq!(carts["valueCents"], 11300 + 1800);

    let before = s.ok("report-refund-rate", json!({})).await;
    assert_eq!(before["capturedCents"], 18813);
    assert_eq!(before["refunds"], 0);
    s.ok(
        "payment-refund",
        json!({"paymentId": "pay-3001", "amountCents": 1000, "reason": "Late delivery credit"}),
    )
    .await;
    let after = s.ok("report-refund-rate", json!({})).await;
    assert_eq!(after["refunds"], 1);
    assert_eq!(after["refundedCents"], 1000);
    assert!(after["rate"].as_f64().unwrap() > 0.05);
    let summary = s.ok("report-sales-summary", json!({})).await;
    assert_eq!(summary["netCents"], 25941 - 1000);
}

async fn invoices(s: &mut Session) {
    let paid = s.ok("invoice-get", json!({"orderId": "ord-1002"})).await;
    assert_eq!(paid["number"], "INV-1002");
    assert_eq!(paid["status"], "paid");
    assert_eq!(paid["paidCents"], 8651);
    assert_eq!(paid["balanceDueCents"], 0);
    assert_eq!(paid["seller"], "Northwind Goods");
    assert_eq!(paid["billTo"]["name"], "Alice");
    assert_eq!(paid["billTo"]["address"]["city"], "Portland");
    let open = s.ok("invoice-get", json!({"orderId": "ord-1001"})).await;
    assert_eq!(
        (&open["status"], &open["balanceDueCents"]),
        (&json!("open"), &json!(7128))
    );

    let unpaid = s.ok("invoice-list", json!({"status": "open"})).await;
    assert_eq!(ids(&unpaid["items"], "orderId"), [json!("ord-1001")]);
    let alices = s.ok("invoice-list", json!({"userId": 42})).await;
    assert_eq!(alices["total"], 2);
    let void = s.ok("invoice-list", json!({"status": "void"})).await;
    assert_eq!(ids(&void["items"], "orderId"), [json!("ord-1005")]);
}

#[tokio::test]
async fn hybrid_lists_the_everyday_lookups_beside_the_meta_tools_and_lazy_does_not() {
    use afd_runtime::mcp::{McpServer, Strategy};
    use afd_tests::mcp::Client;

    let meta = [
        "afd-discover",
        "afd-detail",
        "afd-call",
        "afd-batch",
        "afd-pipe",
    ];
    let eager = ["product-get", "product-list", "plan-list"];
    let marked: BTreeSet<&str> = COMMANDS
        .iter()
        .filter(|def| def.is_eager())
        .map(|def| def.name())
        .collect();
    assert_eq!(marked, BTreeSet::from(eager));
    for name in eager {
        let def = entry(name).def();
        assert!(!def.is_mutation(), "{name} is a read");
        assert!(
            def.contexts().is_empty(),
            "{name} is callable in every context"
        );
    }

    let serve = |strategy| {
        McpServer::builder(Registry::global())
            .strategy(strategy)
            .context(fresh())
            .dispatch(|d| d.expose_only(COMMAND_NAMES))
            .build()
            .unwrap()
    };
    let names = |tools: &[rmcp::model::Tool]| -> Vec<String> {
        tools.iter().map(|tool| tool.name.to_string()).collect()
    };

    let hybrid = Client::connect(serve(Strategy::Hybrid)).await;
    let tools = hybrid.tools().await;
    let listed = names(&tools);
    assert_eq!(listed[..5], meta);
    assert_eq!(
        listed[5..]
            .iter()
            .map(String::as_str)
            .collect::<BTreeSet<_>>(),
        BTreeSet::from(eager)
    );
    assert_eq!(listed.len(), meta.len() + eager.len());
    let list = tools
        .iter()
        .find(|tool| tool.name == "product-list")
        .unwrap();
    assert!(
        list.input_schema.contains_key("properties"),
        "an eager tool has its full schema"
    );
    let plans = hybrid.call("plan-list", json!({})).await;
    assert_eq!(plans["success"], true, "{plans}");

    let lazy = Client::connect(serve(Strategy::Lazy)).await;
    assert_eq!(names(&lazy.tools().await), meta);
}

#[tokio::test]
async fn the_orders_export_embeds_its_csv_and_reports_each_month() {
    let reported = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<String>>>);
    impl afd_runtime::progress::ProgressSink for Sink {
        fn report(
            &self,
            update: afd_runtime::progress::ProgressUpdate,
        ) -> futures_util::future::BoxFuture<'_, ()> {
            self.0
                .lock()
                .unwrap()
                .push(update.message.unwrap_or_default());
            Box::pin(async {})
        }
    }
    let ctx = fresh().with_progress(std::sync::Arc::new(Sink(reported.clone())));
    let result = Registry::global()
        .call("report-orders-export", json!({"from": "2026-01-07"}), ctx)
        .await;
    assert!(result.success, "{:?}", result.error);
    let data = result.data.clone().unwrap();
    let blocks = serde_json::to_value(&result.content).unwrap();
    assert_eq!(blocks[0]["resource"]["mimeType"], "text/csv");
    let csv = blocks[0]["resource"]["text"].as_str().unwrap();
    let mut rows = csv.lines();
    assert_eq!(
        rows.next(),
        Some("order_id,placed_at,status,user_id,product_id,quantity,unit_price_cents,line_cents")
    );
    let rows: Vec<&str> = rows.collect();
    assert_eq!(rows.len() as u64, data["lines"].as_u64().unwrap());
    assert_eq!(data["orders"], 3, "placed on or after 2026-01-07");
    assert!(rows.iter().all(|row| row.split(',').count() == 8), "{csv}");
    let line =
        |row: &&str| -> Vec<i64> { row.split(',').skip(5).map(|n| n.parse().unwrap()).collect() };
    assert!(rows.iter().map(line).all(|n| n[0] * n[1] == n[2]));
    assert_eq!(*reported.lock().unwrap(), ["2026-01 exported"]);
}
