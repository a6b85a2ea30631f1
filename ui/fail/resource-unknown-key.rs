use afd_runtime::prelude::*;

/// A count.
#[resource(uri = "demo://count", mime = "text/plain")]
fn count() -> String {
    "1".to_owned()
}

fn main() {}
