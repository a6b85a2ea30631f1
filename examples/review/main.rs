//! A background review agent over the shop: it enters read-only contexts, reads reports
//! and stock, and is refused when it tries to change anything.
//!
//! ```sh
//! cargo run --example review
//! ```

use afd_examples::review;
use afd_examples::shop::{self, ShopStore};
use afd_runtime::{Dispatcher, Registry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let dispatcher = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .build()?;
    let ctx = shop::context(ShopStore::in_memory()?);
    let run = review::run(&dispatcher, &ctx).await;
    println!("review session {}", run.session);
    for step in &run.steps {
        println!("> {} {}", step.command, step.input);
        let detail = match &step.result.error {
            Some(error) => format!(
                "{}: {} ({})",
                error.code,
                error.message,
                error.suggestion.as_deref().unwrap_or_default()
            ),
            None => step.result.reasoning.clone().unwrap_or_default(),
        };
        println!("< {} {detail}", step.outcome());
    }
    let refused = run
        .steps
        .iter()
        .filter(|step| step.outcome() == "FORBIDDEN")
        .count();
    println!(
        "{} calls, {refused} refused by the read-only scope",
        run.steps.len()
    );
    Ok(())
}
