//! Every `#[command]` key at once.

use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct OrderRef {
    order_id: String,
}

/// Cancel a pending order. Its items go back to stock.
#[command(
    name = "order-cancel",
    title = "Cancel order",
    category = "orders",
    tags("billing", "crud"),
    mutation,
    destructive,
    idempotent,
    open_world,
    confirm_prompt = "This will cancel order {orderId}. Continue?",
    execution_time = "long-running",
    errors("NOT_FOUND", "INVALID_STATE"),
    handoff,
    handoff_protocol = "websocket",
    version = "2.0.0",
    expose(mcp = true, cli = false, agent = true, palette = false),
    aliases("order-void"),
    deprecated_aliases("cancel-order"),
    eager,
    blocking,
    scopes("orders:write"),
    needs_client("elicitation"),
    task = "required",
    task_start = "handler"
)]
fn cancel(input: OrderRef) -> String {
    input.order_id
}

fn main() {
    let def = cancel::COMMAND;
    assert_eq!(def.name(), "order-cancel");
    assert_eq!(def.title(), Some("Cancel order"));
    assert_eq!(def.category(), "orders");
    assert!(def.is_destructive() && def.is_idempotent() && def.is_handoff() && def.is_eager());
    assert!(def.is_blocking());
    assert_eq!(def.needs_client(), ["elicitation"]);
    assert_eq!(def.task_support(), afd_runtime::TaskSupport::Required);
    assert_eq!(def.task_start(), afd_runtime::TaskStart::Handler);
    assert!(def.is_open_world());
    assert_eq!(def.scopes(), ["orders:write"]);
    assert!(!def.expose().allows_cli() && !def.expose().allows_palette());
}
