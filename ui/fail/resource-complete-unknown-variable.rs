use afd_runtime::prelude::*;

/// An order.
#[resource(uri_template = "demo://orders/{number}", complete(id = numbers))]
fn order(number: u32) -> String {
    number.to_string()
}

fn numbers(_typed: &str) -> Vec<String> {
    Vec::new()
}

fn main() {}
