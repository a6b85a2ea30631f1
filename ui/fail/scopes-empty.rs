use afd_runtime::prelude::*;

/// Deletes an order for good.
#[command(mutation, scopes())]
fn order_purge() -> &'static str {
    "purged"
}

fn main() {}
