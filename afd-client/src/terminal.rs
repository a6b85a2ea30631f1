//! What `afd` answers when a server asks it something (an elicitation, the client's roots,
//! a model's answer), on either wire: the server's own request on 2025-11-25, an input
//! request of an `input_required` result on 2026-07-28 (rmcp's client runs the rounds
//! through this handler). A form is asked field by field on the terminal and each answer
//! checked against the field's type; the roots are the working directory; sampling is
//! refused, as afd has no model (and does not declare that it samples).

use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ErrorData,
};
#[allow(deprecated)]
use rmcp::model::{ListRootsResult, Root};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Map, Value, json};

/// A call refused for want of a scope: a 403 `insufficient_scope` (its challenge), or an
/// afd server's `INSUFFICIENT_SCOPE` answer from inside afd-call.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// The `WWW-Authenticate` challenge, when the refusal was an HTTP one.
    pub(crate) challenge: Option<String>,
    /// The scopes the server asked for.
    pub(crate) scopes: Vec<String>,
}

/// `afd`'s client handler; it also keeps the last refusal for want of a scope, for the
/// command line to sign in again for a larger one.
#[derive(Debug, Clone, Default)]
pub(crate) struct Terminal {
    refused: Arc<Mutex<Option<Refusal>>>,
}

impl Terminal {
    /// Keeps a refusal for want of a scope.
    pub(crate) fn refused(&self, refusal: Refusal) {
        *self.refused.lock().unwrap_or_else(|e| e.into_inner()) = Some(refusal);
    }

    /// The last refusal kept, taken.
    pub(crate) fn take_refusal(&self) -> Option<Refusal> {
        self.refused
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

// Roots are deprecated by SEP-2577, and servers of both revisions still ask for them.
#[allow(deprecated)]
impl ClientHandler for Terminal {
    fn get_info(&self) -> ClientConfig {
        let mut info = ClientConfig::default();
        info.capabilities = ClientCapabilities::builder()
            .enable_elicitation()
            .enable_roots()
            .build();
        info.client_info.name = "afd".into();
        info.client_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => (
                message,
                serde_json::to_value(&requested_schema).unwrap_or_default(),
            ),
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                // Accepting says the person agreed: asked, and declined without an answer.
                let agreed = tokio::task::spawn_blocking(move || {
                    let stdin = std::io::stdin();
                    let mut input = stdin.lock();
                    ask_to_open(&message, &url, &mut input, &mut std::io::stderr())
                })
                .await
                .unwrap_or(false);
                return Ok(ElicitResult::new(match agreed {
                    true => ElicitationAction::Accept,
                    false => ElicitationAction::Decline,
                }));
            }
            _ => return Ok(ElicitResult::new(ElicitationAction::Decline)),
        };
        // Reading the terminal blocks: off the runtime's workers.
        let answer = tokio::task::spawn_blocking(move || {
            let stdin = std::io::stdin();
            let mut input = stdin.lock();
            let mut stderr = std::io::stderr();
            ask_form(&message, &schema, &mut input, &mut stderr)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(match answer {
            Some(content) => ElicitResult::new(ElicitationAction::Accept).with_content(content),
            None => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn list_roots(
        &self,
        _: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let here = std::env::current_dir().unwrap_or_default();
        let roots = reqwest::Url::from_directory_path(&here)
            .map(|uri| vec![Root::new(uri.to_string()).with_name("working directory")])
            .unwrap_or_default();
        Ok(ListRootsResult::new(roots))
    }
}

/// `text` without control characters: a server's words reach the terminal, and must not
/// move its cursor or change its colours.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).collect()
}

/// Asks whether to open `url` for the server; only `y`/`yes` agrees.
fn ask_to_open(
    message: &str,
    url: &str,
    input: &mut dyn std::io::BufRead,
    output: &mut dyn std::io::Write,
) -> bool {
    let _ = write!(
        output,
        "The server asks you to open {}\n  {}\nOpen it and go on? [y/N] ",
        printable(url),
        printable(message)
    );
    let _ = output.flush();
    let mut line = String::new();
    input
        .read_line(&mut line)
        .is_ok_and(|_| matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// Asks each field of a form's `schema` on `output`, reading answers from `input`: an
/// empty answer takes the default (or leaves an optional field out), a wrong one is asked
/// again with the reason. `None` when the input ends (the person cancelled).
fn ask_form(
    message: &str,
    schema: &Value,
    input: &mut dyn std::io::BufRead,
    output: &mut dyn std::io::Write,
) -> Option<Value> {
    let _ = writeln!(output, "The server asks: {}", printable(message));
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut answer = Map::new();
    for (name, field) in schema["properties"].as_object().into_iter().flatten() {
        let must = required.contains(&name.as_str());
        loop {
            let title = printable(field["title"].as_str().unwrap_or(name));
            let mut prompt = format!("  {title}");
            if let Some(description) = field["description"].as_str() {
                prompt.push_str(&format!(" ({})", printable(description)));
            }
            if let Some(choices) = choices(field) {
                prompt.push_str(&format!(" [{}]", choices.join(", ")));
            }
            match &field["default"] {
                Value::Null if !must => prompt.push_str(" (optional)"),
                Value::Null => {}
                default => prompt.push_str(&format!(" [default {default}]")),
            }
            let _ = write!(output, "{prompt}: ");
            let _ = output.flush();
            let mut line = String::new();
            if input.read_line(&mut line).ok()? == 0 {
                let _ = writeln!(output);
                return None;
            }
            let line = line.trim();
            if line.is_empty() {
                match &field["default"] {
                    Value::Null if must => {
                        let _ = writeln!(output, "  an answer is required");
                        continue;
                    }
                    Value::Null => {}
                    default => {
                        answer.insert(name.clone(), default.clone());
                    }
                }
                break;
            }
            match parse_answer(field, line) {
                Ok(value) => {
                    answer.insert(name.clone(), value);
                    break;
                }
                Err(why) => {
                    let _ = writeln!(output, "  {why}");
                }
            }
        }
    }
    Some(Value::Object(answer))
}

/// The values a field may take, when it lists them (`enum`, or `oneOf` of `const`s).
fn choices(field: &Value) -> Option<Vec<String>> {
    let listed: Vec<String> = match (field["enum"].as_array(), field["oneOf"].as_array()) {
        (Some(values), _) => values.iter().map(plain).collect(),
        (None, Some(options)) => options
            .iter()
            .map(|option| plain(&option["const"]))
            .collect(),
        _ => return None,
    };
    (!listed.is_empty()).then_some(listed)
}

fn plain(value: &Value) -> String {
    value
        .as_str()
        .map_or_else(|| value.to_string(), str::to_owned)
}

/// One answer read as the field's type says.
fn parse_answer(field: &Value, text: &str) -> Result<Value, String> {
    if let Some(choices) = choices(field)
        && !choices.iter().any(|choice| choice == text)
    {
        return Err(format!("one of: {}", choices.join(", ")));
    }
    match field["type"].as_str() {
        Some("integer") => text
            .parse::<i64>()
            .map(|n| json!(n))
            .map_err(|_| "a whole number, please".to_owned()),
        Some("number") => text
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite())
            .map(|n| json!(n))
            .ok_or_else(|| "a number, please".to_owned()),
        Some("boolean") => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(json!(true)),
            "n" | "no" | "false" => Ok(json!(false)),
            _ => Err("yes or no, please".to_owned()),
        },
        _ => Ok(json!(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_asked_field_by_field_and_checked() {
        let schema = json!({"type": "object", "required": ["name", "count"], "properties": {
            "name": {"type": "string", "title": "Name"},
            "count": {"type": "integer"},
            "ok": {"type": "boolean", "default": true},
            "size": {"type": "string", "enum": ["S", "M"]},
            "note": {"type": "string"}}});
        // count: not a number, then 3; ok: default; size: X refused, then M; note: left out.
        let mut input = "Ada\nmany\n3\n\nX\nM\n\n".as_bytes();
        let mut output = Vec::new();
        let answer = ask_form("Who?", &schema, &mut input, &mut output).unwrap();
        assert_eq!(
            answer,
            json!({"name": "Ada", "count": 3, "ok": true, "size": "M"})
        );
        let shown = String::from_utf8(output).unwrap();
        assert!(shown.contains("The server asks: Who?"), "{shown}");
        assert!(shown.contains("a whole number, please"), "{shown}");
        assert!(shown.contains("one of: S, M"), "{shown}");
        assert!(shown.contains("[default true]"), "{shown}");
        // The input ends before a required answer: cancelled.
        let mut short = "Ada\n".as_bytes();
        assert!(ask_form("Who?", &schema, &mut short, &mut Vec::new()).is_none());
        assert!(ask_to_open(
            "Pay",
            "https://x/\u{1b}[2J",
            &mut "y\n".as_bytes(),
            &mut Vec::new()
        ));
        let mut shown = Vec::new();
        assert!(!ask_to_open(
            "Pay\u{1b}[31m",
            "https://x",
            &mut "\n".as_bytes(),
            &mut shown
        ));
        assert!(!String::from_utf8(shown).unwrap().contains('\u{1b}'));
        let mut empty_required = "\nAda\n1\n\n\n\n".as_bytes();
        let mut shown = Vec::new();
        assert!(ask_form("Who?", &schema, &mut empty_required, &mut shown).is_some());
        assert!(
            String::from_utf8(shown)
                .unwrap()
                .contains("an answer is required")
        );
    }
}
