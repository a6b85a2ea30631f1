//! Upstream tools as afd-runtime commands: each tool becomes a run-time [`CommandDef`]
//! named `server.tool` in the category `server`, whose handler forwards to the upstream.
//!
//! The registry holds `&'static` definitions, so definitions built here are leaked. They
//! are interned by server and by the tool's exact JSON: rebuilding the catalog after a
//! refresh reuses every unchanged definition and leaks only what changed (a new or
//! changed tool, a changed server description), so memory grows with changes, not with
//! refreshes.

use std::collections::HashMap;
use std::sync::Arc;

use afd_runtime::{CategoryDef, CommandDef, RuntimeParts, SourceLocation};
use rmcp::model::Tool;
use serde_json::{Value, json};

use crate::cache::ToolList;
use crate::upstream::Upstream;

/// MCP's limit on tool names.
pub const MAX_TOOL_NAME: usize = 128;

/// The tool id clients see: `server.tool`, with characters MCP tool names do not allow
/// replaced by `_`, at most 128 characters.
pub fn tool_id(server: &str, tool: &str) -> String {
    let mut id = String::with_capacity(server.len() + tool.len() + 1);
    id.push_str(server);
    id.push('.');
    id.extend(tool.chars().map(|c| {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
            c
        } else {
            '_'
        }
    }));
    id.truncate(MAX_TOOL_NAME);
    id
}

/// How a tool's annotations map to afd flags: (mutation, destructive, idempotent). MCP's
/// defaults apply to what is not annotated: a tool may change state unless it says
/// `readOnlyHint: true`, and a tool that changes state may destroy unless it says
/// `destructiveHint: false`.
pub fn flags(tool: &Tool) -> (bool, bool, bool) {
    let annotations = tool.annotations.as_ref();
    let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
    let mutation = !read_only;
    let destructive = mutation && annotations.and_then(|a| a.destructive_hint).unwrap_or(true);
    let idempotent = mutation && annotations.and_then(|a| a.idempotent_hint).unwrap_or(false);
    (mutation, destructive, idempotent)
}

/// The description agents see for a server: the configured one, else the first
/// paragraph of its instructions, else its name and version.
pub fn server_description(upstream: &Upstream, list: Option<&ToolList>) -> String {
    if let Some(description) = &upstream.config().description {
        return description.clone();
    }
    if let Some(instructions) = list.and_then(|l| l.instructions.as_deref()) {
        let first = instructions.split("\n\n").next().unwrap_or_default().trim();
        if !first.is_empty() {
            let mut text: String = first.chars().take(300).collect();
            if first.chars().count() > 300 {
                text.push_str("...");
            }
            return text;
        }
    }
    let name = list
        .and_then(|l| l.server_name.as_deref())
        .unwrap_or(upstream.name());
    match list.and_then(|l| l.server_version.as_deref()) {
        Some(version) => format!("MCP server {name} {version}."),
        None => format!("MCP server {name}."),
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

/// Interned definitions: the same tool of the same server is one definition for the
/// life of the gateway.
#[derive(Default)]
pub struct Interner {
    commands: HashMap<(String, String, Vec<&'static str>), &'static CommandDef>,
    categories: HashMap<(String, String), &'static CategoryDef>,
    leaked: usize,
}

impl Interner {
    /// How many definitions were leaked so far (commands and categories).
    pub fn leaked(&self) -> usize {
        self.leaked
    }

    /// The category of a server.
    pub fn category(&mut self, server: &str, description: &str) -> &'static CategoryDef {
        let key = (server.to_owned(), description.to_owned());
        if let Some(def) = self.categories.get(&key) {
            return def;
        }
        self.leaked += 1;
        let def: &'static CategoryDef =
            Box::leak(Box::new(CategoryDef::new(leak(server), leak(description))));
        self.categories.insert(key, def);
        def
    }

    /// The command of one upstream tool, in `contexts` (none: universal).
    pub fn command(
        &mut self,
        upstream: &Arc<Upstream>,
        tool: &Tool,
        contexts: Vec<&'static str>,
    ) -> &'static CommandDef {
        let json = serde_json::to_string(tool).unwrap_or_default();
        let key = (upstream.name().to_owned(), json, contexts);
        if let Some(def) = self.commands.get(&key) {
            return def;
        }
        self.leaked += 1;
        let contexts: &'static [&'static str] = Box::leak(key.2.clone().into_boxed_slice());
        let def = build(upstream, tool, contexts);
        self.commands.insert(key, def);
        def
    }
}

/// A permissive object schema, for an upstream schema the validator cannot compile.
fn permissive() -> Value {
    json!({"type": "object"})
}

fn build(
    upstream: &Arc<Upstream>,
    tool: &Tool,
    contexts: &'static [&'static str],
) -> &'static CommandDef {
    let server = upstream.name();
    let upstream_name = tool.name.to_string();
    let (mutation, destructive, idempotent) = flags(tool);
    let mut schema = Value::Object((*tool.input_schema).clone());
    if let Err(reason) = afd_runtime::validate::InputValidator::new(&schema) {
        tracing::warn!(server, tool = %upstream_name, %reason, "the upstream input schema does not compile; validating it upstream only");
        schema = permissive();
    }
    let output = tool
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()));
    let target = upstream.clone();
    let name_for_call = upstream_name.clone();
    let parts = RuntimeParts::new(
        schema,
        Arc::new(move |input, ctx| {
            let target = target.clone();
            let tool = name_for_call.clone();
            Box::pin(async move { target.call(&tool, mutation, input, ctx).await })
        }),
    )
    .with_output_schema(output);
    let parts: &'static RuntimeParts = Box::leak(Box::new(parts));
    let description = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(str::to_owned)
        .or_else(|| tool.title.clone())
        .unwrap_or_else(|| format!("The {upstream_name} tool of the {server} server."));
    let mut def = CommandDef::runtime(
        leak(&tool_id(server, &upstream_name)),
        leak(&description),
        parts,
        SourceLocation::RUNTIME,
    )
    .with_category(leak(server))
    .with_contexts(contexts);
    if mutation {
        def = def.with_mutation();
    }
    if destructive {
        def = def.with_destructive();
    }
    if idempotent {
        def = def.with_idempotent();
    }
    Box::leak(Box::new(def))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(annotations: Value) -> Tool {
        serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "annotations": annotations
        }))
        .unwrap()
    }

    #[test]
    fn ids_are_prefixed_and_within_mcp_rules() {
        assert_eq!(
            tool_id("github", "create_pull_request"),
            "github.create_pull_request"
        );
        assert_eq!(tool_id("fs", "read file/now"), "fs.read_file_now");
        assert_eq!(tool_id("s", &"x".repeat(300)).len(), MAX_TOOL_NAME);
    }

    #[test]
    fn annotations_map_to_flags_with_mcp_defaults() {
        assert_eq!(
            flags(&tool(json!({"readOnlyHint": true}))),
            (false, false, false)
        );
        assert_eq!(flags(&tool(json!({}))), (true, true, false));
        assert_eq!(
            flags(&tool(
                json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true})
            )),
            (true, false, true)
        );
    }
}
