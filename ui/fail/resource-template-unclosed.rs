use afd_runtime::prelude::*;

/// A user.
#[resource(uri_template = "demo://users/{id")]
fn user(id: String) -> String {
    id
}

fn main() {}
