use afd_runtime::prelude::*;
use afd_runtime::prompt::PromptMessage;

#[derive(Deserialize, JsonSchema)]
struct Args {
    topic: String,
}

/// Summarise a topic.
#[prompt(complete(topic = topics))]
fn summarise(args: Args) -> Vec<PromptMessage> {
    vec![PromptMessage::user(args.topic)]
}

fn topics() -> Vec<&'static str> {
    vec!["rust"]
}

fn main() {}
