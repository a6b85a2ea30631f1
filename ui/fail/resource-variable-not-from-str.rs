use afd_runtime::prelude::*;

struct Id(u32);

/// An order.
#[resource(uri_template = "demo://orders/{number}")]
fn order(number: Id) -> String {
    number.0.to_string()
}

fn main() {}
