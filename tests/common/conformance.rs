//! A runner for the reference AFD todo contract's `test-cases.json`, independent of the
//! surface: give it a function that calls a command and returns the serialised
//! `CommandResult`, in-process or over MCP.

use std::collections::HashMap;
use std::future::Future;

use serde::Deserialize;
use serde_json::Value;

/// The vendored contract directory.
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/todo-conformance");

/// One conformance case.
#[derive(Debug, Deserialize)]
pub struct Case {
    /// Case name.
    pub name: String,
    /// What it checks.
    pub description: String,
    /// Steps to run first.
    #[serde(default)]
    pub setup: Vec<Step>,
    /// The command under test.
    pub command: String,
    /// Its input (may reference captures as `"$name.field"`).
    pub input: Value,
    /// Dotted paths into the result, with expected values.
    pub expect: serde_json::Map<String, Value>,
}

/// A setup step.
#[derive(Debug, Deserialize)]
pub struct Step {
    /// The command.
    pub command: String,
    /// Its input.
    pub input: Value,
    /// Store the step's `data` under this name.
    pub capture: Option<String>,
}

#[derive(Deserialize)]
struct CaseFile {
    tests: Vec<Case>,
}

/// Reads `test-cases.json`.
pub fn load_cases() -> Vec<Case> {
    let text =
        std::fs::read_to_string(format!("{FIXTURES}/test-cases.json")).expect("test-cases.json");
    serde_json::from_str::<CaseFile>(&text)
        .expect("test-cases.json parses")
        .tests
}

/// Reads `commands.schema.json`.
pub fn load_contract() -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/commands.schema.json"))
        .expect("commands.schema.json");
    serde_json::from_str(&text).expect("commands.schema.json parses")
}

/// Replaces every string `"$name.path"` whose `name` was captured with the value at `path`.
pub fn substitute(input: &Value, captures: &HashMap<String, Value>) -> Result<Value, String> {
    Ok(match input {
        Value::String(text) if text.starts_with('$') => {
            let (name, path) = text[1..].split_once('.').unwrap_or((&text[1..], ""));
            let captured = captures
                .get(name)
                .ok_or_else(|| format!("nothing captured as '{name}'"))?;
            if path.is_empty() {
                captured.clone()
            } else {
                lookup(captured, path).ok_or_else(|| format!("'{text}' does not resolve"))?
            }
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|item| substitute(item, captures))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| Ok((key.clone(), substitute(value, captures)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// The value at a dotted path; `.length` of an array is its length.
pub fn lookup(value: &Value, dotted: &str) -> Option<Value> {
    let mut current = value.clone();
    for segment in dotted.split('.') {
        current = match (&current, segment) {
            (Value::Array(items), "length") => Value::from(items.len()),
            (Value::Array(items), index) => items.get(index.parse::<usize>().ok()?)?.clone(),
            (Value::Object(map), key) => map.get(key)?.clone(),
            _ => return None,
        };
    }
    Some(current)
}

/// Runs one case through `call(command, input) -> serialised CommandResult`. The caller
/// gives each case a fresh store.
///
/// # Errors
///
/// A description of the first step or expectation that failed.
pub async fn run_case<F, Fut>(case: &Case, mut call: F) -> Result<Value, String>
where
    F: FnMut(String, Value) -> Fut,
    Fut: Future<Output = Value>,
{
    let mut captures = HashMap::new();
    for step in &case.setup {
        let input = substitute(&step.input, &captures)?;
        let result = call(step.command.clone(), input).await;
        if result["success"] != Value::Bool(true) {
            return Err(format!("setup step {} failed: {result}", step.command));
        }
        if let Some(name) = &step.capture {
            captures.insert(name.clone(), result["data"].clone());
        }
    }
    let input = substitute(&case.input, &captures)?;
    let result = call(case.command.clone(), input).await;
    for (path, expected) in &case.expect {
        let actual = lookup(&result, path);
        if actual.as_ref() != Some(expected) {
            return Err(format!(
                "{path}: expected {expected}, got {actual:?} in {result}"
            ));
        }
    }
    Ok(result)
}
