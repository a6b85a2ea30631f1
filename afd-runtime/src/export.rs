//! The catalog as a folder tree, for agents that browse a filesystem rather than call
//! afd-discover: list the categories, list a category's commands, read the one definition
//! needed.
//!
//! ```text
//! <dir>/README.md                 the index, for reading: categories, commands, summaries
//! <dir>/index.json                the same index, for parsing
//! <dir>/<category>/<command>.json the full definition of one command
//! ```
//!
//! Every listing is in name order and every file is rendered deterministically, so two
//! exports of one catalog are byte-identical.
//!
//! ```
//! use afd_runtime::export::export_tree;
//!
//! let registry = afd_runtime::Registry::builder().build().unwrap();
//! let dir = std::env::temp_dir().join(format!("afd-export-doc-{}", std::process::id()));
//! let summary = export_tree(&registry, &dir).unwrap();
//! assert_eq!(summary.commands, 0);
//! assert!(dir.join("README.md").is_file());
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::command::CommandDef;
use crate::registry::{CommandEntry, Registry};
use crate::text::summary;

/// The name of the JSON index at the top of an export.
pub const INDEX_FILE: &str = "index.json";
/// The name of the Markdown index at the top of an export.
pub const README_FILE: &str = "README.md";

/// What [`export_tree`] wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportSummary {
    /// The directory written to.
    pub dir: PathBuf,
    /// Categories written (one directory each).
    pub categories: usize,
    /// Commands written (one file each).
    pub commands: usize,
    /// Every file written, relative to `dir`, in the order written.
    pub files: Vec<PathBuf>,
    /// Bytes written in all.
    pub bytes: u64,
}

/// Writes every command of `registry` under `dir` (created if missing). Files of an earlier
/// export are overwritten; files it had for commands that no longer exist are left, so
/// export into a directory of its own.
///
/// # Errors
///
/// A category or command name that is not a safe file name (empty, starting with a dot,
/// holding a path separator or a control character, or clashing with the index files),
/// as [`io::ErrorKind::InvalidInput`]; any error creating directories or writing files.
pub fn export_tree(registry: &Registry, dir: &Path) -> io::Result<ExportSummary> {
    export_tree_with(registry, dir, |_| true)
}

/// [`export_tree`] for the commands `include` accepts, for example only those an MCP
/// client may call: `|entry| entry.def().expose().allows_mcp()`. Categories left without
/// commands are not written.
///
/// # Errors
///
/// As [`export_tree`].
pub fn export_tree_with(
    registry: &Registry,
    dir: &Path,
    include: impl Fn(&CommandEntry) -> bool,
) -> io::Result<ExportSummary> {
    let categories: Vec<(&'static str, Vec<&CommandEntry>)> = registry
        .categories()
        .map(|(name, _)| {
            let commands: Vec<&CommandEntry> =
                registry.by_category(name).filter(|e| include(e)).collect();
            (name, commands)
        })
        .filter(|(_, commands)| !commands.is_empty())
        .collect();
    // Check every name before writing anything.
    for (category, commands) in &categories {
        check_file_name("category", category)?;
        if category.eq_ignore_ascii_case(INDEX_FILE) || category.eq_ignore_ascii_case(README_FILE) {
            return Err(invalid(format!(
                "category '{category}' clashes with the export's index files"
            )));
        }
        for entry in commands {
            check_file_name("command", entry.name())?;
        }
    }

    let mut summary = ExportSummary {
        dir: dir.to_path_buf(),
        categories: categories.len(),
        commands: 0,
        files: Vec::new(),
        bytes: 0,
    };
    fs::create_dir_all(dir)?;
    for (category, commands) in &categories {
        fs::create_dir_all(dir.join(category))?;
        for entry in commands {
            let relative = command_file(category, entry.name());
            write(
                dir,
                &relative,
                &to_pretty(&command_definition(entry))?,
                &mut summary,
            )?;
            summary.commands += 1;
        }
    }
    let index = index_json(registry, &categories);
    write(
        dir,
        Path::new(INDEX_FILE),
        &to_pretty(&index)?,
        &mut summary,
    )?;
    write(
        dir,
        Path::new(README_FILE),
        &readme(registry, &categories),
        &mut summary,
    )?;
    Ok(summary)
}

/// The full definition of a command, as its `<category>/<command>.json` holds it: the
/// fields afd-detail returns (name, description, category, mutation, inputSchema, tags,
/// executionTime, errors, destructive, confirmPrompt, handoff, handoffProtocol, version,
/// aliases, risk, openWorld) plus summary, idempotent, outputSchema, deprecatedAliases, eager
/// and expose.
/// Empty lists and unset options are left out, as afd-detail does.
pub fn command_definition(entry: &CommandEntry) -> Value {
    let def = entry.def();
    let mut object = Map::new();
    object.insert("name".into(), json!(entry.name()));
    object.insert("summary".into(), json!(summary(entry.description())));
    object.insert("description".into(), json!(entry.description()));
    object.insert("category".into(), json!(entry.category()));
    object.insert("mutation".into(), json!(def.is_mutation()));
    if def.is_mutation() {
        object.insert("destructive".into(), json!(def.is_destructive()));
        object.insert("idempotent".into(), json!(def.is_idempotent()));
    }
    object.insert("risk".into(), json!(def.risk()));
    insert_facts(&mut object, def);
    if !def.deprecated_aliases().is_empty() {
        object.insert("deprecatedAliases".into(), json!(def.deprecated_aliases()));
    }
    if def.is_eager() {
        object.insert("eager".into(), json!(true));
    }
    let expose = def.expose();
    object.insert(
        "expose".into(),
        json!({
            "mcp": expose.allows_mcp(),
            "cli": expose.allows_cli(),
            "agent": expose.allows_agent(),
            "palette": expose.allows_palette(),
        }),
    );
    object.insert("inputSchema".into(), entry.input_schema().clone());
    if let Some(output) = entry.output_schema() {
        object.insert("outputSchema".into(), output.clone());
    }
    Value::Object(object)
}

fn command_file(category: &str, command: &str) -> PathBuf {
    Path::new(category).join(format!("{command}.json"))
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, message)
}

/// Accepts a name that is one plain path component on every platform.
fn check_file_name(kind: &str, name: &str) -> io::Result<()> {
    let unsafe_char = name
        .chars()
        .find(|c| matches!(c, '/' | '\\' | ':') || c.is_control());
    if name.is_empty() || name.starts_with('.') || unsafe_char.is_some() {
        return Err(invalid(format!(
            "{kind} name '{}' is not a safe file name",
            name.escape_debug()
        )));
    }
    Ok(())
}

fn to_pretty(value: &Value) -> io::Result<String> {
    let mut text = serde_json::to_string_pretty(value).map_err(io::Error::other)?;
    text.push('\n');
    Ok(text)
}

fn write(dir: &Path, relative: &Path, text: &str, summary: &mut ExportSummary) -> io::Result<()> {
    fs::write(dir.join(relative), text)?;
    summary.files.push(relative.to_path_buf());
    summary.bytes += text.len() as u64;
    Ok(())
}

fn index_json(registry: &Registry, categories: &[(&'static str, Vec<&CommandEntry>)]) -> Value {
    let commands: usize = categories.iter().map(|(_, list)| list.len()).sum();
    let categories: Vec<Value> = categories
        .iter()
        .map(|(name, list)| {
            let mut object = Map::new();
            object.insert("name".into(), json!(name));
            if let Some(description) = registry.category_description(name) {
                object.insert("description".into(), json!(description));
            }
            object.insert("path".into(), json!(name));
            object.insert(
                "commands".into(),
                json!(list.iter().map(|e| e.name()).collect::<Vec<_>>()),
            );
            Value::Object(object)
        })
        .collect();
    json!({
        "commands": commands,
        "categories": categories,
    })
}

/// One line of Markdown: newlines folded into spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn readme(registry: &Registry, categories: &[(&'static str, Vec<&CommandEntry>)]) -> String {
    let commands: usize = categories.iter().map(|(_, list)| list.len()).sum();
    let mut text = String::from("# Command catalog\n\n");
    let _ = writeln!(
        text,
        "{commands} commands in {} categories. Each command's full definition, input and \
         output schemas included, is in `<category>/<command>.json`; `{INDEX_FILE}` holds \
         this index as JSON.",
        categories.len()
    );
    for (category, list) in categories {
        let _ = write!(text, "\n## {category}\n\n");
        if let Some(description) = registry.category_description(category) {
            let _ = write!(text, "{}\n\n", one_line(description));
        }
        for entry in list {
            let def = entry.def();
            let marker = if def.is_destructive() {
                " (mutation, destructive)"
            } else if def.is_mutation() {
                " (mutation)"
            } else {
                ""
            };
            let _ = writeln!(
                text,
                "- [`{name}`]({category}/{name}.json): {summary}{marker}",
                name = entry.name(),
                summary = one_line(&summary(entry.description())),
            );
        }
    }
    text
}

/// The optional facts of a definition that afd-detail and the exported catalog files
/// share: tags, execution time, errors, confirmation prompt, hand-off, version, aliases.
pub(crate) fn insert_facts(object: &mut serde_json::Map<String, Value>, def: &CommandDef) {
    if def.is_open_world() {
        object.insert("openWorld".into(), json!(true));
    }
    if !def.tags().is_empty() {
        object.insert("tags".into(), json!(def.tags()));
    }
    if let Some(time) = def.execution_time() {
        object.insert("executionTime".into(), json!(time));
    }
    if !def.errors().is_empty() {
        object.insert("errors".into(), json!(def.errors()));
    }
    if let Some(prompt) = def.confirm_prompt() {
        object.insert("confirmPrompt".into(), json!(prompt));
    }
    if def.is_handoff() {
        object.insert("handoff".into(), json!(true));
    }
    if let Some(protocol) = def.handoff_protocol() {
        object.insert("handoffProtocol".into(), json!(protocol));
    }
    if let Some(version) = def.version() {
        object.insert("version".into(), json!(version));
    }
    if !def.aliases().is_empty() {
        object.insert("aliases".into(), json!(def.aliases()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_file_names() {
        for name in ["todo-create", "todo", "a_b", "v2"] {
            assert!(check_file_name("command", name).is_ok(), "{name}");
        }
        for name in ["", ".", "..", ".hidden", "a/b", "a\\b", "c:d", "a\nb"] {
            let error = check_file_name("command", name).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{name:?}");
        }
    }

    #[test]
    fn one_line_folds_whitespace() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }
}
