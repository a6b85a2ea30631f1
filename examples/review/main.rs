//! A background review agent over the shop: it enters read-only contexts, reads reports
//! and stock, and is refused when it tries to change anything. The same rules apply by
//! hand on the command line.
//!
//! ```sh
//! cargo run --example review                               # the review agent's run
//! cargo run --example review -- contexts                   # the contexts it moves through
//! cargo run --example review -- --context catalog --read-only call product-list --limit 3
//! ```

use afd_examples::review;
use afd_examples::serve;
use afd_examples::shop::{self, ShopStore};
use afd_runtime::cli::{EXIT_FAILURE, EXIT_SUCCESS};
use afd_runtime::{Dispatcher, Registry};

#[tokio::main]
async fn main() {
    std::process::exit(run().await);
}

async fn run() -> i32 {
    let parsed = serve::cli("review", Registry::global(), shop::COMMAND_NAMES.to_vec())
        .about("A background review agent over the shop (with no subcommand: its run)")
        .serve_by_default(false)
        .parse();
    let store = match ShopStore::in_memory() {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error: cannot open the database: {error}");
            return EXIT_FAILURE;
        }
    };
    let ctx = shop::context(store);
    if parsed.matches().subcommand().is_some() {
        return parsed.run(ctx).await;
    }
    match agent(&ctx).await {
        Ok(()) => EXIT_SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            EXIT_FAILURE
        }
    }
}

/// The review agent's run, step by step.
async fn agent(ctx: &afd_runtime::CommandContext) -> Result<(), Box<dyn std::error::Error>> {
    let dispatcher = Dispatcher::builder(Registry::global())
        .expose_only(shop::COMMAND_NAMES)
        .build()?;
    let run = review::run(&dispatcher, ctx).await?;
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
