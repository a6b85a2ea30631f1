use afd_runtime::prelude::*;

/// Summarise a topic.
#[prompt]
struct Summarise;

fn main() {}
