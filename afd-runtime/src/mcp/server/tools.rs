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

use super::advertise;

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

impl Route {
    /// The command a call of a tool with this route runs (`None`: a tool of no route, a
    /// command called by its own name): the command afd-call names in `command`, the
    /// `action` of a category's tool, a command's own tool's command, or `tool` itself
    /// when the server has no tool by that name; `None` for the other built-in tools.
    pub(crate) fn command<'a>(
        route: Option<&'a Route>,
        tool: &'a str,
        argument: impl Fn(&str) -> Option<&'a str>,
    ) -> Option<&'a str> {
        match route {
            Some(Route::Call) => argument("command"),
            Some(Route::Group(_)) => argument("action"),
            Some(Route::Command(command)) => Some(command),
            Some(_) => None,
            None => Some(tool),
        }
    }
}

/// The bootstrap tools afd-help, afd-docs and afd-schema, read-only.
pub(crate) fn bootstrap_tools() -> Vec<(Tool, Route)> {
    use crate::tools::help::{docs_schema, help_schema, schema_schema};
    vec![
        (
            Tool::new(HELP, "Overview of every command, grouped by category (format: text or json).", object(advertise::meta_input(help_schema(), IN_BAND)))
                .with_title("Help")
                .with_annotations(read_only()),
            Route::Help,
        ),
        (
            Tool::new(DOCS, "Markdown documentation of a command, a category, or everything, with parameter tables.", object(advertise::meta_input(docs_schema(), IN_BAND)))
                .with_title("Docs")
                .with_annotations(read_only()),
            Route::Docs,
        ),
        (
            Tool::new(SCHEMA, "Input and output schemas of commands (default all), as JSON Schema or TypeScript (format).", object(advertise::meta_input(schema_schema(), IN_BAND)))
                .with_title("Schema")
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

/// Marks the tool to keep in context where a client defers tools until searched for:
/// afd-discover, afd-detail and afd-call, the three an agent cannot work without (find a
/// command, read its schema, run it). afd-batch and afd-pipe may be deferred.
fn always_load() -> MetaObject {
    let mut meta = MetaObject::default();
    meta.insert("anthropic/alwaysLoad".into(), Value::Bool(true));
    meta
}

/// Introspection: read-only and closed-world (it reads the catalog and the session).
fn read_only() -> ToolAnnotations {
    ToolAnnotations::new().read_only(true).open_world(false)
}

/// Arguments the meta-tools' listings leave out because a result tells the agent, with
/// the value, when to pass them: `session` (afd-context-enter's handle, on a protocol
/// without sessions) and `includeLoaded` (a search that left loaded commands out says
/// so). The tools still take them.
const IN_BAND: &[&str] = &["session", "includeLoaded"];

fn call_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"command": {"type": "string"}, "input": {"type": "object"}},
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
            "options": {"type": "object"}
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
            "options": {"type": "object"}
        },
        "required": ["steps"]
    })
}

/// afd-discover's description: how many commands it searches, so the listing never grows
/// with the catalog (the server instructions and a discover without filters name the
/// categories).
pub(crate) fn discover_description(dispatcher: &Dispatcher) -> String {
    format!(
        "Search the {} commands by words, category or tag (match none: nothing fits).",
        dispatcher.exposed_count()
    )
}

/// afd-discover and afd-detail (`with_introspection`), then afd-call, afd-batch, afd-pipe.
/// The three dispatchers carry no annotations: MCP's defaults (may write, may destroy,
/// not idempotent, open world) are what a tool that runs any command may do.
pub(in crate::mcp) fn meta_tools(
    dispatcher: &Dispatcher,
    with_introspection: bool,
) -> Vec<(Tool, Route)> {
    let mut tools = Vec::with_capacity(5);
    if with_introspection {
        tools.push((
            Tool::new(
                DISCOVER,
                discover_description(dispatcher),
                object(advertise::meta_input(discover_schema(), IN_BAND)),
            )
            .with_title("Discover")
            .with_annotations(read_only())
            .with_meta(always_load()),
            Route::Discover,
        ));
        tools.push((
            Tool::new(
                DETAIL,
                "Input schemas and full descriptions of up to 10 commands.",
                object(advertise::meta_input(detail_schema(), IN_BAND)),
            )
            .with_title("Detail")
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
        .with_title("Call")
        .with_meta(always_load()),
        Route::Call,
    ));
    tools.push((
        Tool::new(
            BATCH,
            "Run several commands; each succeeds or fails alone. options: stopOnError, timeoutMs, parallelism.",
            object(batch_schema()),
        )
        .with_title("Batch"),
        Route::Batch,
    ));
    tools.push((
        Tool::new(
            PIPE,
            "Chain commands; inputs may use $prev, $steps.<as>, $input; when skips a step. options: continueOnFailure, timeoutMs.",
            object(pipe_schema()),
        )
        .with_title("Pipe"),
        Route::Pipe,
    ));
    tools
}

/// What a listing renders beside each command's name, description and input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rendering {
    /// Whether a command's tool states the shape of its results' data (`outputSchema`).
    pub(crate) output_schemas: bool,
    /// Whether a command's input schema is advertised compactly (no numeric formats,
    /// `default: null`, titles, `$defs` used once inlined) or exactly as generated.
    pub(crate) compact_schemas: bool,
}

/// A command's annotations, where they differ from MCP's defaults (readOnlyHint false,
/// destructiveHint true, idempotentHint false, openWorldHint true), and `destructiveHint:
/// true` stated for a destructive command all the same, for the clients that warn only
/// when it is stated: a read-only command says so (the other write hints mean nothing
/// then); a mutation says whether it is destructive and when it is idempotent; a command
/// whose effects stay in the app says `openWorldHint: false`. None when every default
/// holds. The title is the tool's own (`#[command(title = "...")]`), not an annotation's.
fn command_annotations(entry: &CommandEntry) -> Option<ToolAnnotations> {
    let def = entry.def();
    let mut annotations = ToolAnnotations::new();
    if def.is_mutation() {
        annotations = annotations.destructive(def.is_destructive());
        if def.is_idempotent() {
            annotations = annotations.idempotent(true);
        }
    } else {
        annotations = annotations.read_only(true);
    }
    if !reaches_outside(entry) {
        annotations = annotations.open_world(false);
    }
    (annotations != ToolAnnotations::new()).then_some(annotations)
}

/// Whether a command may reach entities outside the app (MCP's `openWorldHint`: a web
/// search, a payment provider, an email sent): `#[command(open_world)]`. Every other
/// command is closed-world: its effects stay in the app's own state.
fn reaches_outside(entry: &CommandEntry) -> bool {
    entry.def().is_open_world()
}

/// An inputSchema must be an object schema; a command whose input is not an object is
/// given a permissive object schema (its own schema still validates every call).
fn input_schema_for(entry: &CommandEntry, rendering: Rendering) -> Value {
    let schema = entry.input_schema();
    if schema.get("type") != Some(&json!("object")) {
        json!({"type": "object"})
    } else if rendering.compact_schemas {
        advertise::input(schema)
    } else {
        schema.clone()
    }
}

/// A command's display title: the declared one (`#[command(title = "...")]`), else its name
/// in words.
fn title_of(entry: &CommandEntry) -> String {
    entry
        .def()
        .title()
        .map_or_else(|| title_from_name(entry.name()), str::to_owned)
}

/// A name in words, for a display title: `user-create` is "User create", `git_log` "Git log".
fn title_from_name(name: &str) -> String {
    let words = name.replace(['-', '_', '.', '/'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A command's own tool: its name, display title (the declared one, else its name in words), description, advertised
/// input schema, annotations, and
/// (when `rendering` asks and the command's output type has a schema) its data's shape.
pub(crate) fn command_tool(entry: &CommandEntry, rendering: Rendering) -> Tool {
    let mut tool = Tool::new(
        entry.name(),
        entry.description(),
        object(input_schema_for(entry, rendering)),
    );
    tool.title = Some(title_of(entry));
    tool.annotations = command_annotations(entry);
    if rendering.output_schemas
        && let Some(data) = entry.output_schema()
    {
        tool = tool.with_raw_output_schema(object(advertise::output(data)));
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
    // The tool's name is the category's, and its schema requires `action` from the enum of
    // these names: the description only pairs each name with its summary.
    let description = format!("{about}`action`: {}", lines.join("; "));
    let schema = json!({"type": "object", "properties": properties, "required": ["action"]});
    let mut tool = Tool::new(category, description, object(advertise::input(&schema)));
    tool.title = Some(title_from_name(category));
    tool.annotations = group_annotations(entries);
    (tool, Route::Group(category))
}

/// A category tool's annotations, only where they differ from MCP's defaults and hold for
/// every action: read-only when all are; otherwise not destructive when none is, and
/// destructive, stated, when one is; closed world when none reaches outside. (The tool's
/// title is the category's name in words.)
fn group_annotations(entries: &[&CommandEntry]) -> Option<ToolAnnotations> {
    let mut annotations = ToolAnnotations::new();
    if entries.iter().all(|entry| !entry.is_mutation()) {
        annotations = annotations.read_only(true);
    } else {
        let destructive = entries.iter().any(|entry| entry.def().is_destructive());
        annotations = annotations.destructive(destructive);
    }
    if !entries.iter().any(|entry| reaches_outside(entry)) {
        annotations = annotations.open_world(false);
    }
    (annotations != ToolAnnotations::new()).then_some(annotations)
}

/// The grouped strategy's tools: one per category, then the context operations.
pub(in crate::mcp) fn group_tools(
    dispatcher: &Dispatcher,
    rendering: Rendering,
) -> Vec<(Tool, Route)> {
    let mut groups: BTreeMap<&'static str, Vec<&CommandEntry>> = BTreeMap::new();
    let mut ops = Vec::new();
    for entry in dispatcher.exposed_entries() {
        if is_op(entry.def()) {
            // The context operations are the lobby: tools of their own, not a group.
            ops.push((command_tool(entry, rendering), Route::Command(entry.name())));
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
pub(in crate::mcp) fn named_tool(entry: &CommandEntry) -> Tool {
    let mut tool = Tool::new(
        entry.name(),
        summary(entry.description()),
        object(json!({"type": "object"})),
    );
    tool.title = Some(title_of(entry));
    tool.annotations = command_annotations(entry);
    tool
}

#[cfg(test)]
mod tests {
    use super::title_from_name;

    #[test]
    fn a_name_in_words_is_a_title() {
        assert_eq!(title_from_name("user-create"), "User create");
        assert_eq!(title_from_name("git_log"), "Git log");
        assert_eq!(title_from_name("billing"), "Billing");
        assert_eq!(title_from_name("ünïcode-name"), "Ünïcode name");
        assert_eq!(title_from_name(""), "");
    }
}
