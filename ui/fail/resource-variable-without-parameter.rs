use afd_runtime::prelude::*;

/// A line of an order.
#[resource(uri_template = "demo://orders/{number}/lines/{line}")]
fn order_line(number: u32) -> String {
    number.to_string()
}

fn main() {}
