//! The listing's cost on the generated catalog of 80 commands (the one the reference
//! TypeScript server's benchmark generates), counted as the official Python MCP client
//! re-serialises it (`python_style_cost`), as the reference's figures are. The reference's
//! own figures (its `bench/shop.mjs`, measured with that client: `context` measures them
//! again when node and the reference are present) are the bounds.

use afd_examples::report::{TokenCounter, python_style_cost, typical_interaction};
use afd_runtime::mcp::Strategy;

/// The reference's individual listing at 80 commands, as the Python client receives it.
const REFERENCE_INDIVIDUAL_80: usize = 8_628;

#[test]
fn the_individual_listing_without_output_schemas_costs_no_more_than_the_reference() {
    let counter = TokenCounter::o200k();
    let off = afd_bench::server_with(80, Strategy::Individual, |b| b.output_schemas(false));
    let on = afd_bench::server(80, Strategy::Individual);
    let (off, on) = (
        python_style_cost(&off, &counter),
        python_style_cost(&on, &counter),
    );
    eprintln!("individual at 80: output schemas off {off:?}, on {on:?}");
    assert!(off.tokens <= REFERENCE_INDIVIDUAL_80, "{off:?}");
    assert!(on.tokens > off.tokens, "{on:?}");
    // Every command's tool states its data's shape once: the whole envelope and its
    // descriptions are not repeated per tool.
    assert!(on.tokens <= 2 * REFERENCE_INDIVIDUAL_80, "{on:?}");
}

#[tokio::test]
async fn the_lazy_listing_and_the_typical_interaction_stay_within_their_budgets() {
    let counter = TokenCounter::o200k();
    let lazy = afd_bench::server(80, Strategy::Lazy);
    let listing = python_style_cost(&lazy, &counter);
    assert!(listing.tokens <= 625, "{listing:?}");
    let interaction = typical_interaction(&lazy, &counter).await;
    eprintln!(
        "lazy at 80: {listing:?}; {interaction:?} = {}",
        interaction.total()
    );
    assert!(interaction.total() <= 1_200, "{interaction:?}");
}
