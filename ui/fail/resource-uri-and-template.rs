use afd_runtime::prelude::*;

/// A greeting.
#[resource(uri = "demo://greeting", uri_template = "demo://greeting/{name}")]
fn greeting(name: String) -> String {
    name
}

fn main() {}
