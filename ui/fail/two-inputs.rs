use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Does a thing.
#[command]
fn thing(input: Input, other: Input) -> String {
    input.name + &other.name
}

fn main() {}
