use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

struct Output {
    name: String,
}

/// Does a thing.
#[command]
async fn thing(input: Input) -> Result<Output, CommandError> {
    Ok(Output { name: input.name })
}

fn main() {}
