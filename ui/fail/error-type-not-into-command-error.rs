use afd_runtime::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Input {
    name: String,
}

#[derive(Debug)]
struct AppError;

/// Does a thing.
#[command]
fn thing(input: Input) -> Result<String, AppError> {
    Ok(input.name)
}

fn main() {}
