//! In-process latency at catalog sizes whose generated `#[command]` crate is too costly to
//! compile here (10,000: see BENCHMARKS.md, "Compile cost"): the same names, descriptions,
//! categories, tags and input schema as `bench/build.rs` writes, but as definitions built
//! at run time ([`CommandDef::new`] with one shared handler and schema function) instead of
//! macro output. Everything measured here (registry and dispatcher build, search index
//! build, afd-discover, afd-detail, ranked search) is the runtime's own code, which does not
//! depend on how the definitions were made; the handler's own cost is measured by
//! `inprocess` on the generated catalogs.
//!
//! `cargo run -p afd-bench --release --bin synthetic -- --commands 2000,10000`

use afd_bench::synthetic::definitions;
use afd_bench::{Stats, human, sample, thousands};
use afd_runtime::{Dispatcher, MetaTools, Registry, Surface};
use clap::Parser;
use futures_util::FutureExt;
use serde_json::{Value, json};

/// In-process latency over run-time-built catalogs.
#[derive(Debug, Parser)]
struct Args {
    /// Catalog sizes.
    #[arg(long, value_delimiter = ',', default_values_t = [2_000, 10_000])]
    commands: Vec<usize>,
    /// Time budget per operation and size, in seconds.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
}

fn main() {
    let args = Args::parse();
    println!("| operation | commands | median | p99 | samples |");
    println!("|---|---|---|---|---|");
    for &n in &args.commands {
        let defs = definitions(n);
        let mut rows: Vec<(&str, Stats)> = Vec::new();
        rows.push((
            "build/registry",
            sample(args.seconds, 100_000, || {
                Registry::builder()
                    .register_all(defs.iter().copied())
                    .build()
                    .expect("unique names")
            }),
        ));
        let registry: &'static Registry = Box::leak(Box::new(
            Registry::builder()
                .register_all(defs.iter().copied())
                .build()
                .expect("unique names"),
        ));
        let dispatcher = || {
            Dispatcher::builder(registry)
                .surface(Surface::Mcp)
                .build()
                .expect("a dispatcher")
        };
        rows.push((
            "build/dispatcher",
            sample(args.seconds, 100_000, dispatcher),
        ));
        rows.push((
            "build/search-index",
            sample(args.seconds * 2.0, 100_000, || {
                let d = dispatcher();
                d.search_index();
                d
            }),
        ));
        let d = dispatcher();
        d.warm();
        let names: Vec<&str> = registry
            .commands()
            .iter()
            .take(10)
            .map(|c| c.name())
            .collect();
        let discover = |input: Value| {
            let d = d.clone();
            move || {
                // Without a session nothing waits on a store: the answer is ready at once.
                let result = d
                    .discover(input.clone())
                    .now_or_never()
                    .expect("in-memory answer");
                assert!(result.success);
                result
            }
        };
        rows.push((
            "discover/unfiltered",
            sample(args.seconds, 100_000, discover(json!({}))),
        ));
        rows.push((
            "discover/category",
            sample(
                args.seconds,
                100_000,
                discover(json!({"category": "order"})),
            ),
        ));
        rows.push((
            "discover/tag",
            sample(args.seconds, 100_000, discover(json!({"tag": "write"}))),
        ));
        rows.push((
            "discover/search",
            sample(
                args.seconds,
                100_000,
                discover(json!({"search": "cancel order"})),
            ),
        ));
        rows.push((
            "discover/search-typo",
            sample(
                args.seconds,
                100_000,
                discover(json!({"search": "archvie shiping recrods"})),
            ),
        ));
        let detail = |input: Value| {
            let d = d.clone();
            move || {
                let result = d
                    .detail(input.clone())
                    .now_or_never()
                    .expect("in-memory answer");
                assert!(result.success);
                result
            }
        };
        rows.push((
            "detail/1",
            sample(args.seconds, 100_000, detail(json!({"command": names[0]}))),
        ));
        rows.push((
            "detail/10",
            sample(args.seconds, 100_000, detail(json!({"command": names}))),
        ));
        for (op, stats) in rows {
            println!(
                "| {op} | {} | {} | {} | {} |",
                thousands(n),
                human(stats.median),
                human(stats.p99),
                stats.count
            );
        }
    }
}
