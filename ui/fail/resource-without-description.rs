use afd_runtime::prelude::*;

#[resource(uri = "demo://count")]
fn count() -> String {
    "1".to_owned()
}

fn main() {}
