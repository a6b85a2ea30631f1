use afd_runtime::prelude::*;

/// Does a thing.
#[command]
fn thing(input: impl serde::de::DeserializeOwned) -> u8 {
    let _ = input;
    1
}

fn main() {}
