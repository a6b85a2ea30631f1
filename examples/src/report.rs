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

/// Measures a server's listing as a model is sent it: each tool as `{name, description,
/// input_schema}` (the client keeps the rest: titles, annotations, output schemas, `_meta`),
/// serialised compactly. The figure the context budgets hold to.
pub fn model_cost(server: &McpServer, counter: &TokenCounter) -> ListingCost {
    let tools: Vec<Value> = server
        .tools()
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema,
            })
        })
        .collect();
    let text = Value::Array(tools).to_string();
    ListingCost {
        tools: server.tools().len(),
        bytes: text.len(),
        tokens: counter.count(&text),
    }
}

/// The tools array of a server's `tools/list` as the official Python MCP client
/// re-serialises it: each tool's fields in that client's order (name, title, description,
/// inputSchema, execution, outputSchema, icons, annotations, _meta), written as Python's
/// `json.dumps` does by default (`", "` and `": "` separators, non-ASCII escaped). This is
/// how the reference server's figures are counted; [`client_listing`] gets the same text
/// from the client itself.
pub fn python_style_listing(server: &McpServer) -> String {
    const ORDER: [&str; 9] = [
        "name",
        "title",
        "description",
        "inputSchema",
        "execution",
        "outputSchema",
        "icons",
        "annotations",
        "_meta",
    ];
    let tools: Vec<Value> = server
        .tools()
        .iter()
        .map(|tool| {
            let Value::Object(mut fields) = json!(tool) else {
                return json!(tool);
            };
            let mut ordered = serde_json::Map::with_capacity(fields.len());
            for key in ORDER {
                if let Some(value) = fields.remove(key) {
                    ordered.insert(key.to_owned(), value);
                }
            }
            ordered.extend(fields);
            Value::Object(ordered)
        })
        .collect();
    python_json(&Value::Array(tools))
}

/// A JSON value as Python's `json.dumps` writes it with its default arguments.
pub fn python_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    serde::Serialize::serialize(value, &mut serializer).expect("a Value always serialises");
    String::from_utf8(out).expect("escaped JSON is ASCII")
}

/// `json.dumps`'s defaults: `", "` between items, `": "` after keys, `ensure_ascii`.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }

    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        for c in fragment.chars() {
            if c.is_ascii() {
                writer.write_all(&[c as u8])?;
            } else {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    write!(writer, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// Measures a server's listing as the official Python client receives it
/// ([`python_style_listing`]), without running Python.
pub fn python_style_cost(server: &McpServer, counter: &TokenCounter) -> ListingCost {
    let text = python_style_listing(server);
    ListingCost {
        tools: server.tools().len(),
        bytes: text.len(),
        tokens: counter.count(&text),
    }
}

/// The script that prints a server's tools as the official Python MCP client receives
/// them (`bench/listing.py`).
pub const LISTING_SCRIPT: &str = include_str!("../../bench/listing.py");

/// The tools array of the stdio server `program args` as the official Python MCP client
/// receives it, printed by [`LISTING_SCRIPT`] run with `python` (which needs the `mcp`
/// package), with the server's environment plus `env`.
///
/// # Errors
///
/// Python or the server could not be started, or the script failed (its stderr).
pub fn client_listing(
    python: &std::path::Path,
    program: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Result<String, String> {
    let output = std::process::Command::new(python)
        .arg("-c")
        .arg(LISTING_SCRIPT)
        .arg(program)
        .args(args)
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| format!("{}: {error}", python.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    match stdout.lines().next() {
        Some(line) if output.status.success() => Ok(line.to_owned()),
        _ => Err(String::from_utf8_lossy(&output.stderr).trim().to_owned()),
    }
}

/// Counts a listing's text.
pub fn text_cost(text: &str, counter: &TokenCounter) -> ListingCost {
    let tools = serde_json::from_str::<Vec<Value>>(text).map_or(0, |tools| tools.len());
    ListingCost {
        tools,
        bytes: text.len(),
        tokens: counter.count(text),
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
