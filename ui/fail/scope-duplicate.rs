use afd_runtime::prelude::*;

/// Lists the orders.
#[command(scopes("orders:read", "orders:read"))]
fn order_list() -> &'static str {
    "orders"
}

fn main() {}
