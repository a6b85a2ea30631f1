//! Context cost of the listings (the numbers are reported by `--report`; here only the
//! invariants that must hold whatever the catalog).

use afd_examples::report::{TokenCounter, listing_cost};
use afd_examples::todo;
use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::{
    CommandContext, CommandDef, CommandResult, HandlerFuture, Registry, SourceLocation,
};
use serde_json::{Value, json};

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

fn noop(_: Value, _: CommandContext) -> HandlerFuture {
    Box::pin(async { CommandResult::success(Value::Null) })
}

fn object_schema() -> Value {
    json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]})
}

/// A registry of `n` synthetic commands in `n / 16` categories, leaked for `'static`.
fn synthetic(n: usize) -> &'static Registry {
    let defs: Vec<&'static CommandDef> = (0..n)
        .map(|i| {
            let name: &'static str =
                Box::leak(format!("area{}-action{i}", i / 16).into_boxed_str());
            let description: &'static str = Box::leak(
                format!("Do action {i} in area {}. It changes nothing.", i / 16).into_boxed_str(),
            );
            let location = SourceLocation {
                file: "synthetic.rs",
                line: i as u32 + 1,
                column: 1,
                module_path: "synthetic",
            };
            let def: &'static CommandDef = Box::leak(Box::new(
                CommandDef::new(name, description, noop, object_schema, location)
                    .with_tags(&["generated"]),
            ));
            def
        })
        .collect();
    Box::leak(Box::new(
        Registry::builder().register_all(defs).build().unwrap(),
    ))
}

#[test]
fn the_lazy_listing_is_flat_from_5_to_5000_commands() {
    let counter = TokenCounter::o200k();
    let mut costs = Vec::new();
    for n in [5, 80, 500, 5000] {
        let server = McpServer::builder(synthetic(n))
            .strategy(Strategy::Lazy)
            .build()
            .unwrap();
        let cost = listing_cost(&server, &counter);
        eprintln!("lazy listing at {n} commands: {cost:?}");
        assert_eq!(cost.tools, 5);
        assert!(cost.tokens <= 600, "{n} commands: {cost:?}");
        costs.push(cost.tokens);
    }
    // From four categories on, only the numbers in afd-discover's description change.
    let spread = costs[1..].iter().max().unwrap() - costs[1..].iter().min().unwrap();
    assert!(spread <= 3, "{costs:?}");
}
