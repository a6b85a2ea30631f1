//! The tools themselves: the meta-tools (afd-discover, afd-detail, afd-call, afd-batch,
//! afd-pipe), the bootstrap tools, a command's and a category's tool, with their schemas
//! and annotations, and the [`Route`] each takes when called.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::dispatch::Dispatcher;
use crate::registry::CommandEntry;
use crate::registry::is_op;
use crate::text::summary;
use crate::tools::detail::detail_schema;
use crate::tools::discover::discover_schema;

/// The meta-tools' names.
pub const DISCOVER: &str = "afd-discover";
/// See [`DISCOVER`].
pub const DETAIL: &str = "afd-detail";
/// See [`DISCOVER`].
pub const CALL: &str = "afd-call";
/// See [`DISCOVER`].
pub const BATCH: &str = "afd-batch";
/// See [`DISCOVER`].
pub const PIPE: &str = "afd-pipe";
/// The opt-in bootstrap tools' names.
pub const HELP: &str = "afd-help";
/// See [`HELP`].
pub const DOCS: &str = "afd-docs";
/// See [`HELP`].
pub const SCHEMA: &str = "afd-schema";

/// How many categories afd-discover's description names before "and N more".
const DESCRIBED_CATEGORIES: usize = 3;

/// What a listed tool does when called.
#[derive(Debug, Clone)]
pub(crate) enum Route {
    Discover,
    Detail,
    Call,
    Batch,
    Pipe,
    /// A command's own tool.
    Command(&'static str),
    /// A category's tool (`grouped`): the `action` argument names the command.
    Group(&'static str),
    Help,
    Docs,
    Schema,
}

/// The bootstrap tools afd-help, afd-docs and afd-schema, read-only.
pub(crate) fn bootstrap_tools() -> Vec<(Tool, Route)> {
    use crate::tools::help::{docs_schema, help_schema, schema_schema};
    vec![
        (
            Tool::new(HELP, "Overview of every command, grouped by category (format: text or json).", object(lean(help_schema())))
                .with_annotations(read_only()),
            Route::Help,
        ),
        (
            Tool::new(DOCS, "Markdown documentation of a command, a category, or everything, with parameter tables.", object(lean(docs_schema())))
                .with_annotations(read_only()),
            Route::Docs,
        ),
        (
            Tool::new(SCHEMA, "Input and output schemas of commands (default all), as JSON Schema or TypeScript (format).", object(lean(schema_schema())))
                .with_annotations(read_only()),
            Route::Schema,
        ),
    ]
}

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn always_load() -> MetaObject {
    let mut meta = MetaObject::default();
    meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
    meta
}

/// Introspection: read-only (MCP ignores the other hints then).
fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true)
}

/// A generic dispatcher may run anything: clients must not wave it through on hints. Only
/// what differs from MCP's defaults (readOnly false, idempotent false) is stated, but
/// destructiveHint is stated although it defaults to true, so no client has to guess.
fn dispatcher_hints() -> ToolAnnotations {
    ToolAnnotations::new().destructive(true)
}

/// Whether a schema keyword is worth its tokens in a listing.
fn advertised(key: &str, value: &Value) -> bool {
    match key {
        "additionalProperties" | "minLength" | "minItems" => false,
        "minimum" => !matches!(value.as_u64(), Some(0 | 1)),
        _ => true,
    }
}

/// The schema as advertised: without `additionalProperties` and trivial lower bounds
/// (`minLength`, `minItems`, `minimum` 0 or 1) that only cost tokens (the validator still enforces the strict schema).
fn lean(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, value)| advertised(key, value))
                .map(|(key, value)| (key.clone(), lean(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(lean).collect()),
        other => other.clone(),
    }
}

fn call_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"command": {"type": "string"}, "input": {"type": "object"}, "session": {"type": "string"}},
        "required": ["command"]
    })
}

fn batch_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "commands": {"type": "array", "items": {
                "type": "object",
                "properties": {"command": {"type": "string"}, "input": {"type": "object"}, "id": {"type": "string"}},
                "required": ["command"]
            }},
            "options": {"type": "object"},
            "session": {"type": "string"}
        },
        "required": ["commands"]
    })
}

fn pipe_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "command": {"type": "string"},
                    "input": {"type": "object"},
                    "as": {"type": "string"},
                    "when": {"type": "object"}
                },
                "required": ["command"]
            }},
            "input": {"type": "object"},
            "options": {"type": "object"},
            "session": {"type": "string"}
        },
        "required": ["steps"]
    })
}

/// afd-discover's description: what the catalog holds, capped so the listing never grows
/// with it.
pub(crate) fn discover_description(dispatcher: &Dispatcher) -> String {
    let mut categories: Vec<(&str, usize)> = dispatcher.available_categories().to_vec();
    categories.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let named: Vec<String> = categories
        .iter()
        .take(DESCRIBED_CATEGORIES)
        .map(|(name, count)| format!("{name} ({count})"))
        .collect();
    let more = categories.len().saturating_sub(DESCRIBED_CATEGORIES);
    let more = if more > 0 {
        format!(", {more} more")
    } else {
        String::new()
    };
    format!(
        "Search the {} commands ({}{more}) by words, category or tag; afd-detail gives schemas.",
        dispatcher.exposed_count(),
        named.join(", ")
    )
}

/// afd-discover and afd-detail (`with_introspection`), then afd-call, afd-batch, afd-pipe.
pub(super) fn meta_tools(dispatcher: &Dispatcher, with_introspection: bool) -> Vec<(Tool, Route)> {
    let mut tools = Vec::with_capacity(5);
    if with_introspection {
        tools.push((
            Tool::new(
                DISCOVER,
                discover_description(dispatcher),
                object(lean(discover_schema())),
            )
            .with_annotations(read_only())
            .with_meta(always_load()),
            Route::Discover,
        ));
        tools.push((
            Tool::new(
                DETAIL,
                "Input schemas and full descriptions of up to 10 commands.",
                object(lean(detail_schema())),
            )
            .with_annotations(read_only())
            .with_meta(always_load()),
            Route::Detail,
        ));
    }
    tools.push((
        Tool::new(
            CALL,
            "Run a command by name with its input.",
            object(call_schema()),
        )
        .with_annotations(dispatcher_hints())
        .with_meta(always_load()),
        Route::Call,
    ));
    tools.push((
        Tool::new(
            BATCH,
            "Run several commands at once; each succeeds or fails alone. options: stopOnError, timeoutMs, parallelism.",
            object(batch_schema()),
        )
        .with_annotations(dispatcher_hints()),
        Route::Batch,
    ));
    tools.push((
        Tool::new(
            PIPE,
            "Chain commands; an input may reference $prev.id, $steps.<as>.<field>, $input; when skips a step. options: continueOnFailure, timeoutMs.",
            object(pipe_schema()),
        )
        .with_annotations(dispatcher_hints()),
        Route::Pipe,
    ));
    tools
}

/// A command's annotations: readOnlyHint = !mutation, destructiveHint, idempotentHint, a
/// title.
fn command_annotations(entry: &CommandEntry) -> ToolAnnotations {
    let def = entry.def();
    let mut annotations = ToolAnnotations::with_title(title(entry.name()))
        .read_only(!def.is_mutation())
        .destructive(def.is_destructive());
    if def.is_mutation() {
        annotations = annotations.idempotent(def.is_idempotent());
    }
    annotations
}

/// `order-cancel` -> `Order cancel`.
fn title(name: &str) -> String {
    let words = name.replace('-', " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => words,
    }
}

/// The envelope every tool's `structuredContent` follows, with the command's own data
/// schema inside.
fn envelope_schema(data: &Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "success": {"type": "boolean"},
            "data": data,
            "error": {"type": "object"},
            "reasoning": {"type": "string"},
            "confidence": {"type": "number"},
            "metadata": {"type": "object"}
        },
        "required": ["success"]
    })
}

/// An inputSchema must be an object schema; a command whose input is not an object is
/// given a permissive object schema (its own schema still validates every call).
fn input_schema_for(entry: &CommandEntry) -> Value {
    let schema = entry.input_schema();
    if schema.get("type") == Some(&json!("object")) {
        schema.clone()
    } else {
        json!({"type": "object"})
    }
}

pub(crate) fn command_tool(entry: &CommandEntry) -> Tool {
    let mut tool = Tool::new(
        entry.name(),
        entry.description(),
        object(input_schema_for(entry)),
    )
    .with_annotations(command_annotations(entry));
    if let Some(output) = entry.output_schema() {
        let mut output = output.clone();
        let defs = output.as_object_mut().and_then(|map| map.remove("$defs"));
        let mut envelope = envelope_schema(&output);
        if let Some(defs) = defs {
            envelope["$defs"] = defs;
        }
        tool = tool.with_raw_output_schema(object(envelope));
    }
    tool
}

/// A category's tool: `action` picks one of `entries` (all of one category).
pub(crate) fn group_tool(
    dispatcher: &Dispatcher,
    category: &'static str,
    entries: &[&CommandEntry],
) -> (Tool, Route) {
    let actions: Vec<&str> = entries.iter().map(|entry| entry.name()).collect();
    let mut properties = serde_json::Map::new();
    properties.insert("action".into(), json!({"enum": actions}));
    for entry in entries {
        if let Some(fields) = entry
            .input_schema()
            .get("properties")
            .and_then(Value::as_object)
        {
            for (field, schema) in fields {
                properties
                    .entry(field.clone())
                    .or_insert_with(|| schema.clone());
            }
        }
    }
    let lines: Vec<String> = entries
        .iter()
        .map(|entry| format!("{}: {}", entry.name(), summary(entry.description())))
        .collect();
    let about = dispatcher
        .registry()
        .category_description(category)
        .map_or_else(String::new, |text| format!("{text} "));
    let description = format!(
        "{about}{category} commands; pick one with `action`. {}",
        lines.join("; ")
    );
    let schema = json!({"type": "object", "properties": properties, "required": ["action"]});
    let all_read_only = entries.iter().all(|entry| !entry.is_mutation());
    let any_destructive = entries.iter().any(|entry| entry.def().is_destructive());
    let annotations = ToolAnnotations::with_title(title(category))
        .read_only(all_read_only)
        .destructive(any_destructive);
    (
        Tool::new(category, description, object(schema)).with_annotations(annotations),
        Route::Group(category),
    )
}

/// The grouped strategy's tools: one per category, then the context operations.
pub(super) fn group_tools(dispatcher: &Dispatcher) -> Vec<(Tool, Route)> {
    let mut groups: BTreeMap<&'static str, Vec<&CommandEntry>> = BTreeMap::new();
    let mut ops = Vec::new();
    for entry in dispatcher.exposed_entries() {
        if is_op(entry.def()) {
            // The context operations are the lobby: tools of their own, not a group.
            ops.push((command_tool(entry), Route::Command(entry.name())));
        } else {
            groups.entry(entry.category()).or_default().push(entry);
        }
    }
    let mut tools: Vec<(Tool, Route)> = groups
        .into_iter()
        .map(|(category, entries)| group_tool(dispatcher, category, &entries))
        .collect();
    tools.extend(ops);
    tools
}

/// A command listed by name and summary with a permissive schema; its real schema comes
/// from afd-detail (and validates every call).
pub(super) fn named_tool(entry: &CommandEntry) -> Tool {
    let def = entry.def();
    let mut annotations = ToolAnnotations::new().read_only(!def.is_mutation());
    if def.is_mutation() {
        annotations = annotations.destructive(def.is_destructive());
    }
    Tool::new(
        entry.name(),
        summary(entry.description()),
        object(json!({"type": "object"})),
    )
    .with_annotations(annotations)
}
