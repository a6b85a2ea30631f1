//! Results printed for reading: a success's data (arrays of objects as a table, objects as
//! `key: value` lines), its content blocks (text as it is, binary as a one-line summary),
//! and an error's code, message and suggestion on stderr.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::content::{Content, ResourceContents};
use crate::error::CommandError;

/// The widest a table cell gets before it is cut with `…`.
const MAX_CELL: usize = 40;

/// Prints an error on stderr: `error[CODE]: message`, then its suggestion.
pub fn print_error(error: &CommandError) {
    eprint!("{}", error_text(error));
}

fn error_text(error: &CommandError) -> String {
    let mut text = format!("error[{}]: {}\n", error.code, error.message);
    if let Some(suggestion) = &error.suggestion {
        let _ = writeln!(text, "  suggestion: {suggestion}");
    }
    text
}

/// A command's data as text: a string as it is, an array of objects as a table, an
/// object as `key: value` lines (its arrays of objects as tables under their key).
pub fn render_data(data: &Value) -> String {
    let mut out = String::new();
    match data {
        Value::Null => {}
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(items) => render_array(&mut out, items, ""),
        Value::Object(object) => render_object(&mut out, object, ""),
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
    out
}

/// Content blocks as text: a text block (or an embedded text resource) as it is, an image,
/// audio or binary resource as one line with its media type and size, a resource link as
/// its name and URI. `--json` prints the blocks whole (binary data base64, as MCP carries it).
pub fn render_content(blocks: &[Content]) -> String {
    let mut out = String::new();
    for block in blocks {
        match block {
            Content::Text { text } => {
                out.push_str(text);
                if !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            Content::Image { data, mime_type } => {
                let _ = writeln!(out, "[image {mime_type}, {}]", size(data));
            }
            Content::Audio { data, mime_type } => {
                let _ = writeln!(out, "[audio {mime_type}, {}]", size(data));
            }
            Content::Resource { resource } => match resource {
                ResourceContents::Text { uri, text, .. } => {
                    let _ = writeln!(out, "[resource {uri}]");
                    out.push_str(text);
                    if !text.ends_with('\n') {
                        out.push('\n');
                    }
                }
                ResourceContents::Blob {
                    uri,
                    mime_type,
                    blob,
                } => {
                    let mime = mime_type.as_deref().unwrap_or("application/octet-stream");
                    let _ = writeln!(out, "[resource {uri}, {mime}, {}]", size(blob));
                }
            },
            Content::ResourceLink(link) => {
                let _ = writeln!(out, "[link {}: {}]", link.name, link.uri);
            }
        }
    }
    out
}

/// The size of base64 `data` once decoded, in words.
fn size(data: &str) -> String {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    let bytes = (data.len() / 4 * 3).saturating_sub(padding);
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

fn render_object(out: &mut String, object: &Map<String, Value>, indent: &str) {
    for (key, value) in object {
        match value {
            Value::Array(items) if !items.is_empty() && !items.iter().all(is_scalar) => {
                let _ = writeln!(out, "{indent}{key}:");
                render_array(out, items, &format!("{indent}  "));
            }
            Value::Object(inner) if !inner.is_empty() && indent.len() < 4 => {
                let _ = writeln!(out, "{indent}{key}:");
                render_object(out, inner, &format!("{indent}  "));
            }
            other => {
                let _ = writeln!(out, "{indent}{key}: {}", scalar(other));
            }
        }
    }
}

fn render_array(out: &mut String, items: &[Value], indent: &str) {
    if items.is_empty() {
        let _ = writeln!(out, "{indent}(none)");
        return;
    }
    if items.iter().all(Value::is_object) {
        table(out, items, indent);
        return;
    }
    for item in items {
        let _ = writeln!(out, "{indent}- {}", scalar(item));
    }
}

fn is_scalar(value: &Value) -> bool {
    !matches!(value, Value::Array(_) | Value::Object(_))
}

/// A value in one line: strings without quotes, others as compact JSON.
fn scalar(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Null => "-".into(),
        Value::Array(items) if items.is_empty() => "(none)".into(),
        Value::Array(items) if items.iter().all(is_scalar) => {
            items.iter().map(scalar).collect::<Vec<_>>().join(", ")
        }
        other => other.to_string(),
    }
}

fn cut(text: String) -> String {
    if text.chars().count() <= MAX_CELL {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_CELL - 1).collect();
    cut.push('…');
    cut
}

/// Objects as a table: a column per key (in order of first appearance), headed by the key.
fn table(out: &mut String, rows: &[Value], indent: &str) {
    let mut columns: Vec<&str> = Vec::new();
    for row in rows {
        if let Some(object) = row.as_object() {
            for key in object.keys() {
                if !columns.contains(&key.as_str()) {
                    columns.push(key);
                }
            }
        }
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            columns
                .iter()
                .map(|column| cut(row.get(*column).map_or_else(String::new, scalar)))
                .collect()
        })
        .collect();
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, column)| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .chain(std::iter::once(column.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |out: &mut String, values: &[String]| {
        out.push_str(indent);
        let last = values.len().saturating_sub(1);
        for (i, value) in values.iter().enumerate() {
            out.push_str(value);
            if i < last {
                let pad = widths[i] - value.chars().count() + 2;
                out.extend(std::iter::repeat_n(' ', pad));
            }
        }
        while out.ends_with(' ') {
            out.pop();
        }
        out.push('\n');
    };
    let header: Vec<String> = columns.iter().map(|column| column.to_string()).collect();
    line(out, &header);
    for row in &cells {
        line(out, row);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn content_blocks_are_text_or_one_line_summaries() {
        let text = render_content(&[
            Content::text("Chart:"),
            Content::image([0u8; 2048], "image/png"),
            Content::audio([0u8; 10], "audio/wav"),
            Content::resource(
                ResourceContents::text("test://a", "hello").with_mime_type("text/plain"),
            ),
            Content::resource(ResourceContents::blob("test://b", [1u8, 2, 3])),
            Content::resource_link("test://c", "c.csv"),
        ]);
        assert_eq!(
            text,
            "Chart:\n[image image/png, 2.0 KiB]\n[audio audio/wav, 10 bytes]\n[resource test://a]\nhello\n\
             [resource test://b, application/octet-stream, 3 bytes]\n[link c.csv: test://c]\n"
        );
    }

    #[test]
    fn arrays_of_objects_are_tables() {
        let text = render_data(
            &json!([{"id": 1, "title": "Milk"}, {"id": 12, "title": "Bread", "done": true}]),
        );
        assert_eq!(text, "id  title  done\n1   Milk\n12  Bread  true\n");
    }

    #[test]
    fn objects_are_key_value_lines_with_tables_inside() {
        let text =
            render_data(&json!({"total": 2, "tags": ["a", "b"], "items": [{"id": 1}, {"id": 2}]}));
        assert_eq!(text, "total: 2\ntags: a, b\nitems:\n  id\n  1\n  2\n");
    }

    #[test]
    fn long_cells_are_cut() {
        let long = "x".repeat(60);
        let text = render_data(&json!([{"a": long}]));
        assert!(text.lines().nth(1).unwrap().ends_with('…'));
        assert_eq!(text.lines().nth(1).unwrap().chars().count(), MAX_CELL);
    }

    #[test]
    fn errors_carry_code_and_suggestion() {
        let error = CommandError::validation("bad").with_suggestion("fix it");
        assert_eq!(
            error_text(&error),
            "error[VALIDATION_ERROR]: bad\n  suggestion: fix it\n"
        );
    }
}
