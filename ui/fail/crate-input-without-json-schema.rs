//! Under `crate = "..."`, a type error is reported as without it: on the user's type.

use afd_runtime::prelude::*;

#[derive(Deserialize)]
struct Input {
    name: String,
}

/// Does a thing.
#[command(crate = "afd_runtime")]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
