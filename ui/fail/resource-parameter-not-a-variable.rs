use afd_runtime::prelude::*;

/// An order.
#[resource(uri_template = "demo://orders/{number}")]
fn order(number: u32, line: String) -> String {
    format!("{number} {line}")
}

fn main() {}
