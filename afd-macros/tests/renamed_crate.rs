//! `crate = "..."` for users who rename the runtime dependency. This crate knows the
//! runtime only as `renamed_afd` (`renamed_afd = { package = "afd-runtime", ... }`): no
//! `afd_runtime` is in scope, so a single generated path still spelt `::afd_runtime` would
//! not compile. The commands and the context register as usual, and the commands run
//! through the registry.

use renamed_afd::serde::{Deserialize, Serialize};
use renamed_afd::serde_json::json;
use renamed_afd::{CommandContext, CommandError, Dispatcher, ExecutionTime, Registry};

renamed_afd::context! {
    /// Greeting people by name.
    name = "greeting",
    priority = 5,
    triggers("greet", "hello"),
    crate = "renamed_afd",
}

#[derive(Deserialize, renamed_afd::schemars::JsonSchema)]
#[serde(crate = "renamed_afd::serde")]
#[schemars(crate = "renamed_afd::schemars")]
struct Greet {
    /// Who to greet.
    name: String,
}

#[derive(Serialize, renamed_afd::schemars::JsonSchema)]
#[serde(crate = "renamed_afd::serde")]
#[schemars(crate = "renamed_afd::schemars")]
struct Greeted {
    text: String,
}

/// Greet someone by name.
#[renamed_afd::command(
    crate = "renamed_afd",
    contexts("greeting"),
    execution_time = "instant"
)]
async fn greet_renamed(input: Greet, ctx: &CommandContext) -> Result<Greeted, CommandError> {
    let _ = ctx;
    Ok(Greeted {
        text: format!("Hello, {}", input.name),
    })
}

/// The runtime re-exported from a module of this crate, for a path of several segments.
mod runtime {
    pub use renamed_afd::*;
}

/// Count to three.
#[renamed_afd::command(crate = "crate::runtime")]
fn count_renamed() -> Vec<u8> {
    vec![1, 2, 3]
}

#[tokio::test]
async fn commands_and_contexts_work_through_a_renamed_runtime() {
    let registry = Registry::global();
    let greet = registry.get("greet-renamed").expect("registered").def();
    assert_eq!(greet.description(), "Greet someone by name.");
    assert_eq!(greet.contexts(), ["greeting"]);
    assert_eq!(greet.execution_time(), Some(ExecutionTime::Instant));
    assert!(registry.get("count-renamed").is_some());
    let greeting = registry.contexts().get("greeting").expect("registered");
    assert_eq!(greeting.description(), "Greeting people by name.");
    assert_eq!(greeting.priority(), 5);

    let dispatcher = Dispatcher::builder(registry).build().unwrap();
    let greeted = dispatcher
        .call(
            "greet-renamed",
            json!({"name": "Ada"}),
            CommandContext::new(),
        )
        .await;
    assert!(greeted.success, "{greeted:?}");
    assert_eq!(greeted.data, Some(json!({"text": "Hello, Ada"})));
    let counted = dispatcher
        .call("count-renamed", json!({}), CommandContext::new())
        .await;
    assert_eq!(counted.data, Some(json!([1, 2, 3])));
    let invalid = dispatcher
        .call("greet-renamed", json!({}), CommandContext::new())
        .await;
    assert_eq!(
        invalid.error.unwrap().code,
        renamed_afd::codes::VALIDATION_ERROR
    );
}

#[test]
fn explicit_registration_works_through_a_renamed_runtime() {
    let registry = Registry::builder()
        .with_inventory_contexts()
        .register(greet_renamed::COMMAND)
        .register(count_renamed::COMMAND)
        .build()
        .unwrap();
    assert!(registry.get("greet-renamed").is_some());
    assert!(registry.get("count-renamed").is_some());
    assert!(registry.contexts().get("greeting").is_some());
}
