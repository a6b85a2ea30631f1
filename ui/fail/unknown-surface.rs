use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Does a thing.
#[command(expose(web = true))]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
