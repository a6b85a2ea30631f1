//! Catalogs built at run time for sizes whose generated `#[command]` crate is too costly to
//! compile in the suite (10,000: BENCHMARKS.md, "Compile cost"): the names, descriptions,
//! categories, tags, mutation flags and input schema `bench/build.rs` writes, as
//! [`CommandDef`]s made at run time with one shared handler (answers `[]`, as the generated
//! ones answer an empty echo) instead of macro output.

use afd_runtime::mcp::{McpServer, Strategy};
use afd_runtime::{
    CommandContext, CommandDef, CommandResult, HandlerFuture, Registry, SourceLocation,
};
use serde_json::{Value, json};

use crate::names::{CATEGORIES, VERBS, letters};

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
pub fn definitions(n: usize) -> Vec<&'static CommandDef> {
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

/// An MCP server over the run-time catalog of `n` with `strategy`.
///
/// # Panics
///
/// If it does not build.
pub fn server(n: usize, strategy: Strategy) -> McpServer {
    // The end-to-end benches call the seed's `order-list`: it takes one generated name's
    // place, so the catalog still has `n` commands.
    let trivial: &'static CommandDef = Box::leak(Box::new(
        CommandDef::new(
            crate::workload::TRIVIAL,
            "List orders, newest first.",
            handler,
            schema,
            SourceLocation::RUNTIME,
        )
        .with_category("order")
        .with_tags(&["crud", "read"]),
    ));
    let mut defs = definitions(n.saturating_sub(1));
    defs.push(trivial);
    let registry = Registry::builder()
        .register_all(defs)
        .build()
        .expect("unique names");
    McpServer::builder(Box::leak(Box::new(registry)))
        .name("afd-bench")
        .version(env!("CARGO_PKG_VERSION"))
        .strategy(strategy)
        .build()
        .expect("a server")
}
