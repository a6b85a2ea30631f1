use afd_runtime::prelude::*;

/// A greeting.
#[resource(name = "greeting")]
fn greeting() -> String {
    "hello".to_owned()
}

fn main() {}
