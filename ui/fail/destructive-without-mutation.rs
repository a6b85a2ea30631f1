use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Deletes a thing.
#[command(destructive)]
fn thing_delete(input: Input) -> String {
    input.name
}

fn main() {}
