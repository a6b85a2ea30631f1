use afd_runtime::prelude::*;

/// A greeting.
#[resource(uri = "greeting")]
fn greeting() -> String {
    "hello".to_owned()
}

fn main() {}
