//! Context cost of the listings (the numbers are reported by `--report`; here only the
//! invariants that must hold whatever the catalog).

use afd_examples::report::{TokenCounter, listing_cost};
use afd_examples::todo;
use afd_runtime::Registry;
use afd_runtime::mcp::{McpServer, Strategy};

fn server(strategy: Strategy, expose_all: bool) -> McpServer {
    McpServer::builder(Registry::global())
        .strategy(strategy)
        .dispatch(|d| {
            if expose_all {
                d
            } else {
                d.expose_only(todo::COMMANDS.iter().map(|c| c.name()))
            }
        })
        .build()
        .unwrap()
}

#[test]
fn the_lazy_listing_stays_within_600_tokens_and_does_not_grow() {
    let counter = TokenCounter::o200k();
    let small = listing_cost(&server(Strategy::Lazy, false), &counter);
    let all = listing_cost(&server(Strategy::Lazy, true), &counter);
    eprintln!("lazy listing: todo only {small:?}; whole binary {all:?}");
    assert_eq!(small.tools, 5);
    assert!(small.tokens <= 600, "{small:?}");
    assert!(all.tokens <= 600, "{all:?}");
    let individual = listing_cost(&server(Strategy::Individual, false), &counter);
    eprintln!("individual listing, todo: {individual:?}");
    assert!(individual.tokens > small.tokens);
}

#[test]
fn the_lazy_listing_is_flat_from_5_to_5000_commands() {
    let counter = TokenCounter::o200k();
    let mut costs = Vec::new();
    for n in [5, 80, 500, 5000] {
        let server = McpServer::builder(afd_examples::report::synthetic_registry(n))
            .strategy(Strategy::Lazy)
            .build()
            .unwrap();
        let cost = listing_cost(&server, &counter);
        eprintln!("lazy listing at {n} commands: {cost:?}");
        assert_eq!(cost.tools, 5);
        assert!(cost.tokens <= 600, "{n} commands: {cost:?}");
        costs.push(cost.tokens);
    }
    // From three categories on, only the numbers in afd-discover's description change.
    let spread = costs[1..].iter().max().unwrap() - costs[1..].iter().min().unwrap();
    assert!(spread <= 3, "{costs:?}");
}

#[tokio::test]
async fn the_seeds_typical_lazy_interaction_stays_within_1200_tokens() {
    use afd_examples::shop::{self, ShopStore};
    let counter = TokenCounter::o200k();
    let server = McpServer::builder(Registry::global())
        .strategy(Strategy::Lazy)
        .context(shop::context(ShopStore::in_memory().unwrap()))
        .dispatch(|d| d.expose_only(shop::COMMAND_NAMES))
        .build()
        .unwrap();
    let cost = afd_examples::report::typical_interaction(&server, &counter).await;
    eprintln!("{cost:?} = {}", cost.total());
    assert!(
        cost.discover > 0 && cost.detail > cost.discover && cost.call > 0,
        "{cost:?}"
    );
    assert!(cost.total() <= 1200, "{cost:?}");
    assert!(
        cost.total() + cost.arguments <= 1200,
        "even counting the arguments: {cost:?}"
    );
}
