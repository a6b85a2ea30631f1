//! [`Document`]: the searchable text of one command or tool, field by field.

use serde_json::Value;

use crate::command::CommandDef;
use crate::registry::CommandEntry;

/// Parameter descriptions longer than this (in bytes) are cut: the start says what the
/// parameter is, the rest is usually format detail that only adds noise.
const MAX_PARAM_DESCRIPTION_BYTES: usize = 300;
/// Most parameters taken from one schema.
const MAX_PARAMS: usize = 64;

/// The searchable text of one command (or one external tool), by field. Fields weigh
/// differently in ranking: name words most, then aliases and title, then category and
/// tags, then the description (its first sentence more than the rest), then parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    /// The name, in any case style (`user-create`, `create_user`, `createUser`).
    pub name: String,
    /// A human title, for tools that have one (MCP's `title`); may be empty.
    pub title: String,
    /// Other names the command answers to.
    pub aliases: Vec<String>,
    /// The description; its first sentence counts as a summary and weighs more.
    pub description: String,
    /// The category; for a catalog of external tools, the server's name.
    pub category: String,
    /// Tags (for external tools, any category the tool itself declares).
    pub tags: Vec<String>,
    /// The input parameters: `(name, description)`.
    pub params: Vec<(String, String)>,
    /// Whether the command only reads (`Some(true)`), changes state (`Some(false)`), or is
    /// not known to do either. A query that asks to read ("show", "which ...?") favours
    /// read-only commands a little, one that asks for a change ("create", "remove") the
    /// others.
    pub read_only: Option<bool>,
}

impl Document {
    /// A document with just a name and a description.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Document {
            name: name.into(),
            description: description.into(),
            ..Document::default()
        }
    }

    /// The document of a command definition: name, aliases (deprecated ones included),
    /// description, category, tags and the parameters of its input schema. Generates the
    /// schema; prefer [`Document::from_entry`] when a registry entry is at hand.
    pub fn from_command(def: &CommandDef) -> Self {
        Self::from_parts(def, &def.generate_input_schema())
    }

    /// The document of a registry entry. Reads the entry's input schema when it is
    /// already cached; otherwise generates it for the document alone and drops it, so that
    /// indexing a large catalog does not keep every schema in memory (an entry's schema is
    /// cached on its first real use: detail, validation, a tool listing).
    pub fn from_entry(entry: &CommandEntry) -> Self {
        match entry.cached_input_schema() {
            Some(schema) => Self::from_parts(entry.def(), schema),
            None => Self::from_command(entry.def()),
        }
    }

    fn from_parts(def: &CommandDef, schema: &Value) -> Self {
        Document {
            name: def.name().to_owned(),
            title: String::new(),
            aliases: def
                .aliases()
                .iter()
                .chain(def.deprecated_aliases())
                .map(|alias| (*alias).to_owned())
                .collect(),
            description: def.description().to_owned(),
            category: def.category().to_owned(),
            tags: def.tags().iter().map(|tag| (*tag).to_owned()).collect(),
            params: params_from_schema(schema),
            read_only: Some(!def.is_mutation()),
        }
    }

    /// The document of an MCP tool definition (`{"name", "title"?, "description",
    /// "inputSchema", "category"?}`, as `tools/list` returns it) served by `server`, which
    /// becomes the category; a `category` the tool declares becomes a tag, and the
    /// `readOnlyHint` annotation gives [`read_only`](Self::read_only). `None` when the tool
    /// has no string `name`.
    ///
    /// ```
    /// use afd_runtime::search::Document;
    /// use serde_json::json;
    /// let tool = json!({
    ///     "name": "create_issue",
    ///     "description": "Create an issue.",
    ///     "inputSchema": {"properties": {"title": {"description": "Issue title"}}}
    /// });
    /// let doc = Document::from_mcp_tool("github", &tool).unwrap();
    /// assert_eq!(doc.category, "github");
    /// assert_eq!(doc.params, [("title".to_owned(), "Issue title".to_owned())]);
    /// ```
    pub fn from_mcp_tool(server: &str, tool: &Value) -> Option<Self> {
        let text = |key: &str| tool.get(key).and_then(Value::as_str).unwrap_or_default();
        let name = tool.get("name")?.as_str()?;
        let tags = match tool.get("category").and_then(Value::as_str) {
            Some(category) if !category.is_empty() => vec![category.to_owned()],
            _ => Vec::new(),
        };
        Some(Document {
            name: name.to_owned(),
            title: text("title").to_owned(),
            aliases: Vec::new(),
            description: text("description").to_owned(),
            category: server.to_owned(),
            tags,
            params: tool
                .get("inputSchema")
                .map(params_from_schema)
                .unwrap_or_default(),
            read_only: tool
                .get("annotations")
                .and_then(|annotations| annotations.get("readOnlyHint"))
                .and_then(Value::as_bool),
        })
    }
}

/// The parameters of a JSON Schema: each top-level property's name and `description`
/// (empty when it has none), in the schema's order, at most 64, descriptions cut to a few
/// hundred bytes.
fn params_from_schema(schema: &Value) -> Vec<(String, String)> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .take(MAX_PARAMS)
        .map(|(name, property)| {
            let description = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            (
                name.clone(),
                truncate(description, MAX_PARAM_DESCRIPTION_BYTES).to_owned(),
            )
        })
        .collect()
}

/// `text` cut to at most `max` bytes, at a character boundary.
pub(crate) fn truncate(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The first sentence of a description (up to the first `. `, `.\n`, blank line or end),
/// and the rest.
pub(super) fn split_summary(description: &str) -> (&str, &str) {
    let bytes = description.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        let next = bytes.get(index + 1).copied();
        let end = match byte {
            b'.' | b'!' | b'?' => matches!(next, None | Some(b' ' | b'\n' | b'\r' | b'\t')),
            b'\n' => next == Some(b'\n'),
            _ => false,
        };
        if end {
            return (&description[..=index], &description[index + 1..]);
        }
    }
    (description, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_parameters_from_a_schema() {
        let schema = json!({"type": "object", "properties": {
            "id": {"type": "integer", "description": "The order id"},
            "note": {"type": "string"}
        }});
        assert_eq!(
            params_from_schema(&schema),
            [
                ("id".to_owned(), "The order id".to_owned()),
                ("note".to_owned(), String::new())
            ]
        );
        assert!(params_from_schema(&json!(true)).is_empty());
        assert!(params_from_schema(&json!({"properties": 3})).is_empty());
    }

    #[test]
    fn truncates_at_a_char_boundary() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("abc", 10), "abc");
    }

    #[test]
    fn mcp_tools_need_a_name() {
        assert!(Document::from_mcp_tool("s", &json!({"description": "x"})).is_none());
        let doc = Document::from_mcp_tool("s", &json!({"name": "t", "category": "c"})).unwrap();
        assert_eq!(doc.tags, ["c"]);
        assert!(doc.description.is_empty());
    }

    #[test]
    fn splits_the_first_sentence() {
        assert_eq!(
            split_summary("Create a user. Then more."),
            ("Create a user.", " Then more.")
        );
        assert_eq!(split_summary("v1.2 is out"), ("v1.2 is out", ""));
        assert_eq!(split_summary("One\n\nTwo"), ("One\n", "\nTwo"));
        assert_eq!(split_summary(""), ("", ""));
    }
}
