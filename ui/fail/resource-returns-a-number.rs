use afd_runtime::prelude::*;

/// A count.
#[resource(uri = "demo://count")]
fn count() -> u64 {
    1
}

fn main() {}
