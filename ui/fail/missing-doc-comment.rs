use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[command]
fn thing(input: Input) -> String {
    input.name
}

fn main() {}
