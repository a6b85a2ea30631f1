use afd_runtime::prelude::*;

/// Summarise a topic.
#[prompt(name = "sum up")]
fn summarise() -> String {
    "Summarise.".to_owned()
}

fn main() {}
