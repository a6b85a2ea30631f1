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
    /// Bytes of the `tools/list` result.
    pub bytes: usize,
    /// o200k tokens of the `tools/list` result.
    pub tokens: usize,
}

/// The exact `tools/list` result a client receives (all pages joined), as JSON.
pub fn tools_list_json(server: &McpServer) -> Value {
    json!({"tools": server.tools()})
}

/// Measures a server's listing.
pub fn listing_cost(server: &McpServer, counter: &TokenCounter) -> ListingCost {
    let listing = tools_list_json(server);
    let text = listing.to_string();
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
