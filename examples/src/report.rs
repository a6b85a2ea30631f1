//! Context cost: what a client loads from `tools/list`, in bytes and o200k tokens.

use afd_runtime::mcp::{McpServer, Strategy};
use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;

/// Counts o200k_base tokens (the tokenizer of current OpenAI models, the usual yardstick
/// for MCP context cost).
pub struct TokenCounter {
    bpe: CoreBPE,
}

impl TokenCounter {
    /// Loads the o200k_base vocabulary (bundled with tiktoken-rs; no network).
    ///
    /// # Panics
    ///
    /// If the bundled vocabulary cannot be read.
    pub fn o200k() -> Self {
        TokenCounter {
            bpe: tiktoken_rs::o200k_base().expect("tiktoken-rs bundles o200k_base"),
        }
    }

    /// Tokens of a text.
    pub fn count(&self, text: &str) -> usize {
        self.bpe.encode_with_special_tokens(text).len()
    }

    /// Tokens of a JSON value, serialised compactly as it goes over the wire.
    pub fn count_json(&self, value: &Value) -> usize {
        self.count(&value.to_string())
    }
}

/// The cost of one server's listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingCost {
    /// Tools listed.
    pub tools: usize,
    /// Bytes of the `tools/list` tools array.
    pub bytes: usize,
    /// o200k tokens of the `tools/list` tools array.
    pub tokens: usize,
}

/// The exact `tools/list` result a client receives (all pages joined), as JSON.
pub fn tools_list_json(server: &McpServer) -> Value {
    json!({"tools": server.tools()})
}

/// Measures a server's listing.
pub fn listing_cost(server: &McpServer, counter: &TokenCounter) -> ListingCost {
    // The tools array, as the reference measures it.
    let text = json!(server.tools()).to_string();
    ListingCost {
        tools: server.tools().len(),
        bytes: text.len(),
        tokens: counter.count(&text),
    }
}

/// Every strategy, in report order.
pub const STRATEGIES: [Strategy; 4] = [
    Strategy::Individual,
    Strategy::Grouped,
    Strategy::Lazy,
    Strategy::Hybrid,
];

fn noop(_: Value, _: afd_runtime::CommandContext) -> afd_runtime::HandlerFuture {
    Box::pin(async { afd_runtime::CommandResult::success(Value::Null) })
}

fn synthetic_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The record's id."}, "note": {"type": "string"}},
        "required": ["id"]
    })
}

/// A registry of `n` generated commands, 16 per category, leaked for `'static` (built
/// once per process, like the global registry). Names follow the reference bench's
/// `<category>-<verb>` shape.
pub fn synthetic_registry(n: usize) -> &'static afd_runtime::Registry {
    const VERBS: [&str; 8] = [
        "create", "get", "list", "update", "delete", "archive", "export", "sync",
    ];
    let defs: Vec<&'static afd_runtime::CommandDef> = (0..n)
        .map(|i| {
            let category = i / 16;
            let verb = VERBS[i % VERBS.len()];
            let name: &'static str =
                Box::leak(format!("area{category}-{verb}-{i}").into_boxed_str());
            let description: &'static str = Box::leak(
                format!(
                    "{verb} a record in area {category}. Generated command {i} for measurements."
                )
                .into_boxed_str(),
            );
            let location = afd_runtime::SourceLocation {
                file: "generated.rs",
                line: i as u32 + 1,
                column: 1,
                module_path: "generated",
            };
            let mut def =
                afd_runtime::CommandDef::new(name, description, noop, synthetic_schema, location)
                    .with_tags(&["generated"]);
            if matches!(verb, "create" | "update" | "delete" | "archive") {
                def = def.with_mutation();
            }
            let def: &'static afd_runtime::CommandDef = Box::leak(Box::new(def));
            def
        })
        .collect();
    Box::leak(Box::new(
        afd_runtime::Registry::builder()
            .register_all(defs)
            .build()
            .expect("unique generated names"),
    ))
}

/// The tokens of the seed's typical lazy interaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InteractionCost {
    /// The `tools/list` tools array.
    pub listing: usize,
    /// afd-discover `{search: "cancel"}`: its result.
    pub discover: usize,
    /// afd-detail of the first two results: its result.
    pub detail: usize,
    /// afd-call user-create: its result.
    pub call: usize,
    /// The three calls' arguments (what the agent writes).
    pub arguments: usize,
}

impl InteractionCost {
    /// Listing plus results, as the reference server's figure counts it.
    pub fn total(&self) -> usize {
        self.listing + self.discover + self.detail + self.call
    }
}

fn result_tokens(result: &rmcp::model::CallToolResult, counter: &TokenCounter) -> usize {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text())
        .map(|t| counter.count(&t.text))
        .sum()
}

/// Measures the seed's typical lazy interaction on `server`: the listing, afd-discover
/// `{search: "cancel"}`, afd-detail of its first two results, afd-call user-create.
pub async fn typical_interaction(server: &McpServer, counter: &TokenCounter) -> InteractionCost {
    let ctx = afd_runtime::CommandContext::new();
    let listing = counter.count_json(&json!(server.tools()));
    let discover_args = json!({"search": "cancel"});
    let discovered = server
        .call("afd-discover", discover_args.clone(), ctx.clone())
        .await;
    let names: Vec<Value> = discovered
        .structured_content
        .as_ref()
        .and_then(|v| v["data"]["commands"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .take(2)
        .map(|c| c["name"].clone())
        .collect();
    let detail_args = json!({"command": names});
    let detailed = server
        .call("afd-detail", detail_args.clone(), ctx.clone())
        .await;
    let call_args =
        json!({"command": "user-create", "input": {"name": "Alice", "email": "alice@example.com"}});
    let called = server.call("afd-call", call_args.clone(), ctx).await;
    InteractionCost {
        listing,
        discover: result_tokens(&discovered, counter),
        detail: result_tokens(&detailed, counter),
        call: result_tokens(&called, counter),
        arguments: [discover_args, detail_args, call_args]
            .iter()
            .map(|a| counter.count_json(a))
            .sum(),
    }
}
