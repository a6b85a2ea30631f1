use afd_runtime::prelude::*;

/// Does a thing.
#[command]
fn thing<T: serde::de::DeserializeOwned + JsonSchema>(input: T) -> u8 {
    let _ = input;
    1
}

fn main() {}
