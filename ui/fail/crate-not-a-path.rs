use afd_runtime::prelude::*;

/// Does a thing.
#[command(crate = "my-afd")]
fn thing() -> u8 {
    1
}

fn main() {}
