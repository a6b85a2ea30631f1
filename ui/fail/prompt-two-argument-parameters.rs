use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;

/// Summarise a topic.
#[prompt]
fn summarise(topic: String, length: String) -> Vec<PromptMessage> {
    vec![PromptMessage::user(format!("{topic} {length}"))]
}

fn main() {}
