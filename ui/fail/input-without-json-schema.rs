use afd_runtime::prelude::*;

#[derive(Deserialize)]
struct Input {
    name: String,
}

/// Does a thing.
#[command]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
