use afd_runtime::auth::Scopes;
use afd_runtime::prelude::*;

afd_runtime::category!("order", "Orders: place, list and cancel them.", scopes("orders:read"));

/// Lists the orders.
#[command]
fn order_list() -> &'static str {
    "orders"
}

/// Cancels an order.
#[command(mutation, scopes("orders:write", "https://api.example.com/refunds"))]
fn order_cancel() -> &'static str {
    "cancelled"
}

fn main() {
    let registry = Registry::global();
    let list = registry.get("order-list").unwrap().def();
    let cancel = registry.get("order-cancel").unwrap().def();
    // The category's default, and the command's own scopes over it.
    assert_eq!(registry.required_scopes(list), ["orders:read"]);
    assert_eq!(
        registry.required_scopes(cancel),
        ["orders:write", "https://api.example.com/refunds"]
    );
    // A broader scope covers a narrower one.
    let granted = Scopes::parse("orders https://api.example.com/refunds");
    assert!(granted.covers_all(registry.required_scopes(cancel)));
    assert!(!Scopes::parse("orders:read").covers_all(registry.required_scopes(cancel)));
}
