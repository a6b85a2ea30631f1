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

use afd_bench::names::{CATEGORIES, VERBS, letters};
use afd_bench::{Stats, human, sample, thousands};
use afd_runtime::{
    CommandContext, CommandDef, CommandResult, Dispatcher, HandlerFuture, Registry, SourceLocation,
    Surface,
};
use clap::Parser;
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

fn handler(_input: Value, _ctx: CommandContext) -> HandlerFuture {
    Box::pin(std::future::ready(CommandResult::success(json!([]))))
}

/// The input schema the generator's `{id?, query?, limit}` struct derives.
fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": ["string", "null"], "default": null},
            "query": {"type": ["string", "null"], "default": null},
            "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 100, "default": 20}
        }
    })
}

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// `n` definitions named and described as the generator's.
fn definitions(n: usize) -> Vec<&'static CommandDef> {
    (0..n)
        .map(|i| {
            let category = CATEGORIES[i % CATEGORIES.len()];
            let verb = VERBS[(i / CATEGORIES.len()) % VERBS.len()];
            let suffix = letters(i);
            let mutation = matches!(verb, "update" | "archive" | "tag");
            let mut capital = verb.to_owned();
            capital[..1].make_ascii_uppercase();
            let tags: &'static [&'static str] = Box::leak(
                vec![if mutation { "write" } else { "read" }, category].into_boxed_slice(),
            );
            let mut def = CommandDef::new(
                leak(format!("{category}-{verb}-{suffix}")),
                leak(format!(
                    "{capital} {category} records (variant {suffix}). Returns the matching {category} entries."
                )),
                handler,
                schema,
                SourceLocation {
                    file: file!(),
                    line: line!(),
                    column: 1,
                    module_path: module_path!(),
                },
            )
            .with_category(category)
            .with_tags(tags);
            if mutation {
                def = def.with_mutation();
            }
            &*Box::leak(Box::new(def))
        })
        .collect()
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
                let result = d.discover(input.clone());
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
                let result = d.detail(input.clone());
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
