use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

/// Does a thing.
#[command(errors("notFound"))]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
