//! The introspection tools a server may add: afd-help (a grouped overview), afd-docs
//! (Markdown documentation) and afd-schema (every schema at once, as JSON Schema or
//! TypeScript). Opt-ins, orthogonal to the tool strategy; richer and heavier than
//! afd-discover / afd-detail.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::LazyLock;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::discover::OneOrMany;
use crate::dispatch::Dispatcher;
use crate::error::{CommandError, codes};
use crate::registry::CommandEntry;
use crate::result::CommandResult;
use crate::text::summary;
use crate::typescript;
use crate::validate::{InputValidator, deserialize_input};

/// The input schema of afd-help.
pub(crate) fn help_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "category": {"type": "string"},
                "format": {"enum": ["text", "json"]}
            },
            "additionalProperties": false
        })
    });
    &SCHEMA
}

/// The input schema of afd-docs.
pub(crate) fn docs_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "category": {"type": "string"}
            },
            "additionalProperties": false
        })
    });
    &SCHEMA
}

/// The input schema of afd-schema.
pub(crate) fn schema_schema() -> &'static Value {
    static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
        json!({
            "type": "object",
            "properties": {
                "command": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                "category": {"type": "string"},
                "format": {"enum": ["json", "typescript"]}
            },
            "additionalProperties": false
        })
    });
    &SCHEMA
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HelpInput {
    category: Option<String>,
    #[serde(default)]
    format: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocsInput {
    command: Option<String>,
    category: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SchemaInput {
    command: Option<OneOrMany>,
    category: Option<String>,
    format: Option<String>,
}

fn read<T: serde::de::DeserializeOwned>(
    tool: &str,
    schema: &'static Value,
    input: Value,
) -> Result<T, CommandError> {
    let input = if input.is_null() {
        Value::Object(Map::new())
    } else {
        input
    };
    InputValidator::new(schema)
        .map_err(CommandError::internal)?
        .validate(tool, &input)?;
    deserialize_input(tool, input)
}

fn done(data: Value, reasoning: String, started: Instant) -> CommandResult<Value> {
    let mut result = CommandResult::success(data)
        .with_reasoning(reasoning)
        .with_confidence(1.0);
    result.metadata_mut().execution_time_ms = Some(started.elapsed().as_millis() as u64);
    result
}

fn unknown_category(dispatcher: &Dispatcher, category: &str) -> CommandError {
    let known: Vec<&str> = dispatcher
        .available_categories()
        .iter()
        .map(|(name, _)| *name)
        .collect();
    CommandError::new(codes::NOT_FOUND, format!("No category named '{category}'"))
        .with_suggestion(format!("Categories: {}.", known.join(", ")))
}

fn selected<'d>(
    dispatcher: &'d Dispatcher,
    category: Option<&str>,
) -> Result<Vec<&'d CommandEntry>, CommandError> {
    let entries: Vec<&CommandEntry> = dispatcher
        .exposed_entries()
        .filter(|entry| category.is_none_or(|c| entry.category() == c))
        .collect();
    match category {
        Some(category) if entries.is_empty() => Err(unknown_category(dispatcher, category)),
        _ => Ok(entries),
    }
}

/// afd-help: the catalog grouped by category, with descriptions and one-line
/// summaries; `format: "text"` (default) for reading, `"json"` for parsing.
pub(crate) fn help(dispatcher: &Dispatcher, input: Value) -> CommandResult<Value> {
    let started = Instant::now();
    let input: HelpInput = match read("afd-help", help_schema(), input) {
        Ok(input) => input,
        Err(error) => return CommandResult::failure(error),
    };
    let entries = match selected(dispatcher, input.category.as_deref()) {
        Ok(entries) => entries,
        Err(error) => return CommandResult::failure(error),
    };
    let mut groups: BTreeMap<&str, Vec<&CommandEntry>> = BTreeMap::new();
    for entry in &entries {
        groups.entry(entry.category()).or_default().push(entry);
    }
    let reasoning = format!("{} commands in {} categories", entries.len(), groups.len());
    if input.format.as_deref() == Some("json") {
        let categories: Vec<Value> = groups
            .iter()
            .map(|(name, commands)| {
                let mut group = json!({
                    "name": name,
                    "commands": commands.iter().map(|e| json!({
                        "name": e.name(),
                        "description": summary(e.description()),
                        "mutation": e.is_mutation(),
                    })).collect::<Vec<_>>(),
                });
                if let Some(description) = dispatcher.registry().category_description(name) {
                    group["description"] = json!(description);
                }
                group
            })
            .collect();
        return done(json!({"categories": categories}), reasoning, started);
    }
    let mut text = String::new();
    for (name, commands) in &groups {
        let _ = write!(text, "## {name}");
        if let Some(description) = dispatcher.registry().category_description(name) {
            let _ = write!(text, ": {description}");
        }
        text.push('\n');
        for entry in commands {
            let marker = if entry.def().is_destructive() {
                " (destructive)"
            } else if entry.is_mutation() {
                " (changes state)"
            } else {
                ""
            };
            let _ = writeln!(
                text,
                "- {}: {}{marker}",
                entry.name(),
                summary(entry.description())
            );
        }
        text.push('\n');
    }
    text.push_str("Call afd-docs or afd-detail for a command's parameters; afd-call runs it.\n");
    done(Value::String(text), reasoning, started)
}

/// afd-docs: Markdown documentation of one command, a category, or everything:
/// description, flags, parameters (from the input schema) and declared errors.
pub(crate) fn docs(dispatcher: &Dispatcher, input: Value) -> CommandResult<Value> {
    let started = Instant::now();
    let input: DocsInput = match read("afd-docs", docs_schema(), input) {
        Ok(input) => input,
        Err(error) => return CommandResult::failure(error),
    };
    let entries: Vec<&CommandEntry> = match &input.command {
        Some(name) => match dispatcher.lookup(name) {
            Some(resolved) => vec![resolved.entry],
            None => return CommandResult::failure(dispatcher.not_found(name)),
        },
        None => match selected(dispatcher, input.category.as_deref()) {
            Ok(entries) => entries,
            Err(error) => return CommandResult::failure(error),
        },
    };
    let mut text = String::new();
    for entry in &entries {
        document(&mut text, entry, dispatcher.is_exposed(entry.name()));
    }
    done(
        Value::String(text),
        format!("Documented {} commands", entries.len()),
        started,
    )
}

/// afd-schema: the input (and output) schemas of the selected commands (default: all
/// exposed), as JSON Schema (`format: "json"`, default) or TypeScript declarations.
pub(crate) fn schema(dispatcher: &Dispatcher, input: Value) -> CommandResult<Value> {
    let started = Instant::now();
    let input: SchemaInput = match read("afd-schema", schema_schema(), input) {
        Ok(input) => input,
        Err(error) => return CommandResult::failure(error),
    };
    let entries: Vec<&CommandEntry> = match &input.command {
        Some(names) => {
            let names = match names {
                OneOrMany::One(one) => vec![one.clone()],
                OneOrMany::Many(many) => many.clone(),
            };
            let mut found = Vec::with_capacity(names.len());
            for name in &names {
                match dispatcher.lookup(name) {
                    Some(resolved) => found.push(resolved.entry),
                    None => return CommandResult::failure(dispatcher.not_found(name)),
                }
            }
            found
        }
        None => match selected(dispatcher, input.category.as_deref()) {
            Ok(entries) => entries,
            Err(error) => return CommandResult::failure(error),
        },
    };
    let reasoning = format!("Schemas of {} commands", entries.len());
    if input.format.as_deref() == Some("typescript") {
        let mut defs = BTreeMap::new();
        let mut body = String::new();
        for entry in &entries {
            let _ = writeln!(
                body,
                "// {}: {}",
                entry.name(),
                summary(entry.description())
            );
            body.push_str(&typescript::declare(
                &typescript::type_name(entry.name(), "Input"),
                entry.input_schema(),
                &mut defs,
            ));
            if let Some(output) = entry.output_schema() {
                body.push_str(&typescript::declare(
                    &typescript::type_name(entry.name(), "Output"),
                    output,
                    &mut defs,
                ));
            }
            body.push('\n');
        }
        let mut text = String::new();
        for declaration in defs.values() {
            text.push_str(declaration);
            text.push('\n');
        }
        text.push_str(&body);
        return done(Value::String(text), reasoning, started);
    }
    let mut schemas = Map::new();
    for entry in &entries {
        let mut schema = json!({"input": entry.input_schema()});
        if let Some(output) = entry.output_schema() {
            schema["output"] = output.clone();
        }
        schemas.insert(entry.name().to_owned(), schema);
    }
    done(Value::Object(schemas), reasoning, started)
}

fn document(text: &mut String, entry: &CommandEntry, callable: bool) {
    let def = entry.def();
    let _ = writeln!(text, "## {}\n\n{}\n", entry.name(), entry.description());
    let mut facts = vec![format!("category `{}`", entry.category())];
    if !def.tags().is_empty() {
        facts.push(format!(
            "tags {}",
            def.tags()
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    facts.push(if def.is_destructive() {
        "destructive".to_owned()
    } else if def.is_mutation() {
        "changes state".to_owned()
    } else {
        "read-only".to_owned()
    });
    if let Some(time) = def.execution_time() {
        facts.push(format!("{time}"));
    }
    if !callable {
        facts.push("not callable here".to_owned());
    }
    let _ = writeln!(text, "{}.\n", facts.join(", "));
    if let Some(prompt) = def.confirm_prompt() {
        let _ = writeln!(text, "Confirm first: \"{prompt}\"\n");
    }
    let schema = entry.input_schema();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match schema.get("properties").and_then(Value::as_object) {
        Some(properties) if !properties.is_empty() => {
            text.push_str("| parameter | type | required | description |\n|---|---|---|---|\n");
            for (name, property) in properties {
                let ty = typescript::ts(property, "")
                    .replace('\n', " ")
                    .replace('|', "\\|");
                let description = property
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let required = if required.contains(&name.as_str()) {
                    "yes"
                } else {
                    "no"
                };
                let _ = writeln!(text, "| `{name}` | `{ty}` | {required} | {description} |");
            }
            text.push('\n');
        }
        _ => text.push_str("No parameters.\n\n"),
    }
    if !def.errors().is_empty() {
        let _ = writeln!(
            text,
            "Errors: {}.\n",
            def.errors()
                .iter()
                .map(|e| format!("`{e}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}
