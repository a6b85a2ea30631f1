use afd_runtime::prelude::*;

/// Does a thing.
#[command(crate = afd_runtime)]
fn thing() -> u8 {
    1
}

fn main() {}
