use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;

#[derive(Deserialize)]
struct Args {
    topic: String,
}

/// Summarise a topic.
#[prompt]
fn summarise(args: Args) -> Vec<PromptMessage> {
    vec![PromptMessage::user(args.topic)]
}

fn main() {}
