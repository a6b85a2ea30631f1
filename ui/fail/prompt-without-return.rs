use afd_runtime::prelude::*;

/// Summarise a topic.
#[prompt]
fn summarise() {}

fn main() {}
